"""Everything the core derives from one text, computed once and cached.

An editor compares many candidate edits against the same original and a benchmark compares every
sample against the same task, so per-text facts are cached (`analyze`). Below that, a text is a list
of top-level chunks (`chunks.py`), each cached by its own text, so a small edit to a large file only
re-analyses the chunk it touched; the per-text facts here are assembled from the chunks.
"""

from __future__ import annotations

import ast
import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from functools import cached_property
from typing import Protocol

from radon.metrics import mi_compute

from server.fidelity.text import pyast
from server.fidelity.text.cache import ByteLRU, current_owner, register
from server.fidelity.text.chunks import CHUNK_CACHE, Chunk, split_chunks
from server.fidelity.text.normalize import body_by_regex, body_start_line, first_function
from server.fidelity.text.rawmetrics import RawMetrics
from server.fidelity.text.structure import Structure
from server.fidelity.text.tokens import Lexed, lex

_LONE_CR = re.compile(r"\r(?!\n)")
_LINE_BREAK_AFTER = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")
_NEWLINES = ("\n", "\r\n", "")


def split_lines(text: str) -> list[str]:
    """Lines as LSP sees them (\\n, \\r\\n or \\r end a line), each with its line ending."""
    if not text:
        return []
    if "\r" in text:
        lines = _LINE_BREAK_AFTER.split(text)
    else:
        lines = [line + "\n" for line in text.split("\n")]
        lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    return lines


def _concat(parts: list[tuple[int, Lexed]]) -> Lexed:
    """Join chunk token streams, moving each chunk's rows by its offset."""
    if len(parts) == 1 and parts[0][0] == 0:
        return parts[0][1]
    strings: list[str] = []
    rows: list[int] = []
    end_rows: list[int] = []
    comments: list[tuple[int, str]] = []
    for offset, lexed in parts:
        strings.extend(lexed.strings)
        if offset:
            rows.extend([r + offset for r in lexed.rows])
            end_rows.extend([r + offset for r in lexed.end_rows])
            comments.extend((r + offset, c) for r, c in lexed.comments)
        else:
            rows.extend(lexed.rows)
            end_rows.extend(lexed.end_rows)
            comments.extend(lexed.comments)
    return Lexed(strings, rows, end_rows, comments, all(lx.ok for _, lx in parts))


class _Strings(Protocol):
    @property
    def strings(self) -> list[str]: ...


class _TokenRows(Protocol):
    """What `token_span` and `tokens_in` read of an analysis (Python's or another language's)."""

    @property
    def token_rows(self) -> tuple[list[int], list[int]]: ...

    @property
    def lexed(self) -> _Strings: ...

    def token_span(self, first: int, last: int) -> tuple[int, int]: ...


def token_span(self: _TokenRows, first: int, last: int) -> tuple[int, int]:
    """Index range of the raw tokens that overlap lines first..last (1-based, inclusive); a method of
    every analysis (Python's and the other languages') over its `token_rows`."""
    if last < first:
        return 0, 0
    rows, end_rows = self.token_rows
    return bisect_left(end_rows, first), bisect_right(rows, last)


def tokens_in(self: _TokenRows, first: int, last: int) -> list[str]:
    lo, hi = self.token_span(first, last)
    return self.lexed.strings[lo:hi] if hi > lo else []


