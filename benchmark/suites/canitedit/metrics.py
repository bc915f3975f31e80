"""CanItEdit's ExcessCode, exactly as SPEC 3.3 (upstream evaluator).

Two modes. `compat` (the published one, `excess_code`) counts the missing lines the way CanItEdit's
evaluator reads them from `coverage report -m`: each range of the Missing column counts every line
number inside it, so a non-statement line (blank, `else:`, a comment) between two missing statements
counts as missing. `strict` (`excess_code_strict`) counts missing statements only.
Sums are exact (`math.fsum`), so a summary does not depend on the order its records were written in.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence


def differ_lines(before: str, completion: str) -> int:
    """Lines of `difflib.Differ().compare(...)` over the two texts' lines (unchanged, -, +, ? alike)."""
    return sum(1 for _ in difflib.Differ().compare(before.splitlines(), completion.splitlines()))


def completion_missing(missing: Iterable[int], completion: str) -> list[int]:
    """The missing line numbers that fall inside the completion part of `completion + "\\n" + tests`."""
    n = len(completion.splitlines())
    return sorted(m for m in missing if 1 <= m <= n)


def report_ranges(statements: Iterable[int], missing: Iterable[int]) -> list[tuple[int, int]]:
    """The ranges of the `Missing` column of `coverage report -m` (coverage.py's `_line_ranges`):
    consecutive missing statements, where only statements count as breaking a run."""
    lines = sorted(set(missing))
    pairs: list[tuple[int, int]] = []
    start: int | None = None
    end = 0
    i = 0
    for stmt in sorted(set(statements) | set(lines)):
        if i >= len(lines):
            break
        if stmt == lines[i]:
            i += 1
            if start is None:
                start = stmt
            end = stmt
        elif start is not None:
            pairs.append((start, end))
            start = None
    if start is not None:
        pairs.append((start, end))
    return pairs


def report_missing_lines(statements: Iterable[int], missing: Iterable[int]) -> list[int]:
    """Missing lines as CanItEdit's evaluator reads them: every line number inside each range of
    `coverage report -m` ("15-22" counts lines 15 to 22, a blank line or an `else:` in between too)."""
    return [n for a, b in report_ranges(statements, missing) for n in range(a, b + 1)]


def excess_code(missing: Sequence[int], before: str, completion: str) -> float:
    """Excess of one passing completion: missing lines / Differ lines (0 when there is no line at all)."""
    total = differ_lines(before, completion)
    return len(missing) / total if total else 0.0


def suite_excess_code(per_problem: Sequence[Sequence[float]]) -> float | None:
    """ExcessCode: per problem the mean over its passing completions; the mean over problems with at
    least one passing completion, times 100 (None when no problem has one)."""
    means = [math.fsum(xs) / len(xs) for xs in per_problem if xs]
    return 100.0 * math.fsum(means) / len(means) if means else None
