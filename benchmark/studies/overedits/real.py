"""Does the server flag what a human reader calls unrequested? Real model edits against their labels.

    python -m benchmark.studies.overedits.real [LABELS] [--data DIR] [--format text|json] [--by kind|model]
                                       [--concurrency N] [--server-log FILE] [--tests] [--max-runs N]

LABELS defaults to `real_edits/labels.jsonl` of the data directory (`--data DIR`, else EDIT_FIDELITY_DATA, else
the per-user cache): real CanItEdit completions whose every change carries a human label (the format and the
labelling policy are real_edits/README.md). Each completion goes through the real language server exactly as
a replay sends it: its `before` is opened as a document in `python -m server.lsp` (`benchmark.run.session`), and
`editFidelity.requestEdit` is sent with the entry's instruction and its `gold`; the server asks a scripted
OpenAI-compatible endpoint on 127.0.0.1 (`benchmark.run.endpoint`, as `benchmark.run.answer_sources.Replay` serves recorded
runs), which answers the recorded completion (`after`). The proposal's edits must rebuild `after` exactly (else
the entry is reported as failed and left out). A unit counts as flagged when the proposal lists it in
`flaggedHunks`; `hunkSeverities` gives its level: every figure is given for units at warning severity or above
(LSP error or warning) and for units at any severity.

Matching rule: a unit *meets* a labelled change when they share a line of `after` (the unit's
`new_start_line..new_end_line` against the change's `new_lines` ranges) or a line of `before` (`start_line..
end_line` against `lines`). Ranges are 1-based and inclusive, and an empty range `[k, k-1]` (a pure insertion on
the before side, a pure deletion on the after side) holds no line: an insertion is matched by the lines it adds,
a deletion by the lines it removes (`real_score.meets`).

Scored changes: an *unrequested* change is `requested: false` and not `trivial`; a *clean* completion has none,
an *over-edited* one at least one. Trivial and `"unsure"` changes are not scored: a flagged unit whose labelled
changes are all trivial or unsure is left out of every figure (counted apart); a flagged unit that meets no
labelled change is kept (a false flag). The four figures (issue 28):

- unit precision: kept flagged units that meet an unrequested change / kept flagged units;
- unit recall: unrequested changes met by a flagged unit / unrequested changes;
- false alarms: clean completions with a kept flagged unit / clean completions;
- detection: over-edited completions with a flagged unit meeting an unrequested change / over-edited ones;

each per labelled kind (recall; and the requested changes a flagged unit meets), per kind of the server's units
(precision) and per model, with the misses (unrequested changes no warning-severity unit meets) and the false
flags (flagged units meeting no unrequested change, with the server's message). `--by` picks the text's
breakdown (default both); `--format json` prints the whole `RealReport` (every breakdown, and every entry's
units with their flags).

The table also gives the over-edited completions with a flag anywhere. Issue 28's first table (0.22 (6/27),
0.20 (7/35), 0.08 (6/74), 0.23 (6/26)) read its figures on mixed footings: precision and recall at any
severity with the trivial/unsure-only units left out (when it was filed, 37 flagged units, 10 of them hints
on trivial changes), false alarms at warning severity, and "detection" as over-edited completions with a
warning *anywhere*; by its own definition (a warning on an unrequested change) detection is lower.

`--tests` judges with the problem's tests too, as the editor does when `analyzeNecessity` has a workspace's
tests: each completion's `before` is a file `program.py` of a workspace folder of its own (the session's
workspace folders) holding the CanItEdit tests and a runner that runs program and tests as one script, as
the suite's judge does (`python run_canitedit_tests.py`, in the prepared `canitedit` sandbox environment,
the suite's CPU-time limit); after `requestEdit`, `editFidelity.analyzeNecessity` runs ddmin over the
proposal's units in the sandbox (at most `--max-runs` runs), and a unit counts as flagged also when the
analysis lists it as unrequested (`server.fidelity.judge.test_evidence`: the tests pass without it and the
instruction asks for it neither by kind nor by name). The figures are then given both ways: instruction
only (the proposal's own flags) and with the tests.

Exit status: 0, 1 when some completion failed in the server (the figures leave it out), 2 for unusable
input (a malformed or missing labels file: one line).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from benchmark.datadir import data_dir, require, run_script
from benchmark.run.session import ServerError
from benchmark.studies.overedits.real_refs import HELDOUT, References
from benchmark.studies.overedits.real_score import (
    Entry,
    FalseFlag,
    Figures,
    Judged,
    KindRow,
    LabelsError,
    Miss,
    ModelRow,
    Span,
    Unit,
    UnitKindRow,
    by_kind,
    by_model,
    by_unit_kind,
    false_flags,
    figures,
    load_labels,
    misses,
)
from benchmark.studies.overedits.replay import replaying
from benchmark.suites.canitedit.judge import TIMEOUT_S
from benchmark.suites.canitedit.problems import load
from server.fidelity import apply_text_edits
from server.protocol.commands import FlaggedStatement, NecessityRecord, ProposalRecord

RULE = (
    "a unit meets a labelled change when they share a line of `after` (new_start_line..new_end_line against "
    "new_lines) or of `before` (start_line..end_line against lines); an empty range [k, k-1] holds no line"
)


class EntryUnits(msgspec.Struct, frozen=True):
    key: str
    model: str
    over_edited: bool
    units: list[Unit]
    error: str | None = None


class TestsFigures(msgspec.Struct, frozen=True):
    """The figures with the tests' evidence (`--tests`): the proposal's flags plus the units the necessity
    analysis lists as unrequested. `statuses`: the analyses' statuses; `runs`: sandbox runs in all;
    `flagged_by_tests`: units only the tests' evidence flagged."""

    warning: Figures
    any: Figures
    by_model: list[ModelRow]
    misses: list[Miss]
    false_flags: list[FalseFlag]
    statuses: dict[str, int]
    runs: int
    flagged_by_tests: int


