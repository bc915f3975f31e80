"""Whether a change leaves code's syntax tree as it was: token lists that differ by layout only
(parentheses, commas, quotes, number spelling), and `ast.dump`s of statements parsed alone."""

from __future__ import annotations

import ast
import warnings


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
                value = ("str", ast.literal_eval(t))
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                value = t
            if out and isinstance(out[-1], tuple) and isinstance(value, tuple) and type(out[-1][1]) is type(value[1]):
                out[-1] = ("str", out[-1][1] + value[1])  # implicit concatenation
                continue
        elif t[:1].isdigit() or (t[:1] == "." and t[1:2].isdigit()):
            try:
                value = ("num", ast.literal_eval(t))
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
    body = "".join(ln[len(indent):] if ln.startswith(indent) else ln for ln in lines).rstrip()
    if body.startswith("@"):
        body += "\ndef _(): pass"
    elif body.endswith(":"):
        body += " pass"
    elif body.startswith(("elif ", "else", "except", "finally")):
        return None
    return _dump_text(body)


def _dump_text(text: str) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return ast.dump(tree)
