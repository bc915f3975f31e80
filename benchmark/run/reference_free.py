"""The reference-free excess of one passing completion: which of its units the tests need (ddmin over the
units, `server.fidelity.judge.ddmin`, each try a sandbox run) and how far the completion goes beyond the smallest
sub-edit the tests accept. The step `bench run --necessity` runs for every passing completion of a suite with
hidden tests; the studies (`benchmark.studies`) measure it against the gold-based excess."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from server.fidelity.judge.ddmin import edits_by_unit, find_needed_units, reference_free_excess, sub_edit

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
) -> dict[str, Any]:
    """Which hunks of `completion` the tests need, and the reference-free excess it gives: a flat
    metrics dict (`necessity_status`, `necessity_runs`, `hunks`, `needed_hunks`, `unnecessary_hunks`,
    `d_min`, `excess_ref_free`; distances normalised, no_comments). `full_passed`: the whole
    completion's verdict when already known (saves one run)."""
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
        est = await asyncio.to_thread(reference_free_excess, before, completion, sub_edit(before, edits, res.needed))
        metrics["d_min"] = est.d_min[VARIANT].normalized
        metrics["excess_ref_free"] = est.excess[VARIANT]
    return metrics
