"""What the server makes of a fidelity report: which hunks to flag, what to say, how loud.

The core (`server.fidelity`) describes each hunk (change unit) and says whether it looks unrequested;
this module weighs that against the user's instruction with the rules of `server.fidelity.instruction`
(over the facts `server.fidelity.unit_facts` gathers), says why in each message, adds complexity notes
per function, and picks severities from the settings (`severity`, `whitespaceHintLines`, thresholds).
Also: whole-line selection handling, the per-function window for large files (reverts: `unit_edits`).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

import msgspec

from server.fidelity import FidelityReport, Hunk, common_affix, measure
from server.fidelity.flags import flagged_severity as _flagged_severity
from server.fidelity.flags import judge_units, split_flags
from server.fidelity.instruction import Verdict, parse_instruction
from server.fidelity.instruction import allowed_kinds as _allowed
from server.fidelity.report import UNREQUESTED_KINDS
from server.lsp.settings import Thresholds


def allowed_kinds(instruction: str | None) -> set[str]:
    """Hunk kinds the instruction asks for in general (a broad request such as "refactor" allows most)."""
    return _allowed(parse_instruction(instruction)) if instruction else set()


class Judgment(list):
    """Per unit: True when it holds a change nobody asked for (a list of bools, as before), with the
    verdict behind each one (`verdicts`) for the messages."""

    verdicts: list[Verdict]


def judge_hunks(report: FidelityReport, instruction: str | None, *, original: str | None = None,
                edited: str | None = None, aware: bool = True) -> list[Verdict]:
    """A verdict per unit. `instruction` None (an observed change) or `aware` False: the core's view,
    every change of an unrequested kind counts."""
    return judge_units(report, instruction, original=original, edited=edited, aware=aware)


def flag_hunks(report: FidelityReport, instruction: str | None, *, original: str | None = None,
               edited: str | None = None, aware: bool = True) -> Judgment:
    """Per hunk: True when it contains a change nobody asked for (with the verdicts attached)."""
    verdicts = judge_hunks(report, instruction, original=original, edited=edited, aware=aware)
    out = Judgment(v.flagged for v in verdicts)
    out.verdicts = verdicts
    return out


def flagged_severity(hunk: Hunk, kinds: tuple[str, ...] | list[str], thresholds: Thresholds) -> int:
    """The LSP severity of a flagged unit: the loudest of its unrequested kinds' settings; a small
    whitespace-only unit has the `whitespace` one."""
    return _flagged_severity(hunk, kinds, thresholds.severity_levels(), thresholds.whitespace_hint_lines)


def count_flags(views: list[HunkView]) -> tuple[int, int]:
    """Flagged units at warning severity (error or warning) and at hint severity (information or hint):
    what the benchmark suites report, from a proposal's views or its `hunkSeverities`."""
    return split_flags([v.flagged for v in views], [v.severity for v in views])


@dataclass(frozen=True)
class HunkView:
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


