"""The seven BICS bug types, inserted into any clean snippet by our own code.

Each inserter lists the places where its bug can go (from Python's tokenizer), in an order the caller's
random generator decides, and keeps the first whose buggy text the interpreter rejects with a
SyntaxError at exactly the labelled line. A place where the edit still compiles (a comma between two
string literals, `None` as an argument) or where the interpreter reports another line is skipped, so
every inserted bug is a syntax bug the interpreter itself places on its label.
"""

from __future__ import annotations

import io
import keyword
import random
import tokenize
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import msgspec

from benchmark.suites.bics import BUG_TYPES

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_COMPOUND = frozenset({"def", "class", "if", "elif", "else", "for", "while", "try", "except", "finally", "with"})
_KEYWORDS = tuple(keyword.kwlist)
MAX_ATTEMPTS = 40  # places tried per snippet before giving up on it


class Bugged(msgspec.Struct, frozen=True):
    code: str
    line: int  # 1-based, within `code`
    bug_type: str


@dataclass(frozen=True)
class _Edit:
    start: int  # offsets into the snippet
    end: int
    text: str
    line: int  # 1-based line the bug is on


def syntax_error_line(code: str) -> int | None:
    """The line of the SyntaxError the interpreter raises for `code` (None: it compiles).

    `compile` parses and compiles only (nothing runs); warnings such as invalid escapes are not errors.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, "<bics>", "exec", dont_inherit=True)
    except SyntaxError as exc:  # IndentationError and TabError included
        return exc.lineno if exc.lineno is not None else 0
    except (ValueError, RecursionError, MemoryError):  # null bytes, absurd nesting: not a located bug
        return 0
    return None


def _tokens(code: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return []


def _line_starts(code: str) -> list[int]:
    starts = [0, 0]  # tokenize rows are 1-based
    for i, ch in enumerate(code):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _significant(tokens: list[tokenize.TokenInfo]) -> list[tokenize.TokenInfo]:
    skip = {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
        tokenize.ENCODING,
    }
    return [t for t in tokens if t.type not in skip]


def _same_line_pairs(sig: list[tokenize.TokenInfo]) -> Iterator[tuple[tokenize.TokenInfo, tokenize.TokenInfo]]:
    """(opener, closer) bracket pairs that open and close on one line."""
    stack: list[tokenize.TokenInfo] = []
    for t in sig:
        if t.type != tokenize.OP:
            continue
        if t.string in _OPENERS:
            stack.append(t)
        elif t.string in _CLOSERS and stack:
            opener = stack.pop()
            if opener.start[0] == t.start[0]:
                yield opener, t


def _single_line_strings(sig: list[tokenize.TokenInfo]) -> Iterator[tokenize.TokenInfo]:
    for t in sig:
        if t.type != tokenize.STRING or t.start[0] != t.end[0]:
            continue
        body = t.string.lstrip("rRbBuUfF")
        if body[:3] in ("'''", '"""') or len(body) < 2:
            continue
        yield t


def _missing_colon(code: str, sig: list[tokenize.TokenInfo], at: Callable) -> list[_Edit]:
    edits = []
    i = 0
    while i < len(sig):
        t = sig[i]
        starts_line = i == 0 or sig[i - 1].end[0] < t.start[0] or sig[i - 1].string in (";", ":")
        if t.type == tokenize.NAME and t.string in _COMPOUND and starts_line:
            depth, lambdas = 0, 0
            for u in sig[i + 1 :]:
                if u.type == tokenize.OP and u.string in _OPENERS:
                    depth += 1
                elif u.type == tokenize.OP and u.string in _CLOSERS:
                    depth -= 1
                elif depth == 0 and u.type == tokenize.NAME and u.string == "lambda":
                    lambdas += 1
                elif depth == 0 and u.type == tokenize.OP and u.string == ":":
                    if lambdas:
                        lambdas -= 1
                        continue
                    edits.append(_Edit(at(u.start), at(u.end), "", u.start[0]))
                    break
        i += 1
    return edits


def _missing_parenthesis(code: str, sig: list[tokenize.TokenInfo], at: Callable) -> list[_Edit]:
    return [_Edit(at(c.start), at(c.end), "", c.start[0]) for o, c in _same_line_pairs(sig) if o.string == "("]


