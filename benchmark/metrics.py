"""CanItEdit metrics, exactly as SPEC 3.3 (upstream pass_k.py): pass@k and ExcessCode.

ExcessCode has two modes. `compat` (the published one, `excess_code`) counts the missing lines the way
CanItEdit's evaluator reads them from `coverage report -m`: each range of the Missing column counts
every line number inside it, so a non-statement line (blank, `else:`, a comment) between two missing
statements counts as missing. `strict` (`excess_code_strict`) counts missing statements only.

`by_condition`, `by_task` and `pass_counts` are the record grouping the suites' summaries share.
Sums are exact (`math.fsum`), so a summary does not depend on the order its records were written in.
"""

from __future__ import annotations

import difflib
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmark.records import SampleRecord


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k, 1 - C(n-c, k) / C(n, k), computed as a product (Chen et al. 2021)."""
    if n <= 0 or k <= 0:
        raise ValueError(f"pass@k needs n >= 1 and k >= 1 (n={n}, k={k})")
    if not 0 <= c <= n:
        raise ValueError(f"c must lie in [0, n] (n={n}, c={c})")
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples (n={n})")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


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


def mean(xs: Sequence[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def suite_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> float | None:
    """Mean pass@k over problems given as (n, c), times 100 (None without problems or with n < k)."""
    usable = [(n, c) for n, c in counts if n >= k]
    if not usable or len(usable) != len(counts):
        return None
    return 100.0 * math.fsum(pass_at_k(n, c, k) for n, c in usable) / len(usable)


def by_condition(records: Iterable[SampleRecord]) -> dict[str, list[SampleRecord]]:
    """The records of each condition, in their order."""
    out: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in records:
        out[r.condition].append(r)
    return dict(out)


def by_task(records: Iterable[SampleRecord]) -> dict[str, list[SampleRecord]]:
    """The records (samples) of each task, in their order."""
    out: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in records:
        out[r.task_id].append(r)
    return dict(out)


def pass_counts(per_task: Mapping[str, Sequence[SampleRecord]]) -> list[tuple[int, int]]:
    """(samples, passing samples) of each task: what `suite_pass_at_k` takes."""
    return [(len(v), sum(r.passed for r in v)) for v in per_task.values()]


def suite_excess_code(per_problem: Sequence[Sequence[float]]) -> float | None:
    """ExcessCode: per problem the mean over its passing completions; the mean over problems with at
    least one passing completion, times 100 (None when no problem has one)."""
    means = [math.fsum(xs) / len(xs) for xs in per_problem if xs]
    return 100.0 * math.fsum(means) / len(means) if means else None
