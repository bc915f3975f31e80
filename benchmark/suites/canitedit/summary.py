"""CanItEdit's summary and its terminal tables (the model for edit suites).

`conditions[cond]` holds exactly `pass@1`, `excess_code`, `n_tasks`, `n_samples` (samples per task);
everything else (pass@k for other k, our fidelity metrics over passing completions, agreement with a
recorded run's verdicts, outcome counts, figures per change kind) is under `details[cond]`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from statistics import median
from typing import Any

from benchmark.datadir import DataError
from benchmark.report import metrics
from benchmark.report.summary import errors_cell, flag_details, fmt, incomplete_notes, pct, ref_free_details, run_name
from benchmark.run.records import RunConfig, SampleRecord
from benchmark.suites.canitedit.metrics import suite_excess_code
from benchmark.suites.canitedit.problems import FILE, load


def _excess(r: SampleRecord, *, strict: bool = False) -> float | None:
    """The record's ExcessCode (its scorer's scores; None: not measured)."""
    if r.scores is None:
        return None
    return r.scores.excess_code_strict if strict else r.scores.excess_code


def _round(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


def summarise(config: RunConfig, records: list[SampleRecord]) -> dict[str, Any]:
    by_cond = metrics.by_condition(records)
    conditions: dict[str, dict] = {}
    details: dict[str, dict] = {}
    for cond in config.conditions or sorted(by_cond):
        recs = by_cond.get(cond, [])
        per_task = metrics.by_task(recs)
        counts = metrics.pass_counts(per_task)
        n = min((c[0] for c in counts), default=0)
        excess = [[e for r in v if r.passed and (e := _excess(r)) is not None] for v in per_task.values()]
        p1 = metrics.suite_pass_at_k(counts, 1) if counts else None
        ec = suite_excess_code(excess)
        strict = [[e for r in v if r.passed and (e := _excess(r, strict=True)) is not None] for v in per_task.values()]
        conditions[cond] = {
            "pass@1": _round(p1, 1),
            "excess_code": _round(ec, 2),
            "n_tasks": len(per_task),
            "n_samples": n,
        }
        passing = [r for r in recs if r.passed]
        lev = [r.excess_lev for r in passing if r.excess_lev is not None]
        cc = [r.added_cc for r in passing if r.added_cc is not None]
        d: dict = {
            "pass@1_exact": p1,
            "excess_code_exact": ec,
            "excess_code_strict": suite_excess_code(strict),
            "n_completions": len(recs),
            "n_passing": len(passing),
            "outcomes": dict(Counter(r.outcome for r in recs)),
            "excess_lev_mean": metrics.mean(lev),
            "excess_lev_median": median(lev) if lev else None,
            "added_cc_mean": metrics.mean(cc),
            "added_cc_abs_mean": metrics.mean([abs(x) for x in cc]),
            "flagged_hunks_mean": metrics.mean([float(r.flagged_hunks) for r in passing]),
            **flag_details(passing),
            **ref_free_details(passing),
            "hunks_mean": metrics.mean([float(r.hunks) for r in passing]),
            "identical": sum(r.identical for r in recs),
        }
        for k in (5, 10, 20):
            if n >= k:
                d[f"pass@{k}"] = _round(metrics.suite_pass_at_k(counts, k), 1)
        known = [r for r in recs if r.recorded_pass is not None]
        if known:
            disagree = [r for r in known if r.recorded_pass != r.passed]
            d["recorded_agreement"] = 1.0 - len(disagree) / len(known)
            d["recorded_disagreements"] = [
                {
                    "task": r.task_id,
                    "sample": r.sample,
                    "recorded_pass": r.recorded_pass,
                    "outcome": r.outcome,
                    "exec_status": r.exec_status,
                    "error": (r.error or r.stderr_tail)[-200:],
                }
                for r in disagree
            ]
            rp = defaultdict(list)
            for r in known:
                rp[r.task_id].append(bool(r.recorded_pass))
            d["recorded_pass@1"] = _round(metrics.suite_pass_at_k([(len(v), sum(v)) for v in rp.values()], 1), 2)
        kinds = change_kinds(config)
        if kinds:
            by_kind: dict[str, list[str]] = defaultdict(list)
            for task_id in per_task:
                by_kind[kinds.get(task_id, "unknown")].append(task_id)
            d["per_change_kind"] = {
                k: {
                    "n_tasks": len(ids),
                    "pass@1": _round(metrics.suite_pass_at_k(metrics.pass_counts({t: per_task[t] for t in ids}), 1), 1),
                    "excess_code": _round(
                        suite_excess_code(
                            [[e for r in per_task[t] if r.passed and (e := _excess(r)) is not None] for t in ids]
                        ),
                        2,
                    ),
                }
                for k, ids in sorted(by_kind.items())
            }
        details[cond] = d
    return {"conditions": conditions, "details": details}


def change_kinds(config: RunConfig) -> dict[str, str]:
    """CanItEdit's taxonomy per task (corrective / adaptive / perfective), when the data is at hand."""
    if not config.data_dir or not (Path(config.data_dir) / FILE).exists():
        return {}  # never a download for a report
    try:
        return {p.task_id: str(p.taxonomy.get("change_kind", "unknown")) for p in load(config.data_dir)}
    except (DataError, OSError, ValueError):
        return {}


