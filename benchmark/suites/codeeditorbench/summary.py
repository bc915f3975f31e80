"""Report sections: the run's summary per condition, its text table, and Win Rate across backends."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import msgspec

from benchmark.report import metrics
from benchmark.report.summary import flag_details
from benchmark.suites.codeeditorbench.kinds import CATEGORY_METRIC, kind_of
from benchmark.suites.codeeditorbench.scores import win_rate

if TYPE_CHECKING:
    from benchmark.run.records import RunConfig, SampleRecord


def _round(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


def _lang_means(passing: list[SampleRecord]) -> dict[str, Any]:
    """Means of the language-layer numbers of the passing C++/Java answers (empty when none)."""
    found = [f for r in passing if (f := (r.metrics or {}).get("lang_fidelity"))]
    if not found:
        return {}

    def mean(key: str) -> float | None:
        return metrics.mean([float(f[key]) for f in found if f.get(key) is not None])

    return {
        "lang_distance_mean": mean("distance"),
        "lang_excess_mean": mean("excess"),
        "cyclomatic_delta_mean": mean("cyclomatic_delta"),
        "cognitive_delta_mean": mean("cognitive_delta"),
        "added_cognitive_mean": mean("added_cognitive"),
        "n_lang": len(found),
    }


def summarise(config: RunConfig, records: list[SampleRecord]) -> dict[str, Any]:
    """conditions[cond]: pass@1 (a fraction, as the paper), n_tasks, n_samples, and for polish opt_score
    and opt_score_margin; details[cond]: verdict classes, outcomes, fidelity over passing edits, tasks."""
    by_cond = metrics.by_condition(records)
    conditions: dict[str, dict[str, Any]] = {}
    details: dict[str, dict[str, Any]] = {}
    for cond in config.conditions or sorted(by_cond):
        recs = by_cond.get(cond, [])
        per_task = metrics.by_task(recs)
        counts = metrics.pass_counts(per_task)
        n = min((c[0] for c in counts), default=0)
        p1 = metrics.suite_pass_at_k(counts, 1)
        row: dict[str, Any] = {
            "pass@1": _round(None if p1 is None else p1 / 100, 4),
            "n_tasks": len(per_task),
            "n_samples": n,
        }
        d: dict[str, Any] = {
            "pass@1_exact": None if p1 is None else p1 / 100,
            "verdicts": dict(Counter((r.metrics or {}).get("verdict") or r.exec_status or r.outcome for r in recs)),
            "outcomes": dict(Counter(r.outcome for r in recs)),
        }
        if kind_of(cond) == "polish":
            for key in ("opt_score", "opt_score_margin"):
                per = [sum(float((r.metrics or {}).get(key) or 0.0) for r in v) / len(v) for v in per_task.values()]
                row[key] = _round(metrics.mean(per), 4)
                d[f"{key}_exact"] = metrics.mean(per)
            d["measurement_errors"] = [
                {"task": r.task_id, "error": r.metrics["opt_error"]} for r in recs if (r.metrics or {}).get("opt_error")
            ]
        if kind_of(cond) != "translate":
            passing = [r for r in recs if r.passed]
            d["fidelity"] = {
                "distance_mean": metrics.mean([r.distance for r in passing if r.distance is not None]),
                "excess_lev_mean": metrics.mean([r.excess_lev for r in passing if r.excess_lev is not None]),
                "flagged_hunks_mean": metrics.mean([float(r.flagged_hunks) for r in passing]),
                **flag_details(passing),
                "hunks_mean": metrics.mean([float(r.hunks) for r in passing]),
                "added_cc_mean": metrics.mean([r.added_cc for r in passing if r.added_cc is not None]),
                **_lang_means(passing),
                "n_passing": len(passing),
                "note": "the server's report of the edit against the original buffer, in the document's language "
                "(C++/Java through the tree-sitter layer); C++/Java complexity: cyclomatic and Sonar "
                "cognitive deltas (the paper's metric is Python-only)",
            }
        d["tasks"] = [
            {
                "task": t,
                "passed": sum(r.passed for r in v),
                "n": len(v),
                "verdicts": [(r.metrics or {}).get("verdict") or r.outcome for r in v],
                **(
                    {"opt_score": metrics.mean([float((r.metrics or {}).get("opt_score") or 0.0) for r in v])}
                    if kind_of(cond) == "polish"
                    else {}
                ),
                "test_issues": max(int((r.metrics or {}).get("test_issues") or 0) for r in v),
            }
            for t, v in sorted(per_task.items())
        ]
        d["wrong_language"] = sum(bool((r.metrics or {}).get("wrong_language")) for r in recs)
        conditions[cond] = row
        details[cond] = d
    return {"conditions": conditions, "details": details}


def render_text(summary: dict[str, Any]) -> str:
    lines = [f"suite {summary['suite']}   backend {summary['backend']}", ""]
    head = f"{'condition':<16} {'pass@1':>7} {'OptScore':>9} {'margin':>7} {'tasks':>6} {'n':>3}  verdicts"
    lines += [head, "-" * len(head)]

    def fmt(x: Any, nd: int = 3) -> str:
        return "-" if x is None else f"{x:.{nd}f}"

    for cond, m in summary["conditions"].items():
        verdicts = summary["details"].get(cond, {}).get("verdicts", {})
        shown = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items(), key=lambda kv: -kv[1]))
        lines.append(
            f"{cond:<16} {fmt(m.get('pass@1')):>7} {fmt(m.get('opt_score')):>9} "
            f"{fmt(m.get('opt_score_margin')):>7} {m['n_tasks']:>6} {m['n_samples']:>3}  {shown}"
        )
    lines += [
        "",
        (
            "pass@1 and OptScore as fractions (the paper's scale); margin: OptScore with gains inside the "
            "measurement noise counted as 0."
        ),
    ]
    return "\n".join(lines)


def compare_backends(summaries: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """Win Rate across the compared backends (SPEC 3.7): the numbers and their table."""
    rates = win_rate(summaries)
    lines = [
        "Win Rate (per category: 1 - (rank - 1)/(N - 1), averaged over the categories)",
        f"{'backend':<48} {'win rate':>9} " + " ".join(f"{c:>9}" for c in CATEGORY_METRIC),
    ]
    for label, w in sorted(rates.items(), key=lambda kv: -(kv[1].win_rate if kv[1].win_rate is not None else -1)):
        cells = " ".join(f"{w.scores[c]:>9.3f}" if c in w.scores else f"{'-':>9}" for c in CATEGORY_METRIC)
        lines.append(f"{label[:48]:<48} {('-' if w.win_rate is None else f'{w.win_rate:.3f}'):>9} {cells}")
    return {"win_rate": {k: msgspec.to_builtins(v) for k, v in rates.items()}}, "\n".join(lines)