class Analysis:
    """The per-text facts. Cheap parts are computed eagerly, the rest on first use."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.chunks: list[tuple[int, Chunk]] = split_chunks(text)
        errors = [c.parse_error for _, c in self.chunks if c.parse_error]
        self.parse_error: str | None = errors[0] if errors else None
        self.parses = self.parse_error is None
        # tokenize counts only \n as a line break; LSP also counts a lone \r. Map rows when they differ.
        self.line_map: list[int] | None = _row_map(text) if "\r" in text and _LONE_CR.search(text) else None

    @cached_property
    def lexed(self) -> Lexed:
        return _concat([(row - 1, c.lexed) for row, c in self.chunks])

    # -- distance variants -------------------------------------------------------------------
    @cached_property
    def _normalized_parts(self) -> list[tuple[int, Chunk]]:
        """(row offset in the normalised text, chunk) for each chunk with statements."""
        if not self.parses:
            return [(0, self.chunks[0][1])]
        parts: list[tuple[int, Chunk]] = []
        next_row = 1
        for _, c in self.chunks:
            if not c.has_statements:
                continue
            if parts:
                next_row += c.separator.count("\n")
            parts.append((next_row - 1, c))
            next_row += c.normalized.count("\n")
        return parts

    @cached_property
    def normalized(self) -> str:
        """The paper's `standardize_code_formatting` of the text."""
        if not self.text.strip():
            return self.text
        parts = self._normalized_parts
        if not self.parses:
            return parts[0][1].normalized
        return "".join((c.separator if i else "") + c.normalized for i, (_, c) in enumerate(parts))

    @cached_property
    def normalized_tokens(self) -> list[str]:
        """Tokens of the normalised text, joined from the chunks' own (no positions: none are needed)."""
        if not self.text.strip():
            return self.lexed.strings
        parts = self._normalized_parts
        if len(parts) == 1:
            return parts[0][1].normalized_lexed.strings
        strings: list[str] = []
        for number, (_, c) in enumerate(parts):
            strings.extend(c.normalized_lexed.strings)
            if number < len(parts) - 1:
                # A chunk tokenised alone ends with NEWLINE ""; inside the module that NEWLINE is "\n".
                if not strings or strings[-1] != "":
                    return lex(self.normalized).strings
                strings[-1] = "\n"
        return strings

    @cached_property
    def body_tokens(self) -> list[str]:
        """Tokens of the paper's `extract_function_body` of the text."""
        if not self.parses:
            return lex(body_by_regex(self.normalized)).strings
        found = self._first_function_chunk()
        if found is None:
            return lex(body_by_regex(self.normalized)).strings
        offset, piece = found
        start = _top_level_body_start(piece) if piece.function_depth == 1 else None
        top_level = start is not None
        if start is None:
            # Within its chunk the paper's function is also the first FunctionDef in walk order, so the
            # chunk's normalised text can be searched the same way.
            func = first_function(pyast.parse(piece.normalized))
            assert func is not None
            start = body_start_line(ast.Module(body=[func], type_ignores=[]))
            top_level = func.col_offset == 0
        if start == 0:
            return []
        assert start is not None
        if top_level:
            # A top-level function: tokenising the slice gives exactly the tail of the full token list.
            before = sum(len(c.normalized_lexed.strings) for o, c in self._normalized_parts if o < offset)
            return self.normalized_tokens[before + bisect_left(piece.normalized_lexed.rows, start) :]
        return lex("\n".join(self.normalized.splitlines()[start + offset - 1 :])).strings

    def _first_function_chunk(self) -> tuple[int, Chunk] | None:
        """The chunk holding the paper's function: the first `FunctionDef` in `ast.walk` order.

        `ast.walk` goes level by level, so that is the chunk whose first FunctionDef is shallowest,
        the earliest such chunk on a tie.
        """
        found = [(c.function_depth, n) for n, (_, c) in enumerate(self._normalized_parts) if c.function_depth]
        return self._normalized_parts[min(found)[1]] if found else None

    def variant_tokens(self, variant: str) -> list[str]:
        if variant == "raw":
            return self.lexed.strings
        if variant == "no_comments":
            return self.normalized_tokens
        if variant == "body_no_comments":
            return self.body_tokens
        raise ValueError(f"unknown distance variant {variant!r}")

    # -- lines and tokens ------------------------------------------------------------------
    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    @cached_property
    def token_rows(self) -> tuple[list[int], list[int]]:
        """Per raw token its first and last LSP line (1-based)."""
        lexed = self.lexed
        if self.line_map is None:
            return lexed.rows, lexed.end_rows
        m = self.line_map
        return [m[r] for r in lexed.rows], [m[r] for r in lexed.end_rows]

    token_span = token_span
    tokens_in = tokens_in

    def comments_in(self, first: int, last: int) -> list[str]:
        m = self.line_map
        return [c for row, c in self.lexed.comments if first <= (m[row] if m else row) <= last]

    @cached_property
    def name_counts(self) -> Counter[str]:
        return Counter(s for s in self.lexed.strings if s.isidentifier())

    @cached_property
    def identifiers(self) -> frozenset[str]:
        return frozenset(self.name_counts)

    # -- structure -------------------------------------------------------------------------
    @cached_property
    def structure(self) -> Structure:
        if len(self.chunks) == 1:
            return self.chunks[0][1].facts.structure
        merged = Structure()
        for row, c in self.chunks:
            merged.extend_shifted(c.facts.structure, row - 1)
        return merged

    @cached_property
    def bound_names(self) -> frozenset[str]:
        return frozenset().union(*(c.bound_names for _, c in self.chunks))

    # -- complexity ------------------------------------------------------------------------
    @cached_property
    def paper_cognitive(self) -> int | None:
        return sum(c.facts.paper_cognitive for _, c in self.chunks) if self.parses else None

    def _per_function(
        self, scores: list[tuple[int, dict[int, int]] | None], base: int
    ) -> tuple[int, dict[int, int]] | None:
        """Whole-file total and per-function values (lines moved to file lines) from per-chunk scores.

        `base` is what every chunk's total counts on its own (radon starts each module at 1).
        """
        if not self.parses or any(s is None for s in scores):
            return None
        total = base
        per_function: dict[int, int] = {}
        for (row, _), score in zip(self.chunks, scores):
            assert score is not None
            total += score[0] - base
            per_function.update((line + row - 1, value) for line, value in score[1].items())
        return total, per_function

    @cached_property
    def sonar(self) -> tuple[int, dict[int, int]] | None:
        """complexipy's file total and per-function values keyed by first line (decorators included)."""
        return self._per_function([c.sonar for _, c in self.chunks] if self.parses else [], 0)

    @cached_property
    def cyclomatic(self) -> tuple[int, dict[int, int]] | None:
        """radon's total cyclomatic complexity and per-function values keyed by `def` line."""
        return self._per_function([c.facts.cyclomatic for _, c in self.chunks] if self.parses else [], 1)

    @cached_property
    def raw_metrics(self) -> RawMetrics | None:
        """radon's raw line counts; additive over chunks, which never split a logical line."""
        parts = [c.raw_metrics for _, c in self.chunks]
        if any(p is None for p in parts):
            return None
        return RawMetrics(*(sum(values) for values in zip(*parts)))

    @cached_property
    def maintainability(self) -> float | None:
        """radon's maintainability index, multi-line strings counted as comments (`radon mi -m`)."""
        if not self.parses or self.cyclomatic is None or self.raw_metrics is None:
            return None
        raw = self.raw_metrics
        operators_seen: set = set()
        operands_seen: set = set()
        operators = operands = 0
        for _, c in self.chunks:
            chunk_operators, chunk_operands, operator_count, operand_count = c.facts.halstead
            operators_seen |= chunk_operators
            operands_seen |= chunk_operands
            operators += operator_count
            operands += operand_count
        vocabulary = len(operators_seen) + len(operands_seen)
        volume = (operators + operands) * math.log2(vocabulary) if vocabulary else 0
        comments = (raw.comments + raw.multi) / float(raw.sloc) * 100 if raw.sloc else 0
        value = mi_compute(volume, self.cyclomatic[0], raw.lloc, comments)
        return None if math.isnan(value) else round(value, 2)


