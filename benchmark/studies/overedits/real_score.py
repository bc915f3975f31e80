"""The labels of real model edits and the server's flags measured against them (the pure part of
`benchmark.studies.overedits.real`: no server, no I/O beyond reading the labels file).

Matching rule (see `meets`): a change unit of the server and a labelled change *meet* when they share a
line of `after` or a line of `before`. The unit's lines are its report's `new_start_line..new_end_line`
(after side) and `start_line..end_line` (before side); the change's are its `new_lines` and `lines`
ranges (any of them). All ranges are 1-based and inclusive; an empty range `[k, k-1]` (a pure insertion
on the before side, a pure deletion on the after side) holds no line, so it meets nothing on that side:
an insertion is matched by the lines it adds, a deletion by the lines it removes. Two insertions at the
same place of `before` do not meet unless they add a common line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from server.errors import UserError
from server.protocol.report import HUNK_KINDS

Span = tuple[int, int]  # 1-based inclusive lines; [k, k-1] is empty
LEVELS = ("warning", "any")  # flagged at warning severity or above (LSP 1 or 2), and at any severity
WARNING = 2


class LabelsError(UserError):
    """A labels file that cannot be read or does not follow the format of real_edits/README.md."""


class Change(msgspec.Struct, frozen=True):
    desc: str
    lines: list[Span]
    new_lines: list[Span]
    kind: str
    requested: bool | Literal["unsure"]
    trivial: bool = False

    @property
    def unrequested(self) -> bool:
        """Scored as unrequested: `requested: false` and not an invisible whitespace change."""
        return self.requested is False and not self.trivial

    @property
    def scored(self) -> bool:
        """Trivial and unsure changes are not meant to be scored (real_edits/README.md)."""
        return self.requested != "unsure" and not self.trivial


class Entry(msgspec.Struct, frozen=True):
    key: str
    model: str
    problem_id: int
    name: str
    instruction_kind: str
    instruction: str
    before: str
    after: str
    gold: str
    changes: list[Change]

    @property
    def over_edited(self) -> bool:
        return any(c.unrequested for c in self.changes)


class Unit(msgspec.Struct, frozen=True):
    """One change unit of the server's proposal, as its report and flags give it."""

    index: int
    lines: Span  # before side
    new_lines: Span  # after side
    kinds: list[str]
    flagged: bool
    severity: int | None  # LSP severity of a flagged unit's diagnostic (1 error .. 4 hint)
    message: str

    def shown(self, level: str) -> bool:
        """Flagged at this level: `warning` (severity 1 or 2; a flagged unit without one counts as a
        warning, as `server.fidelity.judge.flags.split_flags` counts it) or `any`."""
        if not self.flagged:
            return False
        return level == "any" or (self.severity if self.severity is not None else WARNING) <= WARNING


def _share(a: Span, b: Span) -> bool:
    return a[0] <= a[1] and b[0] <= b[1] and max(a[0], b[0]) <= min(a[1], b[1])


def meets(unit: Unit, change: Change) -> bool:
    """A common line of `after` or of `before` (empty ranges hold none): the module docstring's rule."""
    return any(_share(unit.new_lines, r) for r in change.new_lines) or any(_share(unit.lines, r) for r in change.lines)


# ---- reading the labels ------------------------------------------------------------------------


def _line_count(text: str) -> int:
    return len(text.splitlines())


def _check_spans(spans: Sequence[Span], n: int, what: str) -> str | None:
    if not spans:
        return f"{what} is empty"
    for s, e in spans:
        if s < 1 or e < s - 1 or e > n:
            return f"{what} range [{s}, {e}] is not a range of the text's {n} lines"
    return None


def _check(entry: Entry) -> str | None:
    if not entry.changes:
        return "no labelled changes"
    for i, c in enumerate(entry.changes):
        if c.kind not in HUNK_KINDS:
            return f"changes[{i}]: unknown kind {c.kind!r}"
        problem = _check_spans(c.lines, _line_count(entry.before), f"changes[{i}].lines") or _check_spans(
            c.new_lines, _line_count(entry.after), f"changes[{i}].new_lines"
        )
        if problem:
            return problem
        if c.trivial and c.requested is not False:
            return f"changes[{i}]: a trivial change is requested: false"
    return None


