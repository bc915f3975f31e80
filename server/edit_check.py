"""An edit judged as the editor shows it, for the tools outside an editor: the MCP server's `check_edit` and
`check_git`, `check --format sarif` and `check --fail-on`.

The same core and judge as the language server: `measure`, `flag_units` (the instruction-aware judge with
its flagged statements; without an instruction the core's view, every unrequested kind flagged, as for a
change the server observes) and the views that give each unit its severity and message, at the default
settings. The result is `server.protocol.checked.CheckedEdit`.
"""

from __future__ import annotations

from server.fidelity import FidelityReport, measure
from server.fidelity.judge.flags import unrequested_of
from server.fidelity.text.analysis import split_lines
from server.fidelity.text.textedits import utf16_len
from server.lsp.flagging import flag_units, flagged_severity
from server.lsp.settings import Thresholds
from server.lsp.unit_edits import UnitGeometry
from server.lsp.unit_views import unit_views
from server.protocol.checked import (
    SEVERITY_ORDER,
    CheckedEdit,
    CheckedStatement,
    CheckedUnit,
    Lines,
    SeverityName,
    Span,
)
from server.protocol.report import Distance

_NAME_OF: dict[int, SeverityName] = {1: "error", 2: "warning", 3: "information", 4: "hint"}
_THRESHOLDS = Thresholds()


def at_least(severity: str, threshold: str) -> bool:
    """`severity` is as loud as `threshold` or louder (error > warning > information > hint)."""
    return SEVERITY_ORDER.index(severity) >= SEVERITY_ORDER.index(threshold)


def check_texts(
    original: str, edited: str, *, instruction: str | None = None, language: str | None = None
) -> CheckedEdit:
    """Measure and judge `edited` against `original` (`instruction`: what was asked, if known)."""
    report = measure(original, edited, language=language)
    return judge(report, original, edited, instruction=instruction)


def judge(report: FidelityReport, original: str, edited: str, *, instruction: str | None = None) -> CheckedEdit:
    """`report` (of `original` -> `edited`) judged: every unit, and the statements flagged inside units."""
    flagged = flag_units(report, instruction, original=original, edited=edited)
    geometry = UnitGeometry(original, edited, report)
    spans = [geometry.edited_range(i) for i in range(len(report.hunks))]
    views = unit_views(report, flagged, _THRESHOLDS, edited_side=True, spans=spans)
    verdicts = flagged.verdicts
    lines = split_lines(edited)
    units = [
        CheckedUnit(
            index=i,
            kinds=list(hunk.kinds),
            flagged=view.flagged,
            flagged_kinds=unrequested_of(verdicts[i], hunk) if view.flagged else [],
            severity=_NAME_OF[view.severity],
            message=view.message,
            lines=Lines(hunk.new_start_line, hunk.new_end_line),
            original_lines=Lines(hunk.start_line, hunk.end_line),
            span=_span(spans[i], lines),
            tokens_changed=hunk.tokens_changed,
            complexity_delta=view.complexity_delta,
        )
        for i, (hunk, view) in enumerate(zip(report.hunks, views, strict=True))
    ]
    statements = []
    for s in flagged.statements:
        first = lines[s.start_line - 1].strip() if s.start_line <= len(lines) else ""
        first = first if len(first) <= 80 else first[:77] + "..."
        severity = flagged_severity(report.hunks[s.unit], s.kinds, _THRESHOLDS)
        statements.append(
            CheckedStatement(
                unit=s.unit,
                lines=Lines(s.start_line, s.end_line),
                kinds=list(s.kinds),
                severity=_NAME_OF[severity],
                message=f"`{first}`: {s.reason}",
            )
        )
    counts: dict[str, int] = dict.fromkeys(reversed(SEVERITY_ORDER), 0)
    for level in [*(u.severity for u in units if u.flagged), *(s.severity for s in statements)]:
        counts[level] += 1
    total = sum(counts.values())
    return CheckedEdit(
        language=report.language,
        identical=report.identical,
        instruction=instruction,
        summary=_summary(report, units, total, counts),
        flagged=total,
        by_severity=counts,
        distance=_figures(report, "raw"),
        distance_no_comments=_figures(report, "no_comments"),
        units=units,
        statements=statements,
        parse_errors=[
            f"{side} does not parse: {message}"
            for side, message in (("original", report.parse_errors.original), ("edited", report.parse_errors.edited))
            if message
        ],
    )


def _figures(report: FidelityReport, variant: str) -> Distance:
    return report.distance.get(variant) or report.distance["raw"]


def _span(span: tuple[dict, dict] | None, lines: list[str]) -> Span | None:
    """1-based, inside the text: the end of a text that ends with a newline (LSP's position on the line
    after it) is the end of its last line, where a reader of the file can see it."""
    if span is None:
        return None

    def inside(p: dict) -> tuple[int, int]:
        if p["line"] < len(lines) or not lines:
            return p["line"] + 1, p["character"] + 1
        return len(lines), utf16_len(lines[-1].rstrip("\r\n")) + 1

    (sl, sc), (el, ec) = inside(span[0]), inside(span[1])
    return Span(sl, sc, el, ec)


def _summary(report: FidelityReport, units: list[CheckedUnit], total: int, counts: dict[str, int]) -> str:
    if report.identical:
        return "no change"
    n = len(units)
    head = f"{n} change unit{'s' if n != 1 else ''}"
    if not total:
        return f"{head}, none flagged as not requested"
    loud = ", ".join(f"{c} {name}" for name, c in counts.items() if c)
    return f"{head}; {total} flagged as not requested ({loud}): revert them or say why they are needed"
