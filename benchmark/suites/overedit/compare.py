"""`bench compare` within one run: the explicit condition against the generic one on matched tasks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from benchmark.report import metrics
from benchmark.run.records import SampleRecord
from benchmark.suites.overedit.summary import fmt, group, pct


def _signed_rank_p(diffs: Sequence[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank p-value, normal approximation with tie correction (zeros dropped)."""
    d = [x for x in diffs if x != 0]
    n = len(d)
    if n < 6:
        return None
    order = sorted(range(n), key=lambda i: abs(d[i]))
    ranks = [0.0] * n
    i = 0
    tie_term = 0.0
    while i < n:
        j = i
        while j + 1 < n and abs(d[order[j + 1]]) == abs(d[order[i]]):
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        t = j - i + 1
        tie_term += t**3 - t
        i = j + 1
    w_plus = sum(r for r, x in zip(ranks, d) if x > 0)
    mean = n * (n + 1) / 4
    var = n * (n + 1) * (2 * n + 1) / 24 - tie_term / 48
    if var <= 0:
        return None
    z = (w_plus - mean) / math.sqrt(var)
    return math.erfc(abs(z) / math.sqrt(2))


def compare_conditions(records: list[SampleRecord], base: str = "generic", other: str = "explicit") -> dict[str, Any]:
    """`other` against `base` for one backend: Pass@1 and means of each, and matched pairs (tasks whose
    repair passed under both) with the mean change of excess ELev and added CC and a signed-rank p-value."""

    def first_by_task(cond: str) -> dict[str, SampleRecord]:
        out: dict[str, SampleRecord] = {}
        for r in sorted(records, key=lambda r: r.sample):
            if r.condition == cond:
                out.setdefault(r.task_id, r)
        return out

    a, b = first_by_task(base), first_by_task(other)
    both = sorted(set(a) & set(b))
    pairs = [(a[t], b[t]) for t in both if a[t].passed and b[t].passed]

    def diffs(key: str) -> list[float]:
        return [
            y.metrics[key] - x.metrics[key]
            for x, y in pairs
            if x.metrics.get(key) is not None and y.metrics.get(key) is not None
        ]

    lev, cc = diffs("excess_lev"), diffs("added_cc")
    stats = {cond: group([r for r in records if r.condition == cond]) for cond in (base, other)}
    base_cc = stats[base]["added_cc"]
    return {
        "base": base,
        "other": other,
        "conditions": stats,
        "n_tasks_both": len(both),
        "n_pairs": len(pairs),
        "pass@1_change": (stats[other]["pass@1"] - stats[base]["pass@1"])
        if stats[other]["pass@1"] is not None and stats[base]["pass@1"] is not None
        else None,
        "excess_lev_change": metrics.mean(lev),
        "excess_lev_p": _signed_rank_p(lev),
        "added_cc_change": metrics.mean(cc),
        "added_cc_p": _signed_rank_p(cc),
        "added_cc_relative_change": (stats[other]["added_cc"] - base_cc) / base_cc
        if base_cc and stats[other]["added_cc"] is not None
        else None,
    }


def render_compare(cmp: dict[str, Any]) -> str:
    base, other = cmp["base"], cmp["other"]
    lines = [f"{'condition':<10} {'Pass@1':>7} {'ExcessLev':>9} {'AddedCC':>8} {'warned':>7} {'tasks':>6}"]
    for cond in (base, other):
        m = cmp["conditions"][cond]
        lines.append(
            f"{cond:<10} {fmt(m['pass@1']):>7} {fmt(m['excess_lev'], 4):>9} {fmt(m['added_cc']):>8} "
            f"{pct(m.get('flagged_warning_normalised_rate')):>7} {m['n_tasks']:>6}"
        )
    p = cmp["excess_lev_p"]
    lines.append(
        f"{other} - {base}: Pass@1 {fmt(cmp['pass@1_change'])}; over {cmp['n_pairs']} tasks passing under both: "
        f"excess ELev {fmt(cmp['excess_lev_change'], 4)} (signed-rank p {'-' if p is None else f'{p:.2g}'}), "
        f"added CC {fmt(cmp['added_cc_change'])}"
    )
    lines.append("warned: share of passing repairs with a unit at warning severity (normalised footing)")
    return "\n".join(lines)