class RealReport(msgspec.Struct, frozen=True):
    labels: str
    rule: str
    completions: int  # scored: the labelled completions the server judged
    clean: int
    over_edited: int
    unrequested: int
    failed: int
    warning: Figures
    any: Figures
    by_kind: list[KindRow]
    by_unit_kind: list[UnitKindRow]
    by_model: list[ModelRow]
    misses: list[Miss]
    false_flags: list[FalseFlag]
    entries: list[EntryUnits]
    tests: TestsFigures | None = None


def units_of(proposal: ProposalRecord) -> list[Unit]:
    """The proposal's change units (its report's hunks) with the server's flags, severities and messages,
    then its flagged statements (`flaggedStatements`) as units of their own."""
    hunks = proposal.report.hunks if proposal.report is not None else []
    flagged = set(proposal.flagged_hunks)
    severities = proposal.hunk_severities
    messages = proposal.hunk_messages
    units = [
        Unit(
            index=i,
            lines=(h.start_line, h.end_line),
            new_lines=(h.new_start_line, h.new_end_line),
            kinds=list(h.kinds),
            flagged=i in flagged,
            severity=severities[i] if i in flagged and i < len(severities) else None,
            message=messages[i] if i < len(messages) else h.message,
        )
        for i, h in enumerate(hunks)
    ]
    return statement_units(units, proposal.flagged_statements)


def statement_units(units: list[Unit], statements: Sequence[FlaggedStatement]) -> list[Unit]:
    """`units` and, after them, each flagged statement as a unit of its own: its lines of `after`, no line of
    `before` (the unit around it holds the requested change there)."""
    out = list(units)
    for s in statements:
        at = units[s.hunk].lines[0]
        out.append(
            Unit(
                index=len(out),
                lines=(at, at - 1),
                new_lines=(s.start_line, s.end_line),
                kinds=list(s.kinds),
                flagged=True,
                severity=s.severity,
                message=s.message,
            )
        )
    return out


RUNNER = "run_canitedit_tests.py"
TESTS_FILE = "canitedit_tests.py"
# what `benchmark.suites.canitedit.judge.program` runs: the completion, a newline, the tests, as one script
RUNNER_TEXT = f"""import pathlib
import runpy

source = pathlib.Path("program.py").read_text() + "\\n" + pathlib.Path("{TESTS_FILE}").read_text()
pathlib.Path("_program.py").write_text(source)
runpy.run_path("_program.py", run_name="__main__")
"""


class EntryJudgment(msgspec.Struct, frozen=True):
    """One entry judged: on the instruction alone, and (`--tests`) with the necessity analysis' flags."""

    words: Judged
    tests: Judged | None = None
    status: str | None = None  # the analysis' status
    runs: int = 0