def render_text(summary: dict) -> str:
    lines = [f"suite {summary['suite']}   backend {summary['backend']}", ""]
    head = (
        f"{'condition':<12} {'pass@1':>7} {'ExcessCode':>10} {'tasks':>6} {'n':>4} {'passing':>8} {'ELev':>8} "
        f"{'addCC':>7} {'flagged':>8} {'warn':>6} {'hint':>6} {'warned':>7} {'agree':>7}"
    )
    lines += [head, "-" * len(head)]
    for cond, m in summary["conditions"].items():
        d = summary["details"].get(cond, {})
        agree = d.get("recorded_agreement")
        lines.append(
            f"{cond:<12} {fmt(m['pass@1'], 1):>7} {fmt(m['excess_code']):>10} {m['n_tasks']:>6} {m['n_samples']:>4} "
            f"{d.get('n_passing', 0):>8} {fmt(d.get('excess_lev_mean'), 4):>8} {fmt(d.get('added_cc_mean')):>7} "
            f"{fmt(d.get('flagged_hunks_mean')):>8} {fmt(d.get('flagged_warning_mean')):>6} "
            f"{fmt(d.get('flagged_hint_mean')):>6} {pct(d.get('flagged_warning_rate')):>7} "
            f"{('-' if agree is None else f'{100 * agree:.1f}%'):>7}"
        )
    lines.append("")
    for cond in summary["conditions"]:
        d = summary["details"].get(cond, {})
        if "excess_ref_free_mean" in d:  # bench run --necessity
            lines.append(
                f"{cond}: reference-free excess {fmt(d['excess_ref_free_mean'], 4)} (token excess of the "
                f"edit over its smallest sub-edit that passes the tests; {d['necessity_analysed']} analysed, "
                f"{fmt(d['necessity_runs_mean'], 1)} runs each; MAE against ELev "
                f"{fmt(d['excess_ref_free_mae_vs_gold'], 4)}); pooled over the condition's passing samples "
                f"of each problem {fmt(d.get('excess_pooled_mean'), 4)} (over the smallest such sub-edit among "
                f"them; MAE {fmt(d.get('excess_pooled_mae_vs_gold'), 4)})"
            )
    lines.append(
        "pass@1 and ExcessCode as CanItEdit (x100); ELev: token excess over the gold patch (no_comments), "
        "addCC: paper cognitive complexity over gold, flagged: unrequested change units (warn: at warning "
        "severity, hint: at hint severity), warned: share with a warning-severity unit (the flagged-unit "
        "rate); all over passing completions."
    )
    return "\n".join(lines)


def compare_table(summaries: list[dict]) -> str:
    """`bench compare`: one row per (run, condition) in the layout of the paper's table."""
    head = (
        f"{'backend':<48} {'condition':<12} {'pass@1':>7} {'ExcessCode':>10} {'tasks':>6} {'n':>4} {'ELev':>8} "
        f"{'warn':>6} {'hint':>6} {'warned':>7} {'errors':>7}"
    )
    lines = [head, "-" * len(head)]
    for s in summaries:
        name = run_name(s)
        for cond, m in s["conditions"].items():
            d = s["details"].get(cond, {})
            lines.append(
                f"{name:<48} {cond:<12} {fmt(m['pass@1'], 1):>7} {fmt(m['excess_code']):>10} "
                f"{m['n_tasks']:>6} {m['n_samples']:>4} {fmt(d.get('excess_lev_mean'), 4):>8} "
                f"{fmt(d.get('flagged_warning_mean')):>6} {fmt(d.get('flagged_hint_mean')):>6} "
                f"{pct(d.get('flagged_warning_rate')):>7} {errors_cell(s, cond):>7}"
            )
    lines.append(
        "warn / hint: flagged units per passing completion at warning / hint severity; warned: the "
        "flagged-unit rate (share of passing completions with a warning-severity unit)"
    )
    return "\n".join(lines + incomplete_notes(summaries))
