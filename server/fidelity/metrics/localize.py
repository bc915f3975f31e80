"""Keeping the damage of a side that does not parse to the statements around it.

The paper's distance tokenises a whole text with `str.split()` when tokenize raises, and normalises
nothing when it does not parse, so one missing bracket makes a one-character edit look like a rewrite.
Here a text is cut at its top-level statements (lines that start at column 0) and each piece is
tokenised and normalised alone: only the broken pieces fall back. The result is a separate figure
(`localized_distance`); the paper-compatible `distance` keeps the paper's definition.
"""

from __future__ import annotations

import re
from functools import lru_cache

from server.fidelity.metrics.distance import token_distance
from server.fidelity.text import pyast
from server.fidelity.text.analysis import Analysis
from server.fidelity.text.normalize import strip_comments_fallback
from server.fidelity.text.structure import FunctionInfo, Structure
from server.fidelity.text.tokens import _PSEUDO, lex
from server.fidelity.text.unparse import unparse
from server.protocol.report import Distance

_CONTINUATION = re.compile(r"(?:else|elif|except|finally|case)\b|[)\]}]")
_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.MULTILINE)


def pieces(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each top-level piece; a decorator stays with what it decorates."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for i in range(1, len(lines)):
        line = lines[i]
        if (
            line[:1] not in ("", " ", "\t", "\f", "\r", "\n", "#")
            and not _CONTINUATION.match(line)
            and not lines[i - 1].startswith("@")
        ):
            starts.append(i)
    starts.append(len(lines))
    return [(starts[k] + 1, "".join(lines[starts[k] : starts[k + 1]])) for k in range(len(starts) - 1)]


@lru_cache(maxsize=1024)
def _piece(text: str, first: bool) -> tuple[bool, tuple[str, ...], tuple[str, ...], Structure | None]:
    """(parses, raw tokens, normalised tokens, structure) of one piece."""
    lexed = lex(text)
    raw = lexed.strings if lexed.ok else _scan(text)
    try:
        stmts = pyast.parse(text, quiet=True).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        stripped = lex(strip_comments_fallback(text))
        return False, tuple(raw), tuple(stripped.strings if stripped.ok else _scan(strip_comments_fallback(text))), None
    normalized = "\n".join(unparse(s) for s in stmts)
    return True, tuple(raw), tuple(lex(normalized).strings), Structure().visit_module(stmts, first=first)


def _scan(text: str) -> list[str]:
    """Tokens of text tokenize rejects (an unclosed bracket or string): the tokenizer's own token
    pattern applied line by line, which never fails, instead of `str.split()`."""
    if _PSEUDO is None:
        return text.split()
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        pos = 0
        while pos < len(line):
            m = _PSEUDO.match(line, pos)
            if not m or m.end() == pos:
                if not line[pos].isspace():
                    out.append(line[pos])
                pos += 1
                continue
            start, end = m.span(1)
            pos = m.end()
            token = line[start:end]
            if token and not token.startswith("#") and token not in ("\\\n", "\\"):
                out.append("\n" if token in ("\n", "\r\n") else token)
    return out


def _joined(parts: list[tuple[str, ...]]) -> list[str]:
    out: list[str] = []
    for part in parts:
        if out and out[-1] == "":
            out[-1] = "\n"  # a piece tokenised alone ends with NEWLINE ""; inside the file it is "\n"
        out.extend(part)
    return out


def _tokens(text: str) -> tuple[list[str], list[str]]:
    facts = [_piece(t, n == 0) for n, (_, t) in enumerate(pieces(text))]
    return _joined([f[1] for f in facts]), _joined([f[2] for f in facts if f[2]])


def localized_distances(a: Analysis, b: Analysis) -> dict[str, Distance]:
    raw_a, norm_a = _tokens(a.text)
    raw_b, norm_b = _tokens(b.text)
    return {"raw": token_distance(raw_a, raw_b), "no_comments": token_distance(norm_a, norm_b)}


def broken_functions(a: Analysis) -> dict[str, FunctionInfo | None]:
    """Functions of a text that does not parse: from the pieces that parse (with their lines), and
    None for each `def` found in a piece that does not."""
    found: dict[str, FunctionInfo | None] = {}
    for n, (line, text) in enumerate(pieces(a.text)):
        ok, _, _, structure = _piece(text, n == 0)
        if ok and structure is not None:
            shifted = Structure()
            shifted.extend_shifted(structure, line - 1)
            for f in shifted.functions:
                found[f.qualname] = f
            continue
        cls: str | None = None
        for m in _DEF.finditer(text):
            indent, kind, name = m.groups()
            if not indent:
                cls = name if kind == "class" else None
                if kind == "def":
                    found.setdefault(name, None)
            elif kind == "def" and cls:
                found.setdefault(f"{cls}.{name}", None)
    return found
