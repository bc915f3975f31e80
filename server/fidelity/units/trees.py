"""Whether a change leaves code's syntax tree as it was: token lists that differ by layout only
(parentheses, commas, quotes, number spelling), and `ast.dump`s of statements parsed alone."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import server.fidelity.lang.dispatch as other
from server.fidelity.text import pyast

if TYPE_CHECKING:
    from server.fidelity.lang.analysis import LangAnalysis
    from server.fidelity.text.analysis import Analysis
    from server.fidelity.units.atoms import Atom
    from server.fidelity.units.items import Side


def _plausibly_formatting(old: list[str], new: list[str]) -> bool:
    """Could these token lists differ by parentheses, commas, quotes or number spelling only?"""
    return _canonical(old) == _canonical(new)


_LAYOUT = frozenset(("(", ")", ",", ";", "\\", "\n", "\r\n", ""))


def _same_layout(old: list[str], new: list[str]) -> bool:
    """Only literals respelled (quotes, number forms), brackets and commas as they were: the same tree
    without parsing (a string of equal value in the same place is the same constant)."""
    return [t for t in old if t in _LAYOUT] == [t for t in new if t in _LAYOUT] and len(old) == len(new)


def _canonical(tokens: list[str]) -> list[object]:
    out: list[object] = []
    for t in tokens:
        if t in _LAYOUT:
            continue
        value: object = t
        if t[:1] in "'\"" or (t[:1].isalpha() and t[:1] in "rRbBuU" and t[1:2] in "'\"rRbB"):
            try:
                value = ("str", pyast.literal_eval(t))
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                value = t
            if out and isinstance(out[-1], tuple) and isinstance(value, tuple) and type(out[-1][1]) is type(value[1]):
                out[-1] = ("str", out[-1][1] + value[1])  # implicit concatenation
                continue
        elif t[:1].isdigit() or (t[:1] == "." and t[1:2].isdigit()):
            try:
                value = ("num", pyast.literal_eval(t))
            except (ValueError, SyntaxError):
                value = t
        out.append(value)
    return out


def _dump_statement(text: str) -> str | None:
    """`ast.dump` of one logical line parsed alone: dedented, a header given a body."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return None
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip(" \t"))]
    body = "".join(ln[len(indent) :] if ln.startswith(indent) else ln for ln in lines).rstrip()
    if body.startswith("@"):
        body += "\ndef _(): pass"
    elif body.endswith(":"):
        body += " pass"
    elif body.startswith(("elif ", "else", "except", "finally")):
        return None
    return _dump_text(body)


def _dump_text(text: str) -> str | None:
    try:
        tree = pyast.parse(text, quiet=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return ast.dump(tree)


class StatementTrees:
    """The syntax-tree checks of `UnitBuilder` on the statements a unit touches, over the two sides of one
    edit (a collaborator of the builder: it keeps its own cache of the original's statement dumps)."""

    def __init__(self, original: Analysis, lang_original: LangAnalysis | None, old: Side, new: Side) -> None:
        self.original = original
        self.lang_original = lang_original  # the original as a tree-sitter analysis (another language), else None
        self.old, self.new = old, new
        self._old_dump: dict[tuple[int, int], str | None] = {}

    def same_tree(self, atoms: list[Atom]) -> bool:
        """Does applying only these atoms leave the syntax tree of the statements they touch unchanged?"""
        if not self.original.parses:
            return False
        lo = min(a.a0 for a in atoms)
        hi = max(a.a1 for a in atoms)
        if self.lang_original is not None:
            return other.same_tree_applied(self.lang_original, self.new.text, [(a.a0, a.a1, a.b0, a.b1) for a in atoms])
        quick = self._same_statement_tree(atoms, lo, hi)
        if quick is not None:
            return quick
        first, last = self._statement_span(self.old.line_of(lo), self.old.line_of(max(hi - 1, lo)))
        start, stop = self.old.line_start(first), self.old.line_start(last + 1)
        if lo < start or hi > stop:
            return False
        before = self._dump(first, last)
        if before is None:
            return False
        return _dump_text(self._spliced(atoms, start, stop)) == before

    def _same_statement_tree(self, atoms: list[Atom], lo: int, hi: int) -> bool | None:
        """The same check on the logical lines the atoms touch alone (parsed dedented); None when
        those lines do not parse on their own (then the enclosing function is compared)."""
        old = self.old
        lo_line, hi_line = old.line_of(lo), old.line_of(max(hi - 1, lo))
        t_lo, _ = self.original.token_span(lo_line, lo_line)
        _, t_hi = self.original.token_span(hi_line, hi_line)
        strings, rows, end_rows = old.strings, old.rows, old.end_rows
        if t_hi <= t_lo:
            return None
        while t_lo > 0 and strings[t_lo - 1] not in ("\n", "\r\n", ""):
            t_lo -= 1
        while t_hi < len(strings) and strings[t_hi - 1] not in ("\n", "\r\n", ""):
            t_hi += 1
        first, last = rows[t_lo], end_rows[t_hi - 1]
        start, stop = old.line_start(first), old.line_start(last + 1)
        if lo < start or hi > stop:
            return None
        before = _dump_statement(old.text[start:stop])
        return None if before is None else _dump_statement(self._spliced(atoms, start, stop)) == before

    def _spliced(self, atoms: list[Atom], start: int, stop: int) -> str:
        """The original's characters start..stop with the atoms' edited text put in."""
        text = self.old.text
        pieces, cursor = [], start
        for a in sorted(atoms, key=lambda a: a.a0):
            pieces.append(text[cursor : a.a0])
            pieces.append(self.new.text[a.b0 : a.b1])
            cursor = a.a1
        pieces.append(text[cursor:stop])
        return "".join(pieces)

    def _statement_span(self, first: int, last: int) -> tuple[int, int]:
        """The top-level statements around lines first..last (whole functions and classes)."""
        for f in self.original.structure.functions:
            if "." not in f.qualname and f.start <= first and last <= f.end:
                return f.start, f.end
        return first, last

    def _dump(self, first: int, last: int) -> str | None:
        key = (first, last)
        if key not in self._old_dump:
            self._old_dump[key] = _dump_text("".join(self.original.lines[first - 1 : last]))
        return self._old_dump[key]