def with_test_flags(units: list[Unit], record: NecessityRecord) -> list[Unit]:
    """The proposal's units with the analysis' unrequested ones flagged too (its severity and message),
    then its unrequested statements inside needed units (`unrequestedParts`) as units of their own."""
    flags = {f.hunk: f for f in record.unrequested}
    out = [
        msgspec.structs.replace(u, flagged=True, severity=flags[u.index].severity, message=flags[u.index].message)
        if u.index in flags and not u.flagged
        else u
        for u in units
    ]
    return statement_units(out, record.unrequested_parts)


def workspaces(root: Path, entries: Sequence[Entry], tests: dict[int, str]) -> list[Path]:
    """A workspace folder per entry: its `before` as program.py, the problem's tests and the runner."""
    folders = []
    for i, e in enumerate(entries):
        folder = root / f"{i:03d}_{e.problem_id}_{e.name}"
        folder.mkdir(parents=True)
        (folder / "program.py").write_text(e.before)
        (folder / TESTS_FILE).write_text(tests[e.problem_id])
        (folder / RUNNER).write_text(RUNNER_TEXT)
        folders.append(folder)
    return folders


def necessity_settings(max_runs: int) -> dict[str, Any]:
    return {
        "testCommand": f"python {RUNNER}",
        "necessity": {"environment": "canitedit", "maxRuns": max_runs, "parallel": 2, "timeoutS": TIMEOUT_S},
    }


async def judge(
    entries: Sequence[Entry],
    *,
    concurrency: int = 4,
    log_file: Path | None = None,
    folders: Sequence[Path] = (),
    max_runs: int = 32,
) -> list[EntryJudgment]:
    """Every entry through the real server, `concurrency` requests in flight (one endpoint slot each, so
    that entries with the same `before` and instruction never take each other's answer). With `folders`
    (one workspace folder per entry, `workspaces`) each proposal's necessity is analysed too."""
    settings = necessity_settings(max_runs) if folders else None
    async with replaying(concurrency, log_file=log_file, settings=settings, workspace_folders=folders) as servers:

        async def one(i: int, e: Entry) -> EntryJudgment:
            async with servers.turn() as turn:
                name = f"{e.problem_id}_{e.name}"
                uri = turn.session.open(e.before, name=name, path=folders[i] / "program.py") if folders else None
                try:
                    proposal = await turn.propose(e.before, e.instruction, e.after, name=name, gold=e.gold, uri=uri)
                    failed = _unusable(e, proposal)
                    if failed:
                        return EntryJudgment(Judged(e, [], error=failed))
                    words = Judged(e, units_of(proposal))
                    if not folders:
                        return EntryJudgment(words)
                    rec = await turn.session.analyze_necessity(proposal.id)
                    tests = Judged(e, with_test_flags(words.units, rec))
                    return EntryJudgment(words, tests, status=rec.status, runs=rec.runs + rec.part_runs)
                except ServerError as exc:
                    return EntryJudgment(Judged(e, [], error=str(exc)))
                finally:
                    if uri is not None:
                        turn.session.close(uri)

        return list(await asyncio.gather(*(one(i, e) for i, e in enumerate(entries))))


def _unusable(e: Entry, proposal: ProposalRecord) -> str | None:
    if proposal.status != "ok":
        return f"{proposal.error_kind}: {proposal.error}"
    if apply_text_edits(e.before, proposal.edits) != e.after:
        return "the proposal's edits do not rebuild `after`: its lines would not match"
    return None


def tests_figures(done: Sequence[EntryJudgment]) -> TestsFigures | None:
    judged = [d.tests for d in done if d.tests is not None and d.words.error is None]
    if not judged:
        return None
    statuses: dict[str, int] = {}
    for d in done:
        if d.status is not None:
            statuses[d.status] = statuses.get(d.status, 0) + 1
    return TestsFigures(
        warning=figures(judged, "warning"),
        any=figures(judged, "any"),
        by_model=by_model(judged),
        misses=misses(judged),
        false_flags=false_flags(judged),
        statuses=dict(sorted(statuses.items())),
        runs=sum(d.runs for d in done),
        flagged_by_tests=sum(
            t.flagged and not w.flagged
            for d in done
            if d.tests is not None
            for w, t in zip(d.words.units, d.tests.units[: len(d.words.units)], strict=True)
        )
        + sum(len(d.tests.units) - len(d.words.units) for d in done if d.tests is not None),
    )


