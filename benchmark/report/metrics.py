"""The metrics every suite's summary shares: pass@k exactly as SPEC 3.3 (upstream pass_k.py), means,
and the record grouping. CanItEdit's ExcessCode is `benchmark.suites.canitedit.metrics`.

Sums are exact (`math.fsum`), so a summary does not depend on the order its records were written in.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmark.run.records import SampleRecord


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
