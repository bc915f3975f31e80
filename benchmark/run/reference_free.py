"""The reference-free excess of one passing completion: which of its units the tests need (ddmin over the
units, `server.fidelity.judge.ddmin`, each try a sandbox run) and how far the completion goes beyond the smallest
sub-edit the tests accept. The step `bench run --necessity` runs for every passing completion of a suite with
hidden tests; the studies (`benchmark.studies`) measure it against the gold-based excess."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Any

from server.fidelity.judge.ddmin import edits_by_unit, find_needed_units, reference_free_excess, sub_edit
from server.fidelity.judge.parts import new_parts, without_parts

VARIANT = "no_comments"  # the paper's distance (SPEC 3.1)

Passes = Callable[[str], Awaitable[bool | None]]  # the tests on one version of the document


async def reference_free_metrics(
    before: str,
    completion: str,
    passes: Passes,
    *,
    max_runs: int = 32,
    parallel: int = 2,
    full_passed: bool | None = None,
    statements: bool = False,
) -> dict[str, Any]:
    """Which hunks of `completion` the tests need, and the reference-free excess it gives: a flat
    metrics dict (`necessity_status`, `necessity_runs`, `hunks`, `needed_hunks`, `unnecessary_hunks`,
    `d_min`, `excess_ref_free`; distances normalised, no_comments). `full_passed`: the whole
    completion's verdict when already known (saves one run). `statements`: a second ddmin over the new
    statements of the needed units (`server.fidelity.judge.parts`, what `analyzeNecessity` runs), with the
    runs left, so that an extra statement inside the unit that holds the fix counts as excess too
    (`parts`, `needed_parts` in the metrics)."""
    edits = edits_by_unit(before, completion)

    async def check(keep: frozenset[int]) -> bool | None:
        return await passes(sub_edit(before, edits, keep))

    known: dict[frozenset[int], bool | None] | None = (
        {frozenset(range(len(edits))): full_passed} if full_passed is not None else None
    )
    res = await find_needed_units(len(edits), check, max_runs=max_runs, parallel=parallel, known=known)
    metrics: dict[str, Any] = {
        "necessity_status": res.status,
        "necessity_runs": res.runs,
        "hunks": res.hunks,
        "needed_hunks": res.needed,
        "unnecessary_hunks": res.unnecessary,
        "d_min": None,
        "excess_ref_free": None,
    }
    if res.status in ("minimal", "budget"):
        minimal = sub_edit(before, edits, res.needed)
        if statements:
            minimal, metrics["parts"], metrics["needed_parts"] = await _statement_stage(
                before, minimal, passes, max_runs=max(max_runs - res.runs, 0), parallel=parallel
            )
        est = await asyncio.to_thread(reference_free_excess, before, completion, minimal)
        metrics["d_min"] = est.d_min[VARIANT].normalized
        metrics["excess_ref_free"] = est.excess[VARIANT]
    return metrics


def pooled_excess(rows: Sequence[tuple[Hashable, float, float]]) -> list[float]:
    """The `pooled` reference-free excess of each (problem, d(M, C), D_min) row: d(M, C) less the smallest
    D_min among the rows of the same problem. Where several passing completions of one problem are known
    (a replay's samples, backends side by side), a completion the tests need whole but that changes more
    than another one's smallest passing sub-edit shows that difference as excess; with one completion it is
    the own estimate."""
    floor: dict[Hashable, float] = {}
    for key, _, d_min in rows:
        floor[key] = min(floor.get(key, d_min), d_min)
    return [distance - floor[key] for key, distance, _ in rows]


async def _statement_stage(
    before: str, minimal: str, passes: Passes, *, max_runs: int, parallel: int
) -> tuple[str, int, list[int]]:
    """The minimal passing text without the new statements the tests pass without (each left as `pass`)."""
    parts = new_parts(before, minimal)
    if not parts or max_runs < 1:
        return minimal, len(parts), list(range(len(parts)))
    every = frozenset(range(len(parts)))

    async def check(keep: frozenset[int]) -> bool | None:
        return await passes(without_parts(minimal, parts, every - keep))

    res = await find_needed_units(len(parts), check, max_runs=max_runs, parallel=parallel, known={every: True})
    if res.status not in ("minimal", "budget"):
        return minimal, len(parts), sorted(every)
    return without_parts(minimal, parts, every - set(res.needed)), len(parts), list(res.needed)