def _missing_quotation(code: str, sig: list[tokenize.TokenInfo], at: Callable) -> list[_Edit]:
    # the closing quote goes: the literal runs on to the end of its line
    return [_Edit(at(t.end) - 1, at(t.end), "", t.start[0]) for t in _single_line_strings(sig)]


def _mismatched_quotation(code: str, sig: list[tokenize.TokenInfo], at: Callable) -> list[_Edit]:
    edits = []
    for t in _single_line_strings(sig):
        other = '"' if t.string[-1] == "'" else "'"
        edits.append(_Edit(at(t.end) - 1, at(t.end), other, t.start[0]))
    return edits


def _missing_comma(code: str, sig: list[tokenize.TokenInfo], at: Callable) -> list[_Edit]:
    edits = []
    depth = 0
    for i, t in enumerate(sig):
        if t.type == tokenize.OP and t.string in _OPENERS:
            depth += 1
        elif t.type == tokenize.OP and t.string in _CLOSERS:
            depth -= 1
        elif t.type == tokenize.OP and t.string == "," and depth > 0 and 0 < i < len(sig) - 1:
            before, after = sig[i - 1], sig[i + 1]
            if before.end[0] == t.start[0] == after.start[0] and after.string not in _CLOSERS:
                edits.append(_Edit(at(t.start), at(t.end), "", t.start[0]))
    return edits


def _mismatched_bracket(code: str, sig: list[tokenize.TokenInfo], at: Callable) -> list[_Edit]:
    edits = []
    for _opener, closer in _same_line_pairs(sig):
        for other in ")]}":
            if other != closer.string:
                edits.append(_Edit(at(closer.start), at(closer.end), other, closer.start[0]))
    return edits


class _NameKeywordPairs(Sequence[_Edit]):
    """Every (identifier, keyword) replacement, built on demand: a snippet has hundreds of them."""

    def __init__(self, names: list[tokenize.TokenInfo], at: Callable) -> None:
        self._names, self._at = names, at

    def __len__(self) -> int:
        return len(self._names) * len(_KEYWORDS)

    @overload
    def __getitem__(self, i: int) -> _Edit: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[_Edit]: ...
    def __getitem__(self, i: int | slice) -> _Edit | Sequence[_Edit]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        t = self._names[i // len(_KEYWORDS)]
        return _Edit(self._at(t.start), self._at(t.end), _KEYWORDS[i % len(_KEYWORDS)], t.start[0])


def _keywords_as_identifier(code: str, sig: list[tokenize.TokenInfo], at: Callable) -> Sequence[_Edit]:
    names = [
        t
        for t in sig
        if t.type == tokenize.NAME and not keyword.iskeyword(t.string) and not keyword.issoftkeyword(t.string)
    ]
    return _NameKeywordPairs(names, at)


_PLACES: dict[str, Callable[[str, list[tokenize.TokenInfo], Callable], Sequence[_Edit]]] = {
    "missing_colon": _missing_colon,
    "missing_parenthesis": _missing_parenthesis,
    "missing_quotation": _missing_quotation,
    "missing_comma": _missing_comma,
    "mismatched_quotation": _mismatched_quotation,
    "mismatched_bracket": _mismatched_bracket,
    "keywords_as_identifier": _keywords_as_identifier,
}
assert tuple(_PLACES) == BUG_TYPES


def places(code: str, bug_type: str) -> Sequence[_Edit]:
    """Every edit that would put a bug of this type into `code` (unverified)."""
    tokens = _tokens(code)
    if not tokens:
        return []
    starts = _line_starts(code)

    def at(pos: tuple[int, int]) -> int:
        return starts[pos[0]] + pos[1]

    return _PLACES[bug_type](code, _significant(tokens), at)


def insert_bug(code: str, bug_type: str, rng: random.Random, *, attempts: int = MAX_ATTEMPTS) -> Bugged | None:
    """A bug of `bug_type` at a place `rng` picks, verified by the interpreter; None when the snippet has
    no place for it that the interpreter reports on the labelled line."""
    if bug_type not in _PLACES:
        raise ValueError(f"unknown bug type {bug_type!r}; known: {', '.join(BUG_TYPES)}")
    candidates = places(code, bug_type)
    for i in rng.sample(range(len(candidates)), min(len(candidates), attempts)):
        edit = candidates[i]
        buggy = code[: edit.start] + edit.text + code[edit.end :]
        if syntax_error_line(buggy) == edit.line:
            return Bugged(code=buggy, line=edit.line, bug_type=bug_type)
    return None