def report(labels: Path, done: Sequence[EntryJudgment]) -> RealReport:
    judged = [d.words for d in done]
    ok = [j for j in judged if j.error is None]
    return RealReport(
        labels=str(labels),
        rule=RULE,
        completions=len(ok),
        clean=sum(not j.entry.over_edited for j in ok),
        over_edited=sum(j.entry.over_edited for j in ok),
        unrequested=sum(c.unrequested for j in ok for c in j.entry.changes),
        failed=len(judged) - len(ok),
        warning=figures(ok, "warning"),
        any=figures(ok, "any"),
        by_kind=by_kind(ok),
        by_unit_kind=by_unit_kind(ok),
        by_model=by_model(ok),
        misses=misses(ok),
        false_flags=false_flags(ok),
        entries=[EntryUnits(j.entry.key, j.entry.model, j.entry.over_edited, j.units, j.error) for j in judged],
        tests=tests_figures(done),
    )


# ---- text ---------------------------------------------------------------------------------------


def _spans(spans: Sequence[Span]) -> str:
    return ",".join(f"[{s},{e}]" for s, e in spans)


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    cells = [[str(c) for c in header], *[[str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    fmt = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in cells
    ]
    return [fmt[0], "  ".join("-" * w for w in widths), *fmt[1:]]


def _figure_rows(w: Figures, a: Figures) -> list[list[object]]:
    return [
        ["unit precision (flagged units meeting an unrequested change)", w.precision, a.precision],
        ["unit recall (unrequested changes met by a flagged unit)", w.recall, a.recall],
        ["false alarms (clean completions with a flagged unit)", w.false_alarms, a.false_alarms],
        ["detection (over-edited, a flag on an unrequested change)", w.detection, a.detection],
        ["over-edited completions with a flag anywhere", w.flagged_over_edited, a.flagged_over_edited],
        ["flagged units left out (all their changes trivial/unsure)", w.unscored_units, a.unscored_units],
    ]


def render_text(r: RealReport, by: str | None = None) -> str:
    out = [
        f"real edits: {r.completions} labelled completions judged by the server ({r.labels}): {r.clean} clean, "
        f"{r.over_edited} over-edited, {r.unrequested} unrequested changes",
        f"matching: {r.rule}",
    ]
    if r.failed:
        failed = [e for e in r.entries if e.error is not None]
        out.append(f"FAILED in the server, left out of every figure: {r.failed}")
        out += [f"  {e.key}: {e.error}" for e in failed]
    out += ["", *_table(["figure", "warning+", "any severity"], _figure_rows(r.warning, r.any))]
    if by in (None, "kind"):
        out += ["", "per labelled kind (recall; requested changes a flagged unit meets):"]
        out += _table(
            ["kind", "unrequested", "met warning+", "met any", "requested", "hit warning+", "hit any", "unscored"],
            [
                [k.kind, k.unrequested, k.met_warning, k.met_any, k.requested]
                + [k.requested_hit_warning, k.requested_hit_any, k.unscored]
                for k in r.by_kind
            ],
        )
        out += ["", "per kind of the server's flagged units (precision; a unit of two kinds counts under both):"]
        out += _table(
            ["unit kind", "flagged warning+", "hits", "flagged any", "hits"],
            [[k.kind, k.flagged_warning, k.hits_warning, k.flagged_any, k.hits_any] for k in r.by_unit_kind],
        )
    if by in (None, "model"):
        for level in ("warning", "any"):
            out += [
                "",
                f"per model, flagged at {'warning severity or above' if level == 'warning' else 'any severity'}:",
            ]
            rows = []
            for m in r.by_model:
                fig: Figures = getattr(m, level)
                rows.append(
                    [m.model, m.completions, m.over_edited, fig.precision, fig.recall, fig.false_alarms, fig.detection]
                )
            out += _table(["model", "n", "over", "precision", "recall", "false alarms", "detection"], rows)
    out += _misses_and_false_flags(r.misses, r.false_flags)
    if r.tests is not None:
        out += _tests_section(r)
    return "\n".join(out) + "\n"


def _tests_section(r: RealReport) -> list[str]:
    t = r.tests
    assert t is not None
    statuses = ", ".join(f"{k} {v}" for k, v in t.statuses.items())
    out = [
        "",
        f"with the tests (analyzeNecessity in the sandbox: {statuses}; {t.runs} test runs; "
        f"{t.flagged_by_tests} units flagged on the tests' evidence alone):",
    ]
    rows = [
        [label, w, tw, ta]
        for (label, w, _), (_, tw, ta) in zip(
            _figure_rows(r.warning, r.any), _figure_rows(t.warning, t.any), strict=True
        )
    ]
    out += _table(["figure", "instruction, warning+", "with tests, warning+", "with tests, any"], rows)
    out += ["", "per model, with the tests, flagged at warning severity or above:"]
    out += _table(
        ["model", "n", "over", "precision", "recall", "false alarms", "detection"],
        [
            [m.model, m.completions, m.over_edited]
            + [m.warning.precision, m.warning.recall, m.warning.false_alarms, m.warning.detection]
            for m in t.by_model
        ],
    )
    return out + _misses_and_false_flags(t.misses, t.false_flags, " (with the tests)")


def _misses_and_false_flags(missed: Sequence[Miss], flags: Sequence[FalseFlag], footing: str = "") -> list[str]:
    out = [
        "",
        f"misses{footing}: unrequested changes no warning-severity unit meets ({len(missed)}; [hint]: a hint meets it)",
    ]
    out += [
        f"  {m.key}  {m.model}  before {_spans(m.lines)} after {_spans(m.new_lines)}  {m.kind}"
        f"{' [hint]' if m.hint else ''}: {m.desc}"
        for m in missed
    ] or ["  (none)"]
    scored = sum(f.scored for f in flags)
    out += [
        "",
        f"false flags{footing}: flagged units meeting no unrequested change ({len(flags)}, {scored} counted in "
        "precision; the rest meet only trivial/unsure changes)",
    ]
    sev = {1: "error", 2: "warning", 3: "information", 4: "hint"}
    for f in flags:
        meets = "; ".join(f.meets) if f.meets else "no labelled change"
        out.append(
            f"  {f.key}  {f.model}  before {_spans([f.lines])} after {_spans([f.new_lines])}  "
            f"{'+'.join(f.kinds)} [{sev.get(f.severity or 2, f.severity)}{'' if f.scored else ', unscored'}]: "
            f"{f.message}  | meets: {meets}"
        )
    return out + ([] if flags else ["  (none)"])


# ---- command line -------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmark.studies.overedits.real", description=__doc__.splitlines()[0])
    ap.add_argument(
        "labels",
        nargs="?",
        type=Path,
        help="labels.jsonl (default: DATA/real_edits/labels.jsonl); entries may refer to their texts in the "
        f"data directory instead of holding them, as the project's held-out set does ({HELDOUT.name})",
    )
    ap.add_argument("--data", help="the benchmark data directory (default: EDIT_FIDELITY_DATA, else the cache)")
    ap.add_argument("--format", choices=("text", "json"), default="text")
    ap.add_argument(
        "--by", choices=("kind", "model"), help="the text's breakdown: per kind or per model (default both)"
    )
    ap.add_argument("--concurrency", type=int, default=4, help="requests in flight to the server (default 4)")
    ap.add_argument("--server-log", type=Path, help="the language server's log file (default: none)")
    ap.add_argument(
        "--tests",
        action="store_true",
        help="judge with the problems' tests too (analyzeNecessity in the sandbox; needs "
        "`edit-fidelity sandbox prepare --suite canitedit`)",
    )
    ap.add_argument("--max-runs", type=int, default=32, help="test runs at most per analysis with --tests (default 32)")
    args = ap.parse_args(argv)
    if args.concurrency < 1 or args.max_runs < 1:
        ap.error("--concurrency and --max-runs must be at least 1")
    labels = args.labels or require(data_dir(args.data) / "real_edits" / "labels.jsonl", "the real-edits labels")
    entries = load_labels(labels, fill=References(data_dir(args.data)))
    with tempfile.TemporaryDirectory(prefix="edit-fidelity-real-") as tmp:
        folders: list[Path] = []
        if args.tests:
            tests = {p.id: p.tests for p in load(data_dir(args.data))}
            unknown = sorted({e.problem_id for e in entries} - set(tests))
            if unknown:
                raise LabelsError(f"{labels}: CanItEdit has no problem {unknown[0]}: --tests needs CanItEdit entries")
            folders = workspaces(Path(tmp), entries, tests)
        done = asyncio.run(
            judge(
                entries, concurrency=args.concurrency, log_file=args.server_log, folders=folders, max_runs=args.max_runs
            )
        )
    r = report(labels, done)
    if args.format == "json":
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(r).decode(), indent=1) + "\n")
    else:
        sys.stdout.write(render_text(r, args.by))
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(run_script(main))
