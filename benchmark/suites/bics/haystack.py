"""BICS haystacks: the paper's builder, deterministic with a seed.

The paper's `build_bug_string`, step by step: draw clean snippets until the numbered text reaches
`length * depth` tokens and drop the last one if it went over; append the bug snippet; then draw
snippets while the count taken before the bug snippet is below `length`, dropping the one that reaches
it. Snippets are joined with one blank line and every line is numbered `f"{n:<width}| {line}"`.
The label is the paper's formula: the lines before the bug snippet, plus the blank line, plus the
bug's line inside its snippet.

Bugs come from the paper's pre-bugged snippets (`dataset`, the published procedure) or from our own
inserters applied to a clean snippet (`inserted`, each bug verified by the interpreter's SyntaxError
line). Each haystack has its own random generator, seeded from (seed, source, length, depth, trial),
so any cell can be rebuilt alone, in any order, on any machine.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec

from benchmark.suites.bics import BUG_TYPES
from benchmark.suites.bics.inserters import insert_bug
from benchmark.suites.bics.snippets import SnippetTable
from benchmark.suites.bics.tokens import NumberedCounter

SOURCES = ("dataset", "inserted")
PAPER_LENGTHS = (500, 1000, 2000, 4000, 8000, 15500)
PAPER_DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)
PAPER_TRIALS = 25
MAX_BUG_DRAWS = 2000  # snippets tried for an inserted bug before the type counts as impossible


class HaystackError(ValueError):
    pass


class Grid(msgspec.Struct, frozen=True, kw_only=True):
    """Which haystacks a run asks about: the paper's 6 x 5 grid, 25 trials per cell, by default."""

    lengths: tuple[int, ...] = PAPER_LENGTHS
    depths: tuple[float, ...] = PAPER_DEPTHS
    trials: int = PAPER_TRIALS
    seed: int = 0
    bug_types: tuple[str, ...] = BUG_TYPES

    def __post_init__(self) -> None:
        if not self.lengths or any(n < 1 for n in self.lengths):
            raise HaystackError(f"target lengths must be positive token counts, got {list(self.lengths)}")
        if not self.depths or any(not 0.0 <= d <= 1.0 for d in self.depths):
            raise HaystackError(f"target depths must lie in [0, 1], got {list(self.depths)}")
        if self.trials < 1:
            raise HaystackError(f"trials per cell must be >= 1, got {self.trials}")
        unknown = [b for b in self.bug_types if b not in BUG_TYPES]
        if unknown or not self.bug_types:
            raise HaystackError(f"unknown bug types {unknown}; known: {', '.join(BUG_TYPES)}")


class Haystack(msgspec.Struct, frozen=True, kw_only=True):
    code: str  # the snippets joined with one blank line: the document the server opens
    numbered: str  # what the model sees inside <context>
    label_line: int  # 1-based line of the bug in `code` (and in `numbered`)
    bug_type: str
    tokens: int  # cl100k_base tokens of `numbered`
    next_tokens: int | None  # the count with the snippet dropped for reaching the target (None: none dropped)
    target_length: int
    target_depth: float
    trial: int
    seed: int
    source: str  # dataset | inserted
    snippet_rows: list[int]  # table rows of the snippets, in order
    bug_index: int  # position of the bug snippet in `snippet_rows`
    bug_snippet: str  # the bug snippet as inserted
    bug_line_in_snippet: int


def number_lines(text: str) -> str:
    """The paper's `number_lines`: each line as `f"{n:<width}| {line}"`, width of the largest number."""
    lines = text.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{i + 1:<{width}}| {line}" for i, line in enumerate(lines))


def rng_for(seed: int, source: str, length: int, depth: float, trial: int) -> random.Random:
    # a str seed is hashed with SHA-512: the same stream in every process (unlike hash())
    return random.Random(f"bics:{seed}:{source}:{length}:{depth!r}:{trial}")


def _bug_snippet(table: SnippetTable, source: str, bug_type: str, rng: random.Random) -> tuple[int, str, int]:
    """(row, buggy code, bug line) for one bug of `bug_type`."""
    if source == "dataset":
        pool = table.with_bug(bug_type)
        if not pool:
            raise HaystackError(f"the snippet table has no pre-bugged {bug_type} snippet")
        s = pool[rng.randrange(len(pool))]
        pre = s.bugged[bug_type]
        return s.row, pre.code, pre.line
    for _ in range(MAX_BUG_DRAWS):
        s = table.snippets[rng.randrange(len(table.snippets))]
        bugged = insert_bug(s.code, bug_type, rng)
        if bugged is not None:
            return s.row, bugged.code, bugged.line
    raise HaystackError(f"no snippet in {MAX_BUG_DRAWS} draws takes a verified {bug_type} bug")


def build(
    table: SnippetTable,
    *,
    length: int,
    depth: float,
    trial: int = 0,
    seed: int = 0,
    source: str = "dataset",
    bug_type: str | None = None,
    bug_types: Sequence[str] = BUG_TYPES,
) -> Haystack:
    """One haystack; `bug_type` None draws one of `bug_types` as the paper does (uniformly)."""
    if source not in SOURCES:
        raise HaystackError(f"unknown bug source {source!r}; known: {', '.join(SOURCES)}")
    if not table.snippets:
        raise HaystackError("no clean snippets to build a haystack from")
    rng = rng_for(seed, source, length, depth, trial)
    if bug_type is None:
        bug_type = rng.choice(list(bug_types))
    pool = table.snippets
    counter = NumberedCounter()
    chosen: list[tuple[int, str]] = []  # (row, code)
    line_counts: list[int] = []  # lines in `counter` after each chosen snippet

    def add(row: int, code: str) -> int:
        counter.extend(([""] if chosen else []) + code.splitlines())
        chosen.append((row, code))
        line_counts.append(len(counter.lines))
        return counter.total

    def drop_last() -> int:
        chosen.pop()
        line_counts.pop()
        counter.truncate(line_counts[-1] if line_counts else 0)
        return counter.total

    total = 0
    while total < length * depth:
        s = pool[rng.randrange(len(pool))]
        total = add(s.row, s.code)
    if total > length * depth:
        total = drop_last()

    row, bug_code, bug_line = _bug_snippet(table, source, bug_type, rng)
    before = len(counter.lines)
    add(row, bug_code)
    bug_index = len(chosen) - 1
    # the paper leaves its count at the value before the bug snippet until the next draw
    next_tokens = None
    while total < length:
        s = pool[rng.randrange(len(pool))]
        total = add(s.row, s.code)
        if total >= length:
            next_tokens = total
            total = drop_last()
            break

    code = "\n\n".join(c for _, c in chosen)
    # the paper's label: lines before the bug snippet (count of "\n" in their numbered text), plus the
    # two line breaks joining it, plus its own bug line
    label = max(before - 1, 0) + bug_line + (2 if bug_index > 0 else 0)
    return Haystack(
        code=code,
        numbered=number_lines(code),
        label_line=label,
        bug_type=bug_type,
        tokens=counter.total,
        next_tokens=next_tokens,
        target_length=length,
        target_depth=depth,
        trial=trial,
        seed=seed,
        source=source,
        snippet_rows=[r for r, _ in chosen],
        bug_index=bug_index,
        bug_snippet=bug_code,
        bug_line_in_snippet=bug_line,
    )
