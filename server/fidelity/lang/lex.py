"""Tokens of a parsed text: the leaves of its tree, comments kept aside, literals as one token.

`LangLexed` starts with the five fields of `server.fidelity.text.tokens.Lexed` (same names, same order,
same meaning: 1-based rows counting `\\n` only, comments as (row, text)), so code written for the
Python path reads it unchanged; `as_lexed` converts. It adds what tree-sitter knows and the Python
lexer does not: each token's node type and character interval, and each comment's interval.

There are no NEWLINE tokens: in these languages a line break is not a token (Go's and JavaScript's
implicit semicolons are zero-width leaves, dropped like tree-sitter's MISSING tokens).

Speed: walking 15,000 leaves from Python costs ~5 ms, so tokens are cached per top-level unit (a
declaration, or a member of a large class body) by its bytes: after a small edit only the units it
touched are walked again.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from typing import NamedTuple

import tree_sitter as ts

from server.fidelity.lang.parse import Source, language
from server.fidelity.lang.table import Lang
from server.fidelity.text.tokens import Lexed

CHUNK_BYTES = 2048  # a unit larger than this is split into its children (a class into its members)


class LangLexed(NamedTuple):
    strings: list[str]
    rows: list[int]
    end_rows: list[int]
    comments: list[tuple[int, str]]
    ok: bool
    kinds: list[str]  # node type of each token ("identifier", "string", "if", "(", ...)
    starts: list[int]  # character interval of each token
    ends: list[int]
    comment_spans: list[tuple[int, int]]  # character interval of each comment (parallel to comments)
    comment_end_rows: list[int]

    def as_lexed(self) -> Lexed:
        return Lexed(self.strings, self.rows, self.end_rows, self.comments, self.ok)


class _Piece(NamedTuple):
    """The tokens of one unit, positions relative to the unit's first byte and line."""

    strings: list[str]
    kinds: list[str]
    starts: list[int]  # relative character offsets
    ends: list[int]
    rows: list[int]  # relative rows (0 = the unit's first line)
    end_rows: list[int]
    comments: list[tuple[int, int, int, int, str]]  # (rel start, rel end, rel row, rel end row, text)


class _Kinds:
    """Per language: node kind ids that are one token, that are comments, and every kind's name."""

    def __init__(self, lang: Lang) -> None:
        lg = language(lang)
        count = lg.node_kind_count
        self.names = [lg.node_kind_for_id(i) or "" for i in range(count)]
        named = [lg.node_kind_is_named(i) for i in range(count)]
        self.comment = frozenset(i for i in range(count) if named[i] and self.names[i] in lang.comments)
        self.atomic = frozenset(i for i in range(count) if named[i] and self.names[i] in lang.atomic) | self.comment


_KINDS: dict[str, _Kinds] = {}
_lock = threading.Lock()
_CACHE: OrderedDict[tuple[str, bytes], _Piece] = OrderedDict()
_CACHE_BYTES = [0]
MAX_CACHE_BYTES = 2 * 1024 * 1024  # of source bytes (~30 files of 2,000 lines); the tokens cost ~25x that


def _kinds(lang: Lang) -> _Kinds:
    found = _KINDS.get(lang.name)
    if found is None:
        found = _KINDS[lang.name] = _Kinds(lang)
    return found