def load_labels(path: Path, fill: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> list[Entry]:
    """Every entry of a labels.jsonl; LabelsError (one line: file, line, what is wrong) otherwise. `fill`
    completes an entry that refers to its texts instead of holding them (`benchmark.studies.overedits.real_refs`)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LabelsError(f"{path}: cannot read the labels: {exc.strerror or exc}") from exc
    entries: list[Entry] = []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = msgspec.json.decode(line)
            if fill is not None and isinstance(doc, dict) and "after" not in doc and "member" in doc:
                doc = fill(doc)
            entry = msgspec.convert(doc, Entry)
        except (msgspec.DecodeError, msgspec.ValidationError, LabelsError) as exc:
            raise LabelsError(f"{path} line {n}: not a labelled completion: {exc}") from exc
        problem = _check(entry)
        if problem:
            raise LabelsError(f"{path} line {n} ({entry.key}): {problem}")
        entries.append(entry)
    if not entries:
        raise LabelsError(f"{path}: no labelled completions")
    return entries


# ---- the figures --------------------------------------------------------------------------------


class Ratio(msgspec.Struct, frozen=True):
    num: int
    den: int
    value: float | None  # None when den is 0

    def __str__(self) -> str:
        return f"{self.value:.2f} ({self.num}/{self.den})" if self.value is not None else f"- ({self.num}/0)"


def ratio(num: int, den: int) -> Ratio:
    return Ratio(num, den, num / den if den else None)


class Judged(msgspec.Struct, frozen=True):
    """One entry with the server's units (`units` empty and `error` set when the request failed)."""

    entry: Entry
    units: list[Unit]
    error: str | None = None


class Figures(msgspec.Struct, frozen=True):
    """The issue's four figures at one level. A flagged unit whose labelled changes are all unscored
    (trivial or unsure) is left out of every figure (`unscored_units`); one that meets no labelled change
    at all is kept (a false flag). `flagged_units`: the flagged units kept.

    precision: kept units meeting an unrequested change / kept units. recall: unrequested changes met by
      a kept unit / unrequested changes. false_alarms: clean completions (no unrequested change) with a
      kept unit / clean ones. detection: over-edited completions with a kept unit meeting an unrequested
      change / over-edited ones. flagged_over_edited: over-edited completions with a kept unit anywhere /
      over-edited ones (the footing of the issue's detection figure, see `benchmark.studies.overedits.real`).
    """

    precision: Ratio
    recall: Ratio
    false_alarms: Ratio
    detection: Ratio
    flagged_units: int
    unscored_units: int
    flagged_over_edited: Ratio


def _scored_unit(unit: Unit, changes: Sequence[Change]) -> bool:
    met = [c for c in changes if meets(unit, c)]
    return not met or any(c.scored for c in met)


def figures(judged: Iterable[Judged], level: str) -> Figures:
    flagged = unscored = hits = 0
    unreq = met = clean = alarmed = over = detected = over_flagged = 0
    for j in judged:
        changes = j.entry.changes
        shown = [u for u in j.units if u.shown(level)]
        units = [u for u in shown if _scored_unit(u, changes)]
        unscored += len(shown) - len(units)
        wanted = [c for c in changes if c.unrequested]
        flagged += len(units)
        hits += sum(any(meets(u, c) for c in wanted) for u in units)
        unreq += len(wanted)
        met += sum(any(meets(u, c) for u in units) for c in wanted)
        if wanted:
            over += 1
            detected += any(meets(u, c) for u in units for c in wanted)
            over_flagged += bool(units)
        else:
            clean += 1
            alarmed += bool(units)
    return Figures(
        precision=ratio(hits, flagged),
        recall=ratio(met, unreq),
        false_alarms=ratio(alarmed, clean),
        detection=ratio(detected, over),
        flagged_units=flagged,
        unscored_units=unscored,
        flagged_over_edited=ratio(over_flagged, over),
    )


class KindRow(msgspec.Struct, frozen=True):
    """Labelled changes of one kind: unrequested ones met by a flagged unit (recall, per level) and
    requested ones a flagged unit meets (flags on asked-for changes, per level)."""

    kind: str
    unrequested: int
    met_warning: int
    met_any: int
    requested: int
    requested_hit_warning: int
    requested_hit_any: int
    unscored: int  # trivial or unsure


def by_kind(judged: Sequence[Judged]) -> list[KindRow]:
    rows: dict[str, list[int]] = {}
    for j in judged:
        for c in j.entry.changes:
            row = rows.setdefault(c.kind, [0] * 7)
            hit = [any(u.shown(lv) and meets(u, c) for u in j.units) for lv in LEVELS]
            if c.unrequested:
                row[0] += 1
                row[1] += hit[0]
                row[2] += hit[1]
            elif c.requested is True:
                row[3] += 1
                row[4] += hit[0]
                row[5] += hit[1]
            else:
                row[6] += 1
    return [KindRow(k, *rows[k]) for k in HUNK_KINDS if k in rows]


class UnitKindRow(msgspec.Struct, frozen=True):
    """Flagged units by the server's kind (a unit of several kinds counts under each): how many meet an
    unrequested change, per level (unscored units left out, as in precision)."""

    kind: str
    flagged_warning: int
    hits_warning: int
    flagged_any: int
    hits_any: int


def by_unit_kind(judged: Sequence[Judged]) -> list[UnitKindRow]:
    rows: dict[str, list[int]] = {}
    for j in judged:
        wanted = [c for c in j.entry.changes if c.unrequested]
        for u in j.units:
            if not u.flagged or not _scored_unit(u, j.entry.changes):
                continue
            hit = any(meets(u, c) for c in wanted)
            for k in dict.fromkeys(u.kinds):
                row = rows.setdefault(k, [0] * 4)
                if u.shown("warning"):
                    row[0] += 1
                    row[1] += hit
                row[2] += 1
                row[3] += hit
    return [UnitKindRow(k, *rows[k]) for k in sorted(rows, key=lambda k: (-rows[k][2], k))]


class ModelRow(msgspec.Struct, frozen=True):
    model: str
    completions: int
    over_edited: int
    warning: Figures
    any: Figures


def by_model(judged: Sequence[Judged]) -> list[ModelRow]:
    models = sorted({j.entry.model for j in judged})
    out = []
    for m in models:
        mine = [j for j in judged if j.entry.model == m]
        out.append(
            ModelRow(
                m,
                len(mine),
                sum(j.entry.over_edited for j in mine),
                figures(mine, "warning"),
                figures(mine, "any"),
            )
        )
    return out


class Miss(msgspec.Struct, frozen=True):
    """An unrequested change no unit flagged at warning severity (`hint`: a hint-severity unit meets it)."""

    key: str
    model: str
    problem: str
    lines: list[Span]
    new_lines: list[Span]
    kind: str
    desc: str
    hint: bool


def misses(judged: Sequence[Judged]) -> list[Miss]:
    out = []
    for j in judged:
        e = j.entry
        for c in e.changes:
            if c.unrequested and not any(u.shown("warning") and meets(u, c) for u in j.units):
                hint = any(u.shown("any") and meets(u, c) for u in j.units)
                out.append(Miss(e.key, e.model, f"{e.problem_id}_{e.name}", c.lines, c.new_lines, c.kind, c.desc, hint))
    return out


class FalseFlag(msgspec.Struct, frozen=True):
    """A flagged unit (any severity) that meets no unrequested change; `meets`: the labelled changes it
    does meet (`requested:KIND desc`, `unsure:...`, `trivial:...`); `scored`: counted in precision."""

    key: str
    model: str
    problem: str
    lines: Span
    new_lines: Span
    kinds: list[str]
    severity: int | None
    message: str
    meets: list[str]
    scored: bool


def _tag(c: Change) -> str:
    state = "trivial" if c.trivial else "unsure" if c.requested == "unsure" else "requested"
    return f"{state}:{c.kind} {c.desc}"


def false_flags(judged: Sequence[Judged]) -> list[FalseFlag]:
    out = []
    for j in judged:
        e = j.entry
        for u in j.units:
            if u.flagged and not any(c.unrequested and meets(u, c) for c in e.changes):
                out.append(
                    FalseFlag(
                        e.key,
                        e.model,
                        f"{e.problem_id}_{e.name}",
                        u.lines,
                        u.new_lines,
                        u.kinds,
                        u.severity,
                        u.message,
                        [_tag(c) for c in e.changes if meets(u, c)],
                        _scored_unit(u, e.changes),
                    )
                )
    return out
