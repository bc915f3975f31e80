"""The pieces change units are made of: tokens and comments with their character intervals (`Item`),
differing intervals of both sides (`Atom`), and one side's offsets (`Side`). Pure data and lookups;
`atoms.py` builds atoms from a diff, `gaps.py` splits one differing gap.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from dataclasses import dataclass, field

from server.fidelity.text.analysis import Analysis
from server.fidelity.text.textedits import utf16_len
from server.fidelity.units.regions import not_variables
from server.protocol.report import Position

CODE, COMMENT, SPACE, RENAME, EOL = "code", "comment", "space", "rename", "eol"
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_NEWLINES = ("\n", "\r\n", "")


@dataclass(slots=True)
class Item:
    """A token (code) or a comment, with its character interval in its side's text."""

    key: str
    start: int
    end: int
    token: int  # index in the side's raw token list; -1 for a comment


@dataclass(slots=True)
class Atom:
    a0: int  # original interval [a0, a1)
    a1: int
    b0: int  # edited interval [b0, b1)
    b1: int
    category: str
    old: list[Item] = field(default_factory=list)
    new: list[Item] = field(default_factory=list)
    rename: tuple[str, str] | None = None
    indent: bool = False  # a changed indentation at the start of a logical line
    dependent: bool = False  # cannot be applied on its own
    group: int = -1  # atoms of one bracket pair share a group (accepted together)

    def code_old(self) -> list[Item]:
        return [i for i in self.old if i.token >= 0]

    def code_new(self) -> list[Item]:
        return [i for i in self.new if i.token >= 0]


class Side:
    """Offsets of one text's lines, tokens and comments (computed for the changed regions only)."""

    def __init__(self, analysis: Analysis) -> None:
        self.a = analysis
        self.text = analysis.text
        self.lines = analysis.lines
        self.starts = [0, *itertools.accumulate(map(len, self.lines))]
        self.strings = analysis.lexed.strings
        self.rows, self.end_rows = analysis.token_rows
        m = analysis.line_map
        comments = analysis.lexed.comments
        self.comments = [(m[r], c) for r, c in comments] if m else comments
        self.comment_rows = [r for r, _ in self.comments]
        self._offsets: dict[int, tuple[int, int]] = {}
        self._not_variables: set[int] | None = None

    def not_variables(self) -> set[int]:
        if self._not_variables is None:
            self._not_variables = not_variables(self.strings)
        return self._not_variables

    def line_start(self, line: int) -> int:
        """Offset of 1-based line `line` (one past the last line: the text's end)."""
        return self.starts[min(max(line, 1), len(self.starts)) - 1]

    def token_offsets(self, lo: int, hi: int) -> None:
        """Find the character interval of tokens lo..hi-1 (in order, each at or after its row)."""
        cursor = self.line_start(self.rows[lo]) if lo < len(self.rows) else len(self.text)
        text, strings, rows, starts = self.text, self.strings, self.rows, self.starts
        last = len(starts)
        for i in range(lo, hi):
            s = strings[i]
            row = rows[i]
            line_start = starts[row - 1] if 0 < row <= last else self.line_start(row)
            begin = cursor if cursor > line_start else line_start
            if s == "":
                pos = begin
            else:
                pos = text.find(s, begin)
                if pos < 0:
                    pos = begin
            cursor = pos + len(s)
            self._offsets[i] = (pos, cursor)

    def items(self, lo: int, hi: int, first_line: int, last_line: int) -> list[Item]:
        if hi > lo:
            missing = [i for i in (lo, hi - 1) if i not in self._offsets]
            if missing:
                self.token_offsets(lo, hi)
        strings, offsets = self.strings, self._offsets
        out = [Item("\n" if s == "\r\n" else s, *offsets[i], i) for i, s in zip(range(lo, hi), strings[lo:hi])]
        c_lo = bisect_right(self.comment_rows, first_line - 1)
        c_hi = bisect_right(self.comment_rows, last_line)
        if c_lo < c_hi:
            for row, comment in self.comments[c_lo:c_hi]:
                content = self.lines[row - 1].rstrip("\r\n")
                start = self.starts[row - 1] + (
                    len(content) - len(comment) if content.endswith(comment) else max(content.find(comment), 0)
                )
                out.append(Item("\x00" + comment, start, start + len(comment), -1))
            out.sort(key=lambda it: (it.start, it.token < 0))
        return out

    def position(self, offset: int) -> Position:
        line = bisect_right(self.starts, offset) - 1
        if line >= len(self.lines):
            last = self.lines[-1] if self.lines else "\n"
            if not last.endswith(("\n", "\r")):  # the end of a last line without a line break
                return Position(line=len(self.lines) - 1, character=utf16_len(last))
            return Position(line=len(self.lines), character=0)
        text = self.lines[line]
        col = offset - self.starts[line]
        return Position(line=line, character=utf16_len(text[:col]) if not text.isascii() else col)

    def line_of(self, offset: int) -> int:
        """1-based line holding `offset`."""
        return bisect_right(self.starts, offset)


def _is_line_start(text: str, offset: int) -> bool:
    return offset == 0 or text[offset - 1] in "\n\r"


_FSTRING = re.compile(r"^[rRbB]?[fF][rRbB]?['\"]")


def _renamed(key: str, renames: dict[str, str]) -> str:
    """A token as it reads after the renames: a name, or the names inside an f-string's fields."""
    if not renames:
        return key
    found = renames.get(key)
    if found is not None:
        return found
    if _FSTRING.match(key) and "{" in key:
        return _fields_renamed(key, renames)
    return key


def _fields_renamed(key: str, renames: dict[str, str]) -> str:
    words = re.compile(r"\b(" + "|".join(map(re.escape, renames)) + r")\b")
    return re.sub(r"\{[^{}]*\}", lambda m: words.sub(lambda w: renames[w.group(1)], m.group(0)), key)


def _fstring_rename(key: str, renames: dict[str, str]) -> tuple[str, str]:
    for old, new in renames.items():
        if _fields_renamed(key, {old: new}) != key:
            return old, new
    return next(iter(renames.items()))


def _starts_logical_line(side: Side, item: Item) -> bool:
    return item.token == 0 or side.strings[item.token - 1] in _NEWLINES


def _bracket_balance(items: list[Item]) -> int:
    depth = 0
    for it in items:
        if it.token >= 0 and len(it.key) == 1:
            if it.key in _OPEN:
                depth += 1
            elif it.key in _CLOSE:
                depth -= 1
    return depth
