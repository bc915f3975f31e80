"""Top-level chunks: a module analysed piece by piece, each piece cached by its text.

A top-level statement is independent of its neighbours for tokenising, parsing, unparsing and every
complexity count we use, so a file is split at lines that start a top-level statement and each chunk
is analysed on its own (and only once: chunks are cached by text). Editing one function of a
10,000-line file then re-analyses that one function. Splitting is validated, not trusted: a chunk that
does not parse is merged with the next one, and a file that cannot be split falls back to one chunk.
"""

from __future__ import annotations

import ast
import hashlib
import re
import threading
from collections import OrderedDict, deque
from functools import cached_property
from typing import NamedTuple

from radon.raw import analyze as radon_raw
from radon.visitors import ComplexityVisitor, HalsteadVisitor

from server.fidelity.text import complexity, pyast
from server.fidelity.text.cache import ByteLRU, register
from server.fidelity.text.normalize import strip_comments_fallback
from server.fidelity.text.rawmetrics import RawMetrics, raw_metrics
from server.fidelity.text.structure import Structure, bound_names
from server.fidelity.text.tokens import Lexed, lex
from server.fidelity.text.unparse import unparse

# Lines that look like a new statement at column 0 but continue the previous one.
_CONTINUATION = re.compile(r"(?:else|elif|except|finally)\b|[)\]}]")
_MAX_MERGES = 16
# Below this many lines one chunk is cheaper than many: per-chunk parse and visitor set-up dominate.
MIN_SPLIT_LINES = 150


class ChunkFacts(NamedTuple):
    """What the complexity metrics and the unit classifier need from a chunk's syntax tree."""

    structure: Structure
    paper_cognitive: int
    cyclomatic: tuple[int, dict[int, int]]  # radon's total and per-function values by `def` line
    halstead: tuple[frozenset, frozenset, int, int]  # radon's operators/operands seen, and their counts