def _top_level_body_start(piece: Chunk) -> int | None:
    """`body_start_line` of a chunk whose paper function is a top-level statement, read from the tokens
    of its normalised text instead of parsing that text again; None where the tokens cannot tell.

    In `ast.unparse` output a top-level `def` starts its line at column 0, its body is indented on the
    following lines, and a docstring is one unprefixed (or `u`) string token alone on its line."""
    strings, rows = piece.normalized_lexed.strings, piece.normalized_lexed.rows
    lines = piece.normalized.split("\n")
    n = len(strings)
    for i, token in enumerate(strings):
        if token == "def" and (i == 0 or strings[i - 1] in _NEWLINES) and lines[rows[i] - 1].startswith("def"):
            break
    else:
        return None
    j = next((k for k in range(i, n) if strings[k] in _NEWLINES), n) + 1  # the body's first token
    if j >= n:
        return None
    doc = strings[j]
    if (
        not (doc[:1] in "'\"" or (doc[:1] == "u" and doc[1:2] in "'\""))
        or j + 1 >= n
        or strings[j + 1] not in _NEWLINES
    ):
        return rows[i]  # no docstring: the slice starts at the `def` line
    k = j + 2  # the token after the docstring's line
    if k >= n or not lines[rows[k] - 1][:1].isspace():
        return 0  # only a docstring
    if strings[k] == "@":
        return None  # a decorated statement's line is its `def`, not the decorator's
    return rows[k]


def _row_map(text: str) -> list[int]:
    """tokenize row (1-based, \\n-separated) -> LSP line (1-based)."""
    mapping = [0]
    lsp_line = 1
    for chunk_text in text.split("\n"):
        mapping.append(lsp_line)
        lsp_line += len(_LONE_CR.findall(chunk_text)) + 1
    mapping.append(lsp_line)
    return mapping


# ~40 bytes per character: the whole text's token lists joined from its chunks (the chunks' own
# facts are counted in their cache).
ANALYSIS_BYTES_PER_CHAR = 40
ANALYSIS_CACHE: ByteLRU[str, Analysis] = register(
    ByteLRU("analyses", Analysis, lambda text: ANALYSIS_BYTES_PER_CHAR * len(text) + 2000, max_entries=256, share=0.25)
)


def analyze(text: str) -> Analysis:
    found = ANALYSIS_CACHE.get(text)
    if current_owner() is not None:  # a hit: its chunks belong to this owner too
        for _, c in found.chunks:
            CHUNK_CACHE.touch((c.text, c.first))
    return found


analyze.cache_clear = ANALYSIS_CACHE.clear  # type: ignore[attr-defined]  # the lru_cache spelling benchmarks use