def hunk_views(
    report: FidelityReport,
    flagged: list[bool],
    thresholds: Thresholds,
    *,
    edited_side: bool,
    spans: list[tuple[dict, dict] | None] | None = None,
) -> list[HunkView]:
    """What the editor shows per unit. `flagged` from `flag_hunks` carries the verdicts: the message
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
        unrequested = list(verdict.unrequested) if verdict is not None and verdict.unrequested else \
            [k for k in hunk.kinds if k in UNREQUESTED_KINDS]
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
        code = (unrequested[0] if is_flagged and unrequested else (hunk.kinds[0] if hunk.kinds else "change"))
        lo, hi = (hunk.new_start_line, hunk.new_end_line) if edited_side else (hunk.start_line, hunk.end_line)
        if spans is not None:
            span = spans[i] if i < len(spans) else None
        else:
            span = None if edited_side else _original_span(hunk)
        views.append(HunkView(i, lo, hi, is_flagged, message, severity, delta, code, span))
    return views


def _original_span(hunk: Hunk) -> tuple[dict, dict] | None:
    if not hunk.edits:
        return None
    start = min((e.range.start for e in hunk.edits), key=lambda p: (p.line, p.character))
    end = max((e.range.end for e in hunk.edits), key=lambda p: (p.line, p.character))
    return {"line": start.line, "character": start.character}, {"line": end.line, "character": end.character}


# -- lines ---------------------------------------------------------------------------------------
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str) -> list[str]:
    """Lines with their terminators, LSP style (\\n, \\r\\n, \\r)."""
    return _LINE.findall(text)


def utf16_len(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def line_start(lines: list[str], index: int) -> dict:
    """LSP position of the start of line `index` (0-based); past the end: the end of the text."""
    if index < len(lines):
        return {"line": index, "character": 0}
    if lines and not lines[-1].endswith(("\n", "\r")):
        return {"line": len(lines) - 1, "character": utf16_len(lines[-1])}
    return {"line": len(lines), "character": 0}


def whole_lines(text: str, start: tuple[int, int], end: tuple[int, int]) -> tuple[int, int]:
    """A selection as 0-based first and last line (inclusive); a selection that ends at column 0 of a
    later line does not include that line."""
    first, last = start[0], end[0]
    if end[1] == 0 and last > first:
        last -= 1
    n = max(1, len(split_lines(text)))
    return first, min(last, n - 1)


def _indent_of(lines: list[str]) -> str:
    body = [ln for ln in lines if ln.strip()]
    if not body:
        return ""
    prefix = body[0][: len(body[0]) - len(body[0].lstrip())]
    for ln in body[1:]:
        while prefix and not ln.startswith(prefix):
            prefix = prefix[:-1]
    return prefix


def assemble_selection(original: str, first: int, last: int, code: str) -> str:
    """The whole edited file when `code` replaces lines first..last (0-based, inclusive).

    Re-indents an answer that lost the selection's common indentation; recognises an answer that
    is the whole file after all (the model ignored "only the selected lines")."""
    lines = split_lines(original)
    selected = lines[first : last + 1]
    code_lines = split_lines(code)
    if (
        first > 0
        and lines
        and len(code_lines) >= len(lines) - 2
        and len(code_lines) > len(selected) + 5
        and code_lines[0].rstrip() == lines[0].rstrip()
    ):
        return code if original.endswith(("\n", "\r")) or not code.endswith("\n") else code.rstrip("\r\n")
    sel_indent = _indent_of(selected)
    code_indent = _indent_of(code_lines)
    if sel_indent and not code_indent:
        code = textwrap.indent(code, sel_indent)
    elif sel_indent and code_indent and len(code_indent) < len(sel_indent) and sel_indent.startswith(code_indent):
        code = textwrap.indent(code, sel_indent[len(code_indent):])
    eol = "\r\n" if selected and selected[0].endswith("\r\n") else "\n"
    ends_with_break = bool(selected) and selected[-1].endswith(("\n", "\r"))
    if ends_with_break and code and not code.endswith(("\n", "\r")):
        code += eol
    if not ends_with_break and last + 1 >= len(lines):
        code = code.rstrip("\r\n")
    return "".join(lines[:first]) + code + "".join(lines[last + 1 :])


# -- measuring -------------------------------------------------------------------------------------
def _toplevel(line: str) -> bool:
    return bool(line) and (line[0].isalpha() or line[0] in "_@")


@dataclass(frozen=True)
class Window:
    start_line: int  # 1-based, first line of the window on both sides
    before_end: int  # 1-based inclusive, original side
    after_end: int  # edited side


def _shift_edit(e, offset: int):
    r = e.range
    return msgspec.structs.replace(e, range=msgspec.structs.replace(
        r, start=msgspec.structs.replace(r.start, line=r.start.line + offset),
        end=msgspec.structs.replace(r.end, line=r.end.line + offset)))


def _shift_report(report: FidelityReport, offset: int) -> FidelityReport:
    if offset == 0:
        return report
    hunks = [
        msgspec.structs.replace(
            h,
            start_line=h.start_line + offset,
            end_line=h.end_line + offset,
            new_start_line=h.new_start_line + offset,
            new_end_line=h.new_end_line + offset,
            edits=[_shift_edit(e, offset) for e in h.edits],
        )
        for h in report.hunks
    ]
    functions = [
        msgspec.structs.replace(
            f,
            start_line=None if f.start_line is None else f.start_line + offset,
            end_line=None if f.end_line is None else f.end_line + offset,
            new_start_line=None if f.new_start_line is None else f.new_start_line + offset,
            new_end_line=None if f.new_end_line is None else f.new_end_line + offset,
        )
        for f in report.functions
    ]
    edits = [e for h in hunks for e in h.edits] if len(report.edits) == sum(len(h.edits) for h in report.hunks) \
        else [_shift_edit(e, offset) for e in report.edits]
    return msgspec.structs.replace(report, hunks=hunks, functions=functions, edits=edits)


def measure_windowed(before: str, after: str, large_file_lines: int,
                     language: str | None = None) -> tuple[FidelityReport, Window | None]:
    """`measure`, but for files longer than `large_file_lines` only over the top-level blocks
    (functions, classes) that the change touches; line numbers and edits are for the whole file.
    Another language is measured whole (its top-level blocks are not found by indentation)."""
    if language not in (None, "python"):
        return measure(before, after, language=language), None
    b = split_lines(before)
    a = split_lines(after)
    if max(len(a), len(b)) <= large_file_lines:
        return measure(before, after), None
    prefix, suffix = common_affix(a, b)
    if prefix == len(a) == len(b):
        return measure(before, after), None
    start = prefix
    while start > 0 and not _toplevel(b[start] if start < len(b) else ""):
        start -= 1
    while start > 0 and b[start - 1].startswith("@"):
        start -= 1
    end_b = len(b) - suffix
    extra = 0
    while end_b + extra < len(b) and not _toplevel(b[end_b + extra]):
        extra += 1
    end_b += extra
    end_a = len(a) - suffix + extra
    report = measure("".join(b[start:end_b]), "".join(a[start:end_a]))
    return _shift_report(report, start), Window(start + 1, end_b, end_a)
