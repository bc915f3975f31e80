"""`LangAnalysis`: the language layer behind the surface of `server.fidelity.text.analysis.Analysis`, so the
unit code (which reads `text`, `lines`, `lexed`, `token_rows`, `token_span`, `tokens_in`,
`comments_in`, `line_map`, `parses`, `parse_error`, `structure`, `bound_names`, `variant_tokens`,
`cyclomatic`, `sonar`) can take a JavaScript or Java text without a fork.

Differences a caller must know: `lexed` is a `LangLexed` (the Python `Lexed` fields first, plus node
types and character intervals); there are no NEWLINE tokens; `paper_cognitive` and
`maintainability` are None (the paper's metric and radon's index exist for Python only); `sonar`
is SonarSource's cognitive complexity from `complexity.py`, keyed by each function's first line
like complexipy's; `structure.docstrings` are the doc comments' line ranges.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections import Counter, OrderedDict
from functools import cached_property

import server.fidelity.lang.distance as distance
import server.fidelity.lang.facts as facts
from server.fidelity.lang.functions import file_complexity, functions
from server.fidelity.lang.lex import LangLexed, lex
from server.fidelity.lang.parse import Source, parse
from server.fidelity.lang.table import Lang
from server.fidelity.text.analysis import token_span, tokens_in
from server.fidelity.text.structure import FunctionInfo, Structure

_LONE_CR = re.compile(r"\r(?!\n)")
_LINE_BREAK_AFTER = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def _split_lines(text: str) -> list[str]:
    """Lines as LSP sees them (\\n, \\r\\n or \\r end a line), each with its line ending."""
    if not text:
        return []
    lines = _LINE_BREAK_AFTER.split(text) if "\r" in text else [line + "\n" for line in text.split("\n")]
    if "\r" not in text:
        lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    return lines


def _row_map(text: str) -> list[int]:
    """Row counting `\\n` only (1-based) -> LSP line (1-based), for a text with lone `\\r`."""
    mapping = [0]
    line = 1
    for piece in text.split("\n"):
        mapping.append(line)
        line += len(_LONE_CR.findall(piece)) + 1
    mapping.append(line)
    return mapping


class LangAnalysis:
    """Per-text facts of a non-Python text; cheap parts eagerly, the rest on first use."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.lang: Lang = source.lang
        self.text = source.text
        errors = source.errors
        self.parses = not errors
        first = errors[0] if errors else None
        self.parse_error: str | None = (
            None
            if first is None
            else (
                f"line {first.start_line}: missing {first.missing!r}"
                if first.missing
                else f"lines {first.start_line}-{first.end_line}: syntax error"
            )
        )
        self.line_map: list[int] | None = (
            _row_map(self.text) if "\r" in self.text and _LONE_CR.search(self.text) else None
        )

    @cached_property
    def lexed(self) -> LangLexed:
        return lex(self.source)

    @cached_property
    def lines(self) -> list[str]:
        return _split_lines(self.text)

    @cached_property
    def _lsp_starts(self) -> list[int]:
        starts = [0]
        for line in self.lines:
            starts.append(starts[-1] + len(line))
        return starts

    def _lsp_line(self, offset: int) -> int:
        return bisect_right(self._lsp_starts, offset)

    @cached_property
    def token_rows(self) -> tuple[list[int], list[int]]:
        """Per token its first and last LSP line (1-based); with lone `\r` from the character offsets
        (tree-sitter, like Python's tokenize, ends lines at `\n` only)."""
        lexed = self.lexed
        if self.line_map is None:
            return lexed.rows, lexed.end_rows
        line = self._lsp_line
        return [line(s) for s in lexed.starts], [line(max(e - 1, s)) for s, e in zip(lexed.starts, lexed.ends)]

    token_span = token_span
    tokens_in = tokens_in

    def comments_in(self, first: int, last: int) -> list[str]:
        if self.line_map is None:
            return [c for row, c in self.lexed.comments if first <= row <= last]
        return [
            c
            for (_, c), (s, _) in zip(self.lexed.comments, self.lexed.comment_spans)
            if first <= self._lsp_line(s) <= last
        ]

    def variant_tokens(self, variant: str) -> list[str]:
        return distance.variant_tokens(self.source, variant)

    @cached_property
    def name_counts(self) -> Counter[str]:
        ids = self.lang.identifiers
        return Counter(s for s, k in zip(self.lexed.strings, self.lexed.kinds) if k in ids)

    @cached_property
    def identifiers(self) -> frozenset[str]:
        return frozenset(self.name_counts)

    @cached_property
    def bound_names(self) -> frozenset[str]:
        return frozenset(b.name for b in facts.bindings(self.source))

    def _line(self, row: int) -> int:
        """An LSP line for a `\n`-counted row (its first LSP line when lone `\r` split it)."""
        return self.line_map[row] if self.line_map else row

    @cached_property
    def structure(self) -> Structure:
        """Functions, doc comments, imports and guards, in the Python path's `Structure`."""
        s = Structure()
        ln = self._line
        for f in functions(self.source):
            s.functions.append(
                FunctionInfo(
                    f.qualname, ln(f.start), ln(f.def_line), ln(f.end), ln(f.signature_end), f.signature, f.cognitive
                )
            )
        s.docstrings.extend((ln(c.start_line), ln(c.end_line)) for c in facts.comments(self.source) if c.doc)
        s.imports.extend((ln(i.start_line), ln(i.end_line)) for i in facts.imports(self.source))
        s.guards.extend((ln(g.start_line), ln(g.end_line), g.description) for g in facts.guards(self.source))
        return s

    @cached_property
    def cyclomatic(self) -> tuple[int, dict[int, int]]:
        """File total (per outermost function) and per-function values keyed by the name's line."""
        return file_complexity(self.source)[0], {self._line(f.def_line): f.cyclomatic for f in functions(self.source)}

    @cached_property
    def sonar(self) -> tuple[int, dict[int, int]]:
        """SonarSource cognitive complexity: file total and per-function values keyed by first line."""
        return file_complexity(self.source)[1], {self._line(f.start): f.cognitive for f in functions(self.source)}

    paper_cognitive: int | None = None
    maintainability: float | None = None


_lock = threading.Lock()
_CACHE: OrderedDict[tuple[str, str], LangAnalysis] = OrderedDict()
MAX_ANALYSES = 64


def analyze_lang(text: str, lang: Lang, previous: LangAnalysis | None = None) -> LangAnalysis:
    """The analysis of `text` (cached by language and text); `previous` makes the parse incremental."""
    key = (lang.name, text)
    with _lock:
        found = _CACHE.get(key)
        if found is not None:
            _CACHE.move_to_end(key)
            return found
    found = LangAnalysis(parse(text, lang, previous.source if previous is not None else None))
    with _lock:
        _CACHE[key] = found
        while len(_CACHE) > MAX_ANALYSES:
            _CACHE.popitem(last=False)
    return found
