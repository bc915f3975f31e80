"""Summaries of a run directory: `summary.json` (the command-line contract) and a text table.

`conditions[cond]` holds exactly `pass@1`, `excess_code`, `n_tasks`, `n_samples` (samples per task)
for canitedit; everything else (pass@k for other k, our fidelity metrics over passing completions,
agreement with a recorded run's verdicts, outcome counts) is under `details[cond]`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from statistics import median

from benchmark import metrics
from benchmark.records import RunConfig, SampleRecord
from benchmark.store import RESULTS, read_config, read_records, write_summary


def _round(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


def summarise(config: RunConfig, records: list[SampleRecord]) -> dict:
    by_cond: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in records:
        by_cond[r.condition].append(r)
    conditions: dict[str, dict] = {}
    details: dict[str, dict] = {}
    for cond in config.conditions or sorted(by_cond):
        recs = by_cond.get(cond, [])
        per_task: dict[str, list[SampleRecord]] = defaultdict(list)
        for r in recs:
            per_task[r.task_id].append(r)
        counts = [(len(v), sum(r.passed for r in v)) for v in per_task.values()]
        n = min((c[0] for c in counts), default=0)
        excess = [[r.excess_code for r in v if r.passed and r.excess_code is not None] for v in per_task.values()]
        p1 = metrics.suite_pass_at_k(counts, 1) if counts else None
        ec = metrics.suite_excess_code(excess)
        strict = [[r.excess_code_strict for r in v if r.passed and r.excess_code_strict is not None]
                  for v in per_task.values()]
        conditions[cond] = {"pass@1": _round(p1, 1), "excess_code": _round(ec, 2),
                            "n_tasks": len(per_task), "n_samples": n}
        passing = [r for r in recs if r.passed]
        lev = [r.excess_lev for r in passing if r.excess_lev is not None]
        cc = [r.added_cc for r in passing if r.added_cc is not None]
        d: dict = {
            "pass@1_exact": p1, "excess_code_exact": ec, "excess_code_strict": metrics.suite_excess_code(strict),
            "n_completions": len(recs), "n_passing": len(passing),
            "outcomes": dict(Counter(r.outcome for r in recs)),
            "excess_lev_mean": metrics.mean(lev), "excess_lev_median": median(lev) if lev else None,
            "added_cc_mean": metrics.mean(cc), "added_cc_abs_mean": metrics.mean([abs(x) for x in cc]),
            "flagged_hunks_mean": metrics.mean([float(r.flagged_hunks) for r in passing]),
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
                {"task": r.task_id, "sample": r.sample, "recorded_pass": r.recorded_pass, "outcome": r.outcome,
                 "exec_status": r.exec_status, "error": (r.error or r.stderr_tail)[-200:]} for r in disagree]
            rp = defaultdict(list)
            for r in known:
                rp[r.task_id].append(bool(r.recorded_pass))
            d["recorded_pass@1"] = _round(metrics.suite_pass_at_k([(len(v), sum(v)) for v in rp.values()], 1), 2)
        details[cond] = d
    return {"suite": config.suite, "backend": config.backend, "conditions": conditions, "details": details}


def load_summary(run_dir: Path) -> dict:
    config = read_config(run_dir)
    return summarise(config, read_records(run_dir / RESULTS))


def report(run_dir: Path) -> dict:
    summary = load_summary(run_dir)
    write_summary(run_dir, summary)
    return summary


def _fmt(x: object, nd: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def render_text(summary: dict) -> str:
    lines = [f"suite {summary['suite']}   backend {summary['backend']}", ""]
    head = f"{'condition':<12} {'pass@1':>7} {'ExcessCode':>10} {'tasks':>6} {'n':>4} {'passing':>8} {'ELev':>8} {'addCC':>7} {'flagged':>8} {'agree':>7}"
    lines += [head, "-" * len(head)]
    for cond, m in summary["conditions"].items():
        d = summary["details"].get(cond, {})
        agree = d.get("recorded_agreement")
        lines.append(
            f"{cond:<12} {_fmt(m['pass@1'], 1):>7} {_fmt(m['excess_code']):>10} {m['n_tasks']:>6} {m['n_samples']:>4} "
            f"{d.get('n_passing', 0):>8} {_fmt(d.get('excess_lev_mean'), 4):>8} {_fmt(d.get('added_cc_mean')):>7} "
            f"{_fmt(d.get('flagged_hunks_mean')):>8} {('-' if agree is None else f'{100 * agree:.1f}%'):>7}")
    lines.append("")
    lines.append("pass@1 and ExcessCode as CanItEdit (x100); ELev: token excess over the gold patch (no_comments), "
                 "addCC: paper cognitive complexity over gold, flagged: unrequested hunks; all over passing completions.")
    return "\n".join(lines)


def render_compare(summaries: list[dict]) -> str:
    """One row per (run, condition), in the layout of the CanItEdit paper's table."""
    head = f"{'backend':<48} {'condition':<12} {'pass@1':>7} {'ExcessCode':>10} {'tasks':>6} {'n':>4} {'ELev':>8}"
    lines = [head, "-" * len(head)]
    for s in summaries:
        name = s["backend"]
        if name.startswith("recorded:"):
            name = "recorded:" + Path(name.split(":", 1)[1]).name
        name = name if len(name) <= 48 else name[:45] + "..."
        for cond, m in s["conditions"].items():
            d = s["details"].get(cond, {})
            lines.append(f"{name:<48} {cond:<12} {_fmt(m['pass@1'], 1):>7} {_fmt(m['excess_code']):>10} "
                         f"{m['n_tasks']:>6} {m['n_samples']:>4} {_fmt(d.get('excess_lev_mean'), 4):>8}")
    return "\n".join(lines)
