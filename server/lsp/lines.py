"""Line geometry in LSP terms: lines with their line breaks, UTF-16 columns, whole-line selections and
putting a model's code back into the selected lines (the core's `split_lines` and `utf16_len`: one
definition for the core and the server).
"""

from __future__ import annotations

import textwrap

from server.fidelity.text.analysis import split_lines
from server.fidelity.text.textedits import utf16_len

__all__ = ["assemble_selection", "line_start", "split_lines", "utf16_len", "whole_lines"]


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
        code = textwrap.indent(code, sel_indent[len(code_indent) :])
    eol = "\r\n" if selected and selected[0].endswith("\r\n") else "\n"
    ends_with_break = bool(selected) and selected[-1].endswith(("\n", "\r"))
    if ends_with_break and code and not code.endswith(("\n", "\r")):
        code += eol
    if not ends_with_break and last + 1 >= len(lines):
        code = code.rstrip("\r\n")
    return "".join(lines[:first]) + code + "".join(lines[last + 1 :])