class Chunk:
    """One piece of source analysed standalone; rows are relative to the chunk (1-based).

    Syntax trees are not kept: thousands of cached AST nodes make every garbage collection slower
    (measured: more than half the time of a 5-candidate scoring run). What is needed later is taken
    from the tree at once, or the text is parsed again (0.1 ms for a typical function) on demand.
    """

    def __init__(self, text: str, first: bool) -> None:
        self.text = text
        self.first = first  # holds the module's first statement: a string there is the module docstring
        stmts = self._parse()
        self._tree: list[ast.stmt] | None = stmts
        _hold_tree(self)
        self.has_statements = bool(stmts)
        self.separator = statement_separator(stmts[0]) if stmts else ""
        # Depth of the first FunctionDef in `ast.walk` order (the paper's function), None without one.
        self.function_depth = _first_function_depth(stmts) if stmts else None
        self.normalized = self._normalize(stmts)

    def _parse(self) -> list[ast.stmt] | None:
        try:
            stmts = pyast.parse(self.text, quiet=True).body  # invalid escapes in user code: not our warnings
            self.parse_error: str | None = None
            return stmts
        except SyntaxError as exc:
            self.parse_error = f"line {exc.lineno}: {exc.msg}"
        except (ValueError, RecursionError, MemoryError) as exc:
            self.parse_error = f"{type(exc).__name__}: {exc}"
        return None

    @property
    def parses(self) -> bool:
        return self.parse_error is None

    def statements(self) -> list[ast.stmt]:
        """The syntax tree of a chunk that parses: still held if the chunk is recent, else parsed again."""
        stmts = self._tree
        if stmts is None:
            stmts = self._parse()
        assert stmts is not None, "statements() of a chunk that does not parse"
        return stmts

    def _normalize(self, stmts: list[ast.stmt] | None) -> str:
        """`ast.unparse` of the chunk's statements joined as in a module (no leading separator)."""
        if stmts is None:
            return strip_comments_fallback(self.text) if self.text.strip() else self.text
        parts: list[str] = []
        for index, stmt in enumerate(stmts):
            if index:
                parts.append(statement_separator(stmt))
            if index == 0 and self.first and _is_string_expr(stmt):
                parts.append(unparse(ast.Module(body=[stmt], type_ignores=[])))
            else:
                parts.append(unparse(stmt))
        return "".join(parts)

    @cached_property
    def lexed(self) -> Lexed:
        return lex(self.text)

    @cached_property
    def normalized_lexed(self) -> Lexed:
        if not self.parses and self.lexed.ok:
            return self.lexed  # the tokenize round trip of the paper's fallback keeps the token list
        normalized = self.normalized
        if normalized == self.text:
            return self.lexed  # already in unparse form: nothing to tokenise again
        if normalized == self.text.rstrip("\n") and self.lexed.strings[-1:] == ["\n"]:
            # unparse form plus trailing line breaks: the same tokens, but the last NEWLINE is ""
            return self.lexed._replace(strings=[*self.lexed.strings[:-1], ""])
        return lex(normalized)

    @cached_property
    def facts(self) -> ChunkFacts:
        stmts = self.statements() if self.parses else []
        module = ast.Module(body=stmts, type_ignores=[])
        visitor = ComplexityVisitor.from_ast(module)
        per_function = {b.lineno: b.complexity for b in visitor.functions}
        for cls in visitor.classes:
            per_function.update((m.lineno, m.complexity) for m in cls.methods)
        halstead = HalsteadVisitor.from_ast(module)
        return ChunkFacts(
            structure=Structure().visit_module(stmts, first=self.first),
            paper_cognitive=sum(complexity.paper_cognitive(s) for s in stmts),
            cyclomatic=(visitor.total_complexity, per_function),
            halstead=(
                frozenset(halstead.operators_seen),
                frozenset(halstead.operands_seen),
                halstead.operators,
                halstead.operands,
            ),
        )

    @cached_property
    def bound_names(self) -> set[str]:
        return bound_names(self.statements()) if self.parses else set()

    @cached_property
    def raw_metrics(self) -> RawMetrics | None:
        """radon's sloc/lloc/comments/multi of the chunk (radon's own analyzer where our rules may differ)."""
        fast = raw_metrics(self.text, self.lexed)
        if fast is not None:
            return fast
        try:
            raw = radon_raw(self.text)
        except (SyntaxError, ValueError, IndexError):
            return None
        return RawMetrics(sloc=raw.sloc, lloc=raw.lloc, comments=raw.comments, multi=raw.multi)

    @cached_property
    def sonar(self) -> tuple[int, dict[int, int]] | None:
        if not self.parses:
            return None
        key = hashlib.blake2b(self.text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        with _sonar_lock:
            if key in _sonar_memo:
                _sonar_memo.move_to_end(key)
                return _sonar_memo[key]
        found = complexity.sonar_cognitive(self.text)
        with _sonar_lock:
            _sonar_memo[key] = found
            while len(_sonar_memo) > _SONAR_MEMO:
                _sonar_memo.popitem(last=False)
        return found


# complexipy (8.3) leaks ~64 bytes per function each time a new result's `.functions` is read, so a
# chunk analysed again (its cache entry released when its document closed) must not ask it again:
# the small scores stay here by a digest of the chunk text, bounded by count (~350 bytes each).
_SONAR_MEMO = 16384
_sonar_memo: OrderedDict[bytes, tuple[int, dict[int, int]] | None] = OrderedDict()
_sonar_lock = threading.Lock()


# The trees of the most recent chunks stay held, so a full report right after the chunk was made
# does not parse again; older chunks drop theirs (see the Chunk docstring for why).
_HELD_TREES = 64
_held: deque[Chunk] = deque()
_held_lock = threading.Lock()


def _hold_tree(piece: Chunk) -> None:
    with _held_lock:
        _held.append(piece)
        while len(_held) > _HELD_TREES:
            _held.popleft()._tree = None


def _first_function_depth(stmts: list[ast.stmt]) -> int | None:
    level: list[ast.AST] = list(stmts)
    depth = 1
    while level:
        if any(isinstance(node, ast.FunctionDef) for node in level):
            return depth
        level = [child for node in level for child in ast.iter_child_nodes(node)]
        depth += 1
    return None


def statement_separator(stmt: ast.stmt) -> str:
    """What `ast.unparse` puts before a statement that is not the module's first."""
    return "\n\n" if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else "\n"


def _is_string_expr(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


# ~100 bytes per cached character (tokens, rows, normalised text and its tokens; measured with
# tracemalloc on CanItEdit-sized files) plus the objects' fixed part.
CHUNK_BYTES_PER_CHAR = 100
CHUNK_BYTES_FIXED = 1500
CHUNK_CACHE: ByteLRU[tuple[str, bool], Chunk] = register(
    ByteLRU(
        "chunks",
        lambda key: Chunk(*key),
        lambda key: CHUNK_BYTES_PER_CHAR * len(key[0]) + CHUNK_BYTES_FIXED,
        max_entries=4096,
        share=0.75,
    )
)


def chunk(text: str, first: bool) -> Chunk:
    return CHUNK_CACHE.get((text, first))


def clear_cache() -> None:
    CHUNK_CACHE.clear()
    with _sonar_lock:
        _sonar_memo.clear()


chunk.cache_clear = clear_cache  # type: ignore[attr-defined]  # the lru_cache spelling cold benchmarks use
chunk.cache = CHUNK_CACHE  # type: ignore[attr-defined]


def _candidate_starts(lines: list[str]) -> list[int]:
    starts = [0]
    for index in range(1, len(lines)):
        line = lines[index]
        if line and line[0] not in " \t\f\r\n#" and not _CONTINUATION.match(line):
            starts.append(index)
    return starts


def split_chunks(text: str) -> list[tuple[int, Chunk]]:
    """(first row, chunk) pairs covering the text, rows 1-based in tokenize's (\\n-separated) lines."""
    lines = _split_newlines(text)
    if len(lines) < MIN_SPLIT_LINES:
        return [(1, chunk(text, True))]
    starts = _candidate_starts(lines)
    if len(starts) == 1:
        return [(1, chunk(text, True))]
    starts.append(len(lines))
    result: list[tuple[int, Chunk]] = []
    seen_statement = False
    i = 0
    merges = 0
    while i < len(starts) - 1:
        j = i + 1
        piece = chunk("".join(lines[starts[i] : starts[j]]), not seen_statement)
        while not piece.parses and j < len(starts) - 1 and merges < _MAX_MERGES:
            j += 1
            merges += 1
            piece = chunk("".join(lines[starts[i] : starts[j]]), not seen_statement)
        if not piece.parses:
            return [(1, chunk(text, True))]
        result.append((starts[i] + 1, piece))
        seen_statement = seen_statement or piece.has_statements
        i = j
    return result


def _split_newlines(text: str) -> list[str]:
    # tokenize splits on \n only; str.splitlines would also split on \r, \f, \x1c and more.
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
