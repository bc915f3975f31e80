"""The necessity study's records and figures: one `StudyItem` per analysed completion, the correlation
of the reference-free and the gold-based excess (Pearson, Spearman with average ranks), the agreement
table, and the text and HTML renderings (`benchmark.studies.necessity.study` runs the study).

Two reference-free estimates are measured, each by its name:
- `own` (the published one): d(M, C) - D_min(M), D_min(M) the smallest sub-edit of M itself that the
  tests accept;
- `pooled`: d(M, C) - min D_min over every analysed completion of the same problem (all runs and
  instructions). It needs several passing completions of one problem (a replay with samples, backends
  compared side by side): an edit is measured against the smallest one the tests accept among them, so a
  completion that is all needed but larger than another model's fix shows its excess too."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from benchmark.report.html import scatter
from benchmark.run import reference_free
from benchmark.run.reference_free import VARIANT


class StudyItem(msgspec.Struct, kw_only=True):
    """One analysed candidate edit."""

    source: str  # overedit | canitedit
    task_id: str
    condition: str  # overedit: the extra hunks' kinds; canitedit: run/kind
    sample: int = 0
    hunks: int = 0
    status: str = "error"  # minimal | budget | full_fails | unresolved | no_hunks | error
    needed: list[int] = []
    unnecessary: list[int] = []
    runs: int = 0
    distance: float | None = None  # d(M, C)
    gold_distance: float | None = None  # d(G, C)
    d_min: float | None = None
    excess_gold: float | None = None  # d(M, C) - d(G, C)
    excess_ref_free: float | None = None  # d(M, C) - D_min
    excess_code: float | None = None  # CanItEdit: missing lines / Differ lines of this completion
    error: str | None = None  # why the item has no estimate


# -- figures ---------------------------------------------------------------------------------------
def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    if len(xs) < 3:
        return None
    try:
        return statistics.correlation(xs, ys)
    except statistics.StatisticsError:  # a constant series has no correlation
        return None


def _ranks(xs: Sequence[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # ties share their mean rank
        i = j + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    return pearson(_ranks(xs), _ranks(ys)) if len(xs) >= 3 else None


def _pairs(
    items: Sequence[StudyItem],
    other: Callable[[StudyItem], float | None],
    estimate: Callable[[StudyItem], float | None] = lambda i: i.excess_ref_free,
) -> list[tuple[float, float]]:
    """(reference-free excess, other) for the items that have both."""
    out = []
    for i in items:
        ref, y = estimate(i), other(i)
        if ref is not None and y is not None:
            out.append((ref, y))
    return out


def pooled_excess(items: Sequence[StudyItem]) -> dict[int, float]:
    """The `pooled` estimate of each analysed item (keyed by its index in `items`), pooled over the
    analysed items of the same source and task."""
    done = [(n, i) for n, i in enumerate(items) if i.d_min is not None and i.distance is not None]
    rows = [((i.source, i.task_id), _num(i.distance), _num(i.d_min)) for _, i in done]
    return {n: e for (n, _), e in zip(done, reference_free.pooled_excess(rows), strict=True)}


def _pooled_row(items: Sequence[StudyItem]) -> dict[str, Any]:
    pooled = pooled_excess(items)
    at = {id(i): pooled.get(n) for n, i in enumerate(items)}
    pairs = _pairs(items, lambda i: i.excess_gold, lambda i: at[id(i)])
    est, gold = _xy(pairs)
    sizes = Counter(i.task_id for n, i in enumerate(items) if n in pooled)
    return {
        "n": len(pairs),
        "problems": len(sizes),
        "single": sum(v == 1 for v in sizes.values()),  # problems where pooled is the own estimate
        "pearson": pearson(est, gold),
        "spearman": spearman(est, gold),
        "mae": statistics.fmean(abs(a - b) for a, b in pairs) if pairs else None,
    }


def _num(v: float | None) -> float:
    assert v is not None
    return v


def _xy(pairs: Sequence[tuple[float, float]]) -> tuple[list[float], list[float]]:
    return [a for a, _ in pairs], [b for _, b in pairs]


def _agreement(pairs: Sequence[tuple[float, float]]) -> dict[str, Any]:
    return {
        "n": len(pairs),
        "exact": sum(math.isclose(a, b, abs_tol=1e-12) for a, b in pairs) / len(pairs) if pairs else None,
        "mae": statistics.fmean(abs(a - b) for a, b in pairs) if pairs else None,
    }


def summarise(items: Sequence[StudyItem], extras: Sequence[str] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for source in sorted({i.source for i in items}):
        mine = [i for i in items if i.source == source]
        pairs = _pairs(mine, lambda i: i.excess_gold)
        ref, gold = _xy(pairs)
        runs = [i.runs for i in mine if i.status in ("minimal", "budget", "full_fails", "unresolved")]
        row: dict[str, Any] = {
            "candidates": len(mine),
            "analysed": len(pairs),
            "statuses": dict(Counter(i.status for i in mine)),
            "pearson": pearson(ref, gold),
            "spearman": spearman(ref, gold),
            "mae": statistics.fmean(abs(a - b) for a, b in pairs) if pairs else None,
            "exact": sum(math.isclose(a, b, abs_tol=1e-12) for a, b in pairs) / len(pairs) if pairs else None,
            "mean_excess_ref_free": statistics.fmean(ref) if pairs else None,
            "mean_excess_gold": statistics.fmean(gold) if pairs else None,
            "ref_free_below_gold": sum(a < b - 1e-12 for a, b in pairs),
            "ref_free_above_gold": sum(a > b + 1e-12 for a, b in pairs),
            "mean_runs": statistics.fmean(runs) if runs else None,
            "max_runs": max(runs, default=None),
            "budget_hit": sum(i.status == "budget" for i in mine),
            "pooled": _pooled_row(mine),
        }
        coded = [
            i for i in mine if i.excess_ref_free is not None and i.excess_gold is not None and i.excess_code is not None
        ]
        if coded:
            codes = [100.0 * _num(i.excess_code) for i in coded]
            refs, golds = [_num(i.excess_ref_free) for i in coded], [_num(i.excess_gold) for i in coded]
            row["excess_code_n"] = len(coded)
            row["pearson_ref_free_vs_excess_code"] = pearson(refs, codes)
            row["spearman_ref_free_vs_excess_code"] = spearman(refs, codes)
            row["pearson_gold_vs_excess_code"] = pearson(golds, codes)
            row["spearman_gold_vs_excess_code"] = spearman(golds, codes)
            # MAE on the same scale: ExcessCode of one completion as a fraction (missing / Differ lines)
            row["mae_ref_free_vs_excess_code"] = statistics.fmean(
                abs(r - c / 100.0) for r, c in zip(refs, codes, strict=True)
            )
            row["mae_gold_vs_excess_code"] = statistics.fmean(
                abs(g - c / 100.0) for g, c in zip(golds, codes, strict=True)
            )
        # constructed over-edits: agreement per set of extra hunks (a consistent rename spans hunks)
        groups = {f"only {kind}": [i for i in mine if i.condition == kind] for kind in extras}
        groups["with rename_local"] = [i for i in mine if "rename_local" in i.condition.split("+")]
        groups["without rename_local"] = [
            i for i in mine if set(i.condition.split("+")) <= set(extras) - {"rename_local"}
        ]
        if any(groups.values()):
            row["by_extra"] = {k: _agreement(_pairs(v, lambda i: i.excess_gold)) for k, v in groups.items()}
        out[source] = row
    _against_gold_minimum(items, out)
    return out


def _against_gold_minimum(items: Sequence[StudyItem], out: dict[str, Any]) -> None:
    """With the gold edits analysed (source `gold`): how many gold edits hold changes the tests do not
    need, and how many completions change less than the gold's own minimal sub-edit (a negative
    gold-based excess that no estimate from the completion can see)."""
    gold = {i.task_id: i for i in items if i.source == "gold" and i.d_min is not None and i.distance is not None}
    if not gold or "gold" not in out:
        return
    golds = [i for i in items if i.source == "gold" and i.excess_ref_free is not None]
    out["gold"]["untested"] = sum(_num(i.excess_ref_free) > 1e-12 for i in golds)
    mine = [i for i in items if i.source == "canitedit" and i.distance is not None and i.task_id in gold]
    if "canitedit" in out and mine:
        out["canitedit"]["below_gold_minimum"] = sum(
            _num(i.distance) < _num(gold[i.task_id].d_min) - 1e-12 for i in mine
        )
        out["canitedit"]["with_gold_minimum"] = len(mine)
        out["canitedit"]["decomposition"] = decompose(mine, gold)


DECOMPOSITION_TERMS = ("own", "necessary_difference", "gold_untested")


def decompose(completions: Sequence[StudyItem], gold: dict[str, StudyItem]) -> dict[str, Any]:
    """Each completion's gold-based excess is the sum of three terms:
    d(M,C) - d(G,C) = [d(M,C) - D_min(M)] + [D_min(M) - D_min(G)] + [D_min(G) - d(G,C)],
    what the tests do not need of M (`own`), how much larger M's needed part is than the gold's
    (`necessary_difference`: another solution, not an over-edit) and the gold's own untested part.
    Only the first is seen without the gold. The row gives each term's Spearman with the gold-based
    excess and its share of the variance, and two ceilings: the estimate that knew D_min(G), and the one
    that takes the smallest passing sub-edit known for the problem (the gold's among the completions')."""
    done = [i for i in completions if i.d_min is not None and i.excess_gold is not None and i.task_id in gold]
    if len(done) < 3:
        return {"n": len(done)}
    excess = [_num(i.excess_gold) for i in done]
    floor = {t: _num(g.d_min) for t, g in gold.items()}
    smallest = dict(floor)
    for i in done:
        smallest[i.task_id] = min(smallest[i.task_id], _num(i.d_min))
    terms = {
        "own": [_num(i.distance) - _num(i.d_min) for i in done],
        "necessary_difference": [_num(i.d_min) - floor[i.task_id] for i in done],
        "gold_untested": [floor[i.task_id] - _num(gold[i.task_id].distance) for i in done],
    }
    spread = statistics.pvariance(excess)
    return {
        "n": len(done),
        "terms": {
            k: {"spearman": spearman(v, excess), "variance_share": statistics.pvariance(v) / spread if spread else None}
            for k, v in terms.items()
        },
        "knowing_gold_minimum": spearman([_num(i.distance) - floor[i.task_id] for i in done], excess),
        "smallest_known_floor": spearman([_num(i.distance) - smallest[i.task_id] for i in done], excess),
    }


def _f(v: Any, nd: int = 3) -> str:
    return "-" if v is None else f"{v:.{nd}f}" if isinstance(v, float) else str(v)


def render_text(summary: dict[str, Any], settings: dict[str, Any]) -> str:
    lines = [
        (
            f"reference-free excess (d(M,C) - D_min) against gold-based excess (d(M,C) - d(G,C)), {VARIANT} "
            f"token distance; max {settings['max_runs']} sandbox runs per analysis"
        ),
        (
            f"{'source':<10} {'cands':>5} {'analysed':>8} {'pearson':>8} {'spearman':>8} {'MAE':>8} {'exact':>6} "
            f"{'ref<gold':>8} {'ref>gold':>8} {'runs':>6} {'max':>4} {'budget':>6}"
        ),
    ]
    for source, r in summary.items():
        lines.append(
            f"{source:<10} {r['candidates']:>5} {r['analysed']:>8} {_f(r['pearson']):>8} {_f(r['spearman']):>8} "
            f"{_f(r['mae'], 4):>8} {_f(r['exact'], 2):>6} {r['ref_free_below_gold']:>8} "
            f"{r['ref_free_above_gold']:>8} {_f(r['mean_runs'], 1):>6} {_f(r['max_runs']):>4} "
            f"{r['budget_hit']:>6}"
        )
    for source, r in summary.items():
        lines.append(
            f"{source}: statuses {r['statuses']}; mean excess ref-free {_f(r['mean_excess_ref_free'], 4)}, "
            f"gold {_f(r['mean_excess_gold'], 4)}"
        )
        if "untested" in r:
            lines.append(
                f"{source}: {r['untested']} of {r['analysed']} gold edits hold changes the tests do not need "
                f"(mean {_f(r['mean_excess_ref_free'], 4)} of the distance)"
            )
        if "below_gold_minimum" in r:
            lines.append(
                f"{source}: {r['below_gold_minimum']} of {r['with_gold_minimum']} completions change less than "
                f"the gold edit's own minimal sub-edit"
            )
        d = r.get("decomposition")
        if d and "terms" in d:
            t = d["terms"]
            lines.append(
                f"{source}: gold-based excess = own + necessary difference + gold untested (n={d['n']}): "
                + ", ".join(
                    f"{k.replace('_', ' ')} spearman {_f(t[k]['spearman'])} (variance share "
                    f"{_f(t[k]['variance_share'], 2)})"
                    for k in DECOMPOSITION_TERMS
                )
            )
            lines.append(
                f"{source}: d(M,C) - a floor, spearman: the gold's D_min as the floor {_f(d['knowing_gold_minimum'])}, "
                f"the smallest passing sub-edit known (the gold's included) {_f(d['smallest_known_floor'])}"
            )
        p = r.get("pooled")
        if p and p["single"] < p["problems"]:  # else pooled is the own estimate everywhere
            lines.append(
                f"{source}: pooled (d(M,C) - the smallest D_min of the problem's analysed completions): "
                f"n={p['n']} over {p['problems']} problems ({p['single']} with one completion), pearson "
                f"{_f(p['pearson'])}, spearman {_f(p['spearman'])}, MAE {_f(p['mae'], 4)}"
            )
        if "excess_code_n" in r:
            lines.append(
                f"{source}: against ExcessCode (n={r['excess_code_n']}): pearson ref-free "
                f"{_f(r['pearson_ref_free_vs_excess_code'])}, gold-based {_f(r['pearson_gold_vs_excess_code'])}; "
                f"spearman ref-free {_f(r['spearman_ref_free_vs_excess_code'])}, gold-based "
                f"{_f(r['spearman_gold_vs_excess_code'])}; MAE (ExcessCode as a fraction) ref-free "
                f"{_f(r['mae_ref_free_vs_excess_code'], 4)}, gold-based {_f(r['mae_gold_vs_excess_code'], 4)}"
            )
        for kind, a in (r.get("by_extra") or {}).items():
            lines.append(f"{source}: {kind}: n={a['n']}, exact agreement {_f(a['exact'], 2)}, MAE {_f(a['mae'], 4)}")
    return "\n".join(lines)


def render_html(summary: dict[str, Any], items: Sequence[StudyItem], text: str) -> str:
    import html

    plots = []
    for source in summary:
        mine = [i for i in items if i.source == source]
        done = [i for i in mine if i.excess_ref_free is not None and i.excess_gold is not None]
        plots.append(
            scatter(
                f"{source}: reference-free vs gold-based excess",
                [("", i.excess_gold, i.excess_ref_free) for i in done],  # type: ignore[misc]
                "gold-based excess",
                "reference-free excess",
            )
        )
        pooled = pooled_excess(mine)
        plots.append(
            scatter(
                f"{source}: pooled reference-free vs gold-based excess",
                [
                    ("", i.excess_gold, pooled[n])
                    for n, i in enumerate(mine)
                    if n in pooled and i.excess_gold is not None
                ],
                "gold-based excess",
                "pooled reference-free excess",
            )
        )
        coded = [i for i in done if i.excess_code is not None]
        if coded:
            plots.append(
                scatter(
                    f"{source}: reference-free excess vs ExcessCode",
                    [("", 100.0 * i.excess_code, i.excess_ref_free) for i in coded],  # type: ignore[misc, operator]
                    "ExcessCode (x100)",
                    "reference-free excess",
                )
            )
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>necessity study</title>'
        f"<style>body{{font-family:sans-serif;margin:2em}}svg{{margin:8px;border:1px solid #eee}}</style></head>"
        f"<body><h1>Reference-free excess: validity study</h1><pre>{html.escape(text)}</pre>"
        f"<div>{''.join(plots)}</div></body></html>\n"
    )
