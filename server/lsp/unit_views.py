"""What the server shows for each change unit: its lines on the side the diagnostics go, the message
(with why it was judged requested or not), the severity and the complexity change of its function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from server.fidelity import FidelityReport, Hunk
from server.fidelity.judge.flags import split_flags
from server.fidelity.judge.instruction import Verdict
from server.fidelity.text.analysis import split_lines
from server.lsp.flagging import flagged_severity
from server.lsp.settings import Thresholds
from server.protocol.report import UNREQUESTED_KINDS


@dataclass(frozen=True)
class UnitView:
    index: int
    start_line: int  # 1-based, on the side the diagnostics go (original for proposals, edited for observations)
    end_line: int  # inclusive; start_line - 1 for an empty range (insertion point)
    flagged: bool
    message: str
    severity: int  # LSP DiagnosticSeverity: 1 error, 2 warning, 3 information, 4 hint
    complexity_delta: int | None
    code: str
    # the unit's own extent (LSP start and end positions) on that side, from its edits; None: the lines
    span: tuple[dict, dict] | None = None


_NOT_REQUESTED = " (not requested)"


def _complexity_for(report: FidelityReport, hunk: Hunk, edited_side: bool) -> tuple[int | None, str | None]:
    """The largest cognitive-complexity change among the functions the hunk touches."""
    best: tuple[int | None, str | None] = (None, None)
    lo, hi = (hunk.new_start_line, hunk.new_end_line) if edited_side else (hunk.start_line, hunk.end_line)
    hi = max(hi, lo)
    for fn in report.functions:
        a, b = (fn.new_start_line, fn.new_end_line) if edited_side else (fn.start_line, fn.end_line)
        if a is None or b is None:  # added or removed on this side: no lines to match the hunk against
            continue
        if b < lo or a > hi:
            continue
        before, after = fn.cognitive_before, fn.cognitive_after
        if before is None and after is None:
            continue
        delta = (after or 0) - (before or 0)
        if best[0] is None or abs(delta) > abs(best[0]):
            best = (delta, fn.name)
    return best


def unit_views(
    report: FidelityReport,
    flagged: list[bool],
    thresholds: Thresholds,
    *,
    edited_side: bool,
    spans: list[tuple[dict, dict] | None] | None = None,
) -> list[UnitView]:
    """What the editor shows per unit. `flagged` from `flag_units` carries the verdicts: the message
    then says why a unit is (not) requested. `spans`: each unit's extent on the shown side (for
    proposals, the original side, it comes from the unit's edits when not given)."""
    verdicts: list[Verdict] | None = getattr(flagged, "verdicts", None)
    views = []
    mentioned: set[str] = set()
    for i, hunk in enumerate(report.hunks):
        is_flagged = flagged[i] if i < len(flagged) else hunk.unrequested
        verdict = verdicts[i] if verdicts is not None and i < len(verdicts) else None
        message = hunk.message or ", ".join(hunk.kinds) or "changed"
        message = message.removesuffix(_NOT_REQUESTED)
        message = message.replace("outside the target lines", "outside the selected lines")
        if is_flagged:
            reason = verdict.reason if verdict is not None and verdict.reason else "not requested"
            message += f" ({reason})"
        elif verdict is not None and verdict.reason:
            message += f" ({verdict.reason})"
        delta, fname = _complexity_for(report, hunk, edited_side)
        if fname in mentioned:  # say it once per function, on its first hunk
            delta = None
        elif fname is not None:
            mentioned.add(fname)
        if delta is not None and delta >= thresholds.complexity_warning and delta > 0:
            message += f"; +{delta} cognitive complexity in `{fname}`"
        unrequested = (
            list(verdict.unrequested)
            if verdict is not None and verdict.unrequested
            else [k for k in hunk.kinds if k in UNREQUESTED_KINDS]
        )
        if is_flagged:
            severity = flagged_severity(hunk, unrequested, thresholds)
            loud = hunk.tokens_changed >= thresholds.hunk_tokens_error or (
                delta is not None and delta >= thresholds.complexity_error
            )
            if loud and severity <= 2:
                severity = 1
        elif delta is not None and delta >= thresholds.complexity_error:
            severity = 2
        else:
            severity = 4 if not (delta is not None and delta >= thresholds.complexity_warning) else 3
        code = unrequested[0] if is_flagged and unrequested else (hunk.kinds[0] if hunk.kinds else "change")
        lo, hi = (hunk.new_start_line, hunk.new_end_line) if edited_side else (hunk.start_line, hunk.end_line)
        if spans is not None:
            span = spans[i] if i < len(spans) else None
        else:
            span = None if edited_side else _original_span(hunk)
        views.append(UnitView(i, lo, hi, is_flagged, message, severity, delta, code, span))
    return views


@dataclass(frozen=True)
class StatementView:
    """An unrequested statement inside a unit that is not flagged (`Judgment.statements`), as shown."""

    unit: int
    start_line: int  # 1-based inclusive lines of the edited text
    end_line: int
    kinds: tuple[str, ...]
    severity: int
    message: str


def statement_views(
    report: FidelityReport, flagged: list[bool], thresholds: Thresholds, edited: str
) -> list[StatementView]:
    """What the editor shows per flagged statement: its first line and where it is in the edited text (a
    proposal's diagnostics sit on the original, which does not hold it), and why."""
    lines = split_lines(edited)
    out = []
    for s in getattr(flagged, "statements", None) or []:
        first = lines[s.start_line - 1].strip() if s.start_line <= len(lines) else ""
        first = first if len(first) <= 80 else first[:77] + "..."
        severity = flagged_severity(report.hunks[s.unit], s.kinds, thresholds)
        message = f"`{first}` (line {s.start_line} of the proposal): {s.reason}"
        out.append(StatementView(s.unit, s.start_line, s.end_line, s.kinds, severity, message))
    return out


def _original_span(hunk: Hunk) -> tuple[dict, dict] | None:
    if not hunk.edits:
        return None
    start = min((e.range.start for e in hunk.edits), key=lambda p: (p.line, p.character))
    end = max((e.range.end for e in hunk.edits), key=lambda p: (p.line, p.character))
    return {"line": start.line, "character": start.character}, {"line": end.line, "character": end.character}


def count_flags(views: list[UnitView], statements: Sequence[StatementView] = ()) -> tuple[int, int]:
    """Flagged units (and flagged statements, each a unit of its own) at warning severity (error or
    warning) and at hint severity (information or hint): what the benchmark suites report, from a
    proposal's views or its `hunkSeverities` and `flaggedStatements`."""
    return split_flags(
        [*(v.flagged for v in views), *(True for _ in statements)],
        [*(v.severity for v in views), *(s.severity for s in statements)],
    )
