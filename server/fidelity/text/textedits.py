"""Minimal LSP text edits: 0-based lines, UTF-16 code-unit columns, never splitting a \\r\\n pair."""

from __future__ import annotations

from collections.abc import Sequence

from server.fidelity.text.analysis import split_lines
from server.protocol.report import Position, Range, TextEdit


def utf16_len(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _position(lines: list[str], line: int, offset: int) -> Position:
    """Position of character `offset` within `lines[line]` (which may be one past the last line)."""
    if line >= len(lines):
        return Position(line=line, character=0)
    return Position(line=line, character=utf16_len(lines[line][:offset]))


def _locate(lines: list[str], first_line: int, offset: int) -> tuple[int, int]:
    """Turn an offset into the block that starts at `first_line` into (line, column in code points)."""
    line = first_line
    while line < len(lines) and offset >= len(lines[line]):
        if offset == len(lines[line]) and not lines[line].endswith(("\n", "\r")):
            break  # end of the last line, which has no line break
        offset -= len(lines[line])
        line += 1
    return line, offset


def region_edit(a_lines: list[str], b_lines: list[str], a_start: int, a_end: int, b_start: int, b_end: int) -> TextEdit:
    """The smallest edit that replaces original lines a_start..a_end (1-based) with edited lines b_start..b_end."""
    old = "".join(a_lines[a_start - 1 : a_end])
    new = "".join(b_lines[b_start - 1 : b_end])
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    if head and old[head - 1] == "\r" and old[head : head + 1] == "\n":
        head -= 1  # never end a prefix between \r and \n
    tail = 0
    while tail < limit - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    if tail and old[len(old) - tail] == "\n" and len(old) - tail - 1 >= head and old[len(old) - tail - 1] == "\r":
        tail -= 1  # never start a suffix between \r and \n
    start_line, start_col = _locate(a_lines, a_start - 1, head)
    end_line, end_col = _locate(a_lines, a_start - 1, len(old) - tail)
    return TextEdit(
        range=Range(start=_position(a_lines, start_line, start_col), end=_position(a_lines, end_line, end_col)),
        new_text=new[head : len(new) - tail],
    )


def _offset(lines: list[str], starts: list[int], pos: Position) -> int:
    if pos.line >= len(lines):
        return starts[-1]
    line = lines[pos.line]
    if line.isascii():
        col = pos.character
    else:
        units = col = 0
        while col < len(line) and units < pos.character:
            units += 2 if ord(line[col]) > 0xFFFF else 1
            col += 1
    content = len(line.rstrip("\r\n"))
    return starts[pos.line] + min(col, content)


def apply_text_edits(text: str, edits: Sequence[TextEdit]) -> str:
    """Apply non-overlapping LSP edits (all against `text`) in one pass."""
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans = sorted(
        ((_offset(lines, starts, e.range.start), _offset(lines, starts, e.range.end), e.new_text) for e in edits),
        key=lambda s: (s[0], s[1]),
    )
    out: list[str] = []
    cursor = 0
    for begin, end, new_text in spans:
        if begin < cursor:
            raise ValueError("overlapping text edits")
        out.append(text[cursor:begin])
        out.append(new_text)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