def _walk(node: ts.Node, data: bytes, kinds: _Kinds) -> _Piece:
    """The leaves under `node` (atomic nodes as one), positions relative to it."""
    base = node.start_byte
    chunk = data[base : node.end_byte]
    ascii = chunk.isascii()
    names, atomic, comment = kinds.names, kinds.atomic, kinds.comment
    spans: list[tuple[int, int, int]] = []  # (kind, start byte, end byte), absolute, in text order
    add = spans.append
    if node.child_count == 0 or node.kind_id in atomic:
        add((node.kind_id, node.start_byte, node.end_byte))
    else:
        cursor = node.walk()
        first, nxt, up = cursor.goto_first_child, cursor.goto_next_sibling, cursor.goto_parent
        first()
        while True:
            n = cursor.node
            assert n is not None  # the cursor stands on a node of the tree
            if n.kind_id not in atomic and first():
                continue
            add((n.kind_id, n.start_byte, n.end_byte))
            if nxt():
                continue
            while up() and cursor.depth:
                if nxt():
                    break
            else:
                break
    # line starts of the unit, so each row is one bisect (in C) instead of a count per token
    breaks = [0]
    pos = chunk.find(b"\n")
    while pos != -1:
        breaks.append(pos + 1)
        pos = chunk.find(b"\n", pos + 1)
    text = chunk.decode("utf-8", "replace")
    done = [0, 0]  # (byte, char) reached so far: offsets grow, so each byte is decoded once

    def to_char(b: int) -> int:
        if b < done[0]:
            return len(chunk[:b].decode("utf-8", "replace"))
        done[1] += len(chunk[done[0] : b].decode("utf-8", "replace"))
        done[0] = b
        return done[1]

    strings: list[str] = []
    knames: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    rows: list[int] = []
    end_rows: list[int] = []
    comments: list[tuple[int, int, int, int, str]] = []
    multi = len(breaks) > 1
    for kid, s, e in spans:
        s -= base
        e -= base
        if e <= s:
            continue
        if kid in comment:
            piece = chunk[s:e].rstrip(b"\r\n")  # a Rust line comment ends with its newline
            e = s + len(piece)
            cs, ce = to_char(s), to_char(e)
            row = bisect_right(breaks, s) - 1 if multi else 0
            last = bisect_right(breaks, e - 1) - 1 if multi else 0
            comments.append((cs, ce, row, last, text[cs:ce]))
            continue
        cs, ce = (s, e) if ascii else (to_char(s), to_char(e))
        token = text[cs:ce]
        if token.isspace():
            continue
        strings.append(token)
        knames.append(names[kid] if kid < len(names) else "ERROR")  # ERROR's id is past the grammar's kinds
        starts.append(cs)
        ends.append(ce)
        if multi:
            row = bisect_right(breaks, s) - 1
            rows.append(row)
            end_rows.append(row if "\n" not in token else bisect_right(breaks, e - 1) - 1)
        else:
            rows.append(0)
            end_rows.append(0)
    return _Piece(strings, knames, starts, ends, rows, end_rows, comments)


def _piece(node: ts.Node, src: Source, kinds: _Kinds) -> _Piece:
    key = (src.lang.name, src.data[node.start_byte : node.end_byte])
    with _lock:
        found = _CACHE.get(key)
        if found is not None:
            _CACHE.move_to_end(key)
            return found
    found = _walk(node, src.data, kinds)
    with _lock:
        if key not in _CACHE:
            _CACHE[key] = found
            _CACHE_BYTES[0] += len(key[1])
            while _CACHE_BYTES[0] > MAX_CACHE_BYTES and _CACHE:
                old, _ = _CACHE.popitem(last=False)
                _CACHE_BYTES[0] -= len(old[1])
    return found


def clear_cache() -> None:
    with _lock:
        _CACHE.clear()
        _CACHE_BYTES[0] = 0


def _units(node: ts.Node, kinds: _Kinds, out: list[ts.Node]) -> None:
    """Split `node` into cacheable units: children of any node larger than CHUNK_BYTES."""
    for child in node.children:
        if child.end_byte - child.start_byte > CHUNK_BYTES and child.child_count and child.kind_id not in kinds.atomic:
            _units(child, kinds, out)
        else:
            out.append(child)


def lex(src: Source) -> LangLexed:
    """The token stream of a parsed text (cached on the Source)."""
    cached = src.__dict__.get("_lexed")
    if cached is not None:
        return cached
    kinds = _kinds(src.lang)
    root = src.tree.root_node
    units: list[ts.Node] = []
    if root.child_count:
        _units(root, kinds, units)
    strings: list[str] = []
    knames: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    rows: list[int] = []
    end_rows: list[int] = []
    comments: list[tuple[int, str]] = []
    spans: list[tuple[int, int]] = []
    comment_end_rows: list[int] = []
    for unit in units:
        p = _piece(unit, src, kinds)
        row0 = unit.start_point.row + 1
        c0 = src.char(unit.start_byte)
        strings += p.strings
        knames += p.kinds
        if c0:
            starts += [s + c0 for s in p.starts]
            ends += [e + c0 for e in p.ends]
        else:
            starts += p.starts
            ends += p.ends
        rows += [r + row0 for r in p.rows]
        end_rows += [r + row0 for r in p.end_rows]
        for cs, ce, r, er, t in p.comments:
            comments.append((r + row0, t))
            spans.append((cs + c0, ce + c0))
            comment_end_rows.append(er + row0)
    lexed = LangLexed(strings, rows, end_rows, comments, True, knames, starts, ends, spans, comment_end_rows)
    src.__dict__["_lexed"] = lexed
    return lexed
