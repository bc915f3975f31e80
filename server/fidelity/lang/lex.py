"""Tokens of a parsed text: the leaves of its tree, comments kept aside, literals as one token.

`LangLexed` starts with the five fields of `server.fidelity.tokens.Lexed` (same names, same order,
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
from collections import OrderedDict
from typing import NamedTuple

import tree_sitter as ts

from server.fidelity.lang.parse import Source, language
from server.fidelity.lang.table import Lang
from server.fidelity.tokens import Lexed

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
MAX_CACHE_BYTES = 16 * 1024 * 1024  # of source bytes; the tokens cost ~40x that


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
    text = chunk.decode("utf-8", "replace")
    strings: list[str] = []
    knames: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    comments: list[tuple[int, int, int, int, str]] = []
    names, atomic, comment = kinds.names, kinds.atomic, kinds.comment
    cursor = node.walk()
    first, nxt, up = cursor.goto_first_child, cursor.goto_next_sibling, cursor.goto_parent
    spans: list[tuple[int, int, int]] = []  # (kind, rel start byte, rel end byte) in order
    add = spans.append
    if node.child_count == 0 or node.kind_id in atomic:
        add((node.kind_id, 0, node.end_byte - base))
    elif first():
        while True:
            n = cursor.node
            kid = n.kind_id
            if kid not in atomic and first():
                continue
            s, e = n.start_byte - base, n.end_byte - base
            if e > s:
                add((kid, s, e))
            done = False
            while not nxt():
                if not up() or cursor.depth == 0:
                    done = True
                    break
            if done:
                break
    # rows and character offsets in one pass over the unit's text
    row = 0
    pos = 0
    if ascii:
        def to_char(b: int) -> int:
            return b
    else:
        def to_char(b: int) -> int:
            return len(chunk[:b].decode("utf-8", "replace"))
    rows: list[int] = []
    end_rows: list[int] = []
    for kid, s, e in spans:
        row += chunk.count(b"\n", pos, s)
        start_row = row
        piece = chunk[s:e]
        inner = piece.count(b"\n")
        if kid in comment:
            body = piece.rstrip(b"\r\n")  # a Rust line comment ends with its newline
            last = start_row + body.count(b"\n")
            cs, ce = to_char(s), to_char(s + len(body))
            comments.append((cs, ce, start_row, last, text[cs:ce] if ascii else body.decode("utf-8", "replace")))
        else:
            cs, ce = to_char(s), to_char(e)
            token = text[cs:ce] if ascii else piece.decode("utf-8", "replace")
            if not token.strip():
                row += inner
                pos = e
                continue
            strings.append(token)
            knames.append(names[kid])
            starts.append(cs)
            ends.append(ce)
            rows.append(start_row)
            end_rows.append(start_row + inner)
        row += inner
        pos = e
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
