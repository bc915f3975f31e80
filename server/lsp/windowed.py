"""Measuring a large file over the top-level blocks an edit touches only, with line numbers and
edits for the whole file (`largeFileLines`).
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from server.fidelity import FidelityReport, TextEdit, common_affix, measure
from server.lsp.lines import split_lines


def _toplevel(line: str) -> bool:
    return bool(line) and (line[0].isalpha() or line[0] in "_@")


@dataclass(frozen=True)
class Window:
    start_line: int  # 1-based, first line of the window on both sides
    before_end: int  # 1-based inclusive, original side
    after_end: int  # edited side


def _shift_edit(e: TextEdit, offset: int) -> TextEdit:
    r = e.range
    return msgspec.structs.replace(
        e,
        range=msgspec.structs.replace(
            r,
            start=msgspec.structs.replace(r.start, line=r.start.line + offset),
            end=msgspec.structs.replace(r.end, line=r.end.line + offset),
        ),
    )


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
    edits = (
        [e for h in hunks for e in h.edits]
        if len(report.edits) == sum(len(h.edits) for h in report.hunks)
        else [_shift_edit(e, offset) for e in report.edits]
    )
    return msgspec.structs.replace(report, hunks=hunks, functions=functions, edits=edits)


def measure_windowed(
    before: str, after: str, large_file_lines: int, language: str | None = None
) -> tuple[FidelityReport, Window | None]:
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
