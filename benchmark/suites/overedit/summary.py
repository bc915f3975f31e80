"""summary.json and the text table: Pass@1, excess ELev and added CC per condition, per corruption family
and per number of corruptions (over passing repairs); tasks whose environment lacks a module apart."""

from __future__ import annotations

import logging
import statistics
from collections import defaultdict
from typing import Any

from benchmark.datadir import DataError
from benchmark.report import metrics
from benchmark.report.summary import flag_details, ref_free_details
from benchmark.run.records import RunConfig, SampleRecord
from benchmark.suites.overedit.tasks import load

logger = logging.getLogger(__name__)


def summarise(config: RunConfig, records: list[SampleRecord]) -> dict[str, Any]:
    families = _families(config, records)
    order = list(config.conditions) or sorted({r.condition for r in records})
    conditions: dict[str, Any] = {}
    details: dict[str, Any] = {}
    for cond in order:
        recs = [r for r in records if r.condition == cond]
        if not recs:
            continue
        conditions[cond], details[cond] = summarise_condition(recs, families)
        details[cond].update(ref_free_details([r for r in recs if r.passed]))  # with `bench run --necessity`
    return {"conditions": conditions, "details": details}


def _families(config: RunConfig, records: list[SampleRecord]) -> dict[str, list[str]]:
    fams = {r.task_id: list(r.metrics["families"]) for r in records if r.metrics.get("families")}
    if all(r.task_id in fams for r in records):
        return fams
    try:  # records without a verdict (backend errors) carry no families: read them from the tasks
        tasks, _ = load(config.data_dir or None)
    except (DataError, OSError) as exc:
        logger.warning("overedit summary: tasks not readable (%s); families of unjudged records unknown", exc)
        return fams
    return {**{t.task_id: t.families for t in tasks}, **fams}


def group(recs: list[SampleRecord]) -> dict[str, Any]:
    """Pass@1 over the records' tasks and the fidelity means over their passing records."""
    by_task = metrics.by_task(recs)
    passing = [r for r in recs if r.passed]

    def values(key: str) -> list[float]:
        return [r.metrics[key] for r in passing if r.metrics.get(key) is not None]

    added = values("added_cc")
    return {
        "pass@1": metrics.mean([c / n for n, c in metrics.pass_counts(by_task)]),
        "excess_lev": metrics.mean(values("excess_lev")),
        "excess_lev_body": metrics.mean(values("excess_lev_body")),
        "added_cc": metrics.mean(added),
        "added_cc_abs": metrics.mean([abs(v) for v in added]),
        "n_tasks": len(by_task),
        "n_passing": len(passing),
        # flagged units: the server's judgment of the raw texts, and on the paper's footing (normalised)
        **flag_details(passing),
        **flag_details(passing, normalised=True),
    }


def summarise_condition(recs: list[SampleRecord], families: dict[str, list[str]]) -> tuple[dict, dict]:
    samples = max((r.sample for r in recs), default=0) + 1
    env_missing = {r.task_id: r.metrics["env_missing"] for r in recs if r.metrics.get("env_missing")}
    installed = [r for r in recs if r.task_id not in env_missing]
    head = group(recs)
    head["pass@1_installed"] = group(installed)["pass@1"] if installed else None
    head["n_samples"] = samples
    head["n_env_missing"] = len(env_missing)

    per_family: dict[str, list[SampleRecord]] = defaultdict(list)
    per_count: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in installed:
        fams = families.get(r.task_id) or ["unknown"]
        for fam in dict.fromkeys(fams):  # a task with the same family twice counts once for it
            per_family[fam].append(r)
        per_count[str(len(fams))].append(r)

    gold: dict[str, dict[str, Any]] = {}
    for r in recs:
        if r.metrics.get("gold_distance") is not None:
            gold.setdefault(
                r.task_id,
                {
                    "nc": r.metrics["gold_distance"],
                    "body": r.metrics.get("gold_distance_body"),
                    "raw": r.metrics.get("gold_distance_raw"),
                    "tokens": r.metrics.get("gold_tokens"),
                },
            )
    nc = [g["nc"] for g in gold.values()]
    body = [g["body"] for g in gold.values() if g["body"] is not None]
    raw = [g["raw"] for g in gold.values() if g["raw"] is not None]
    toks = [g["tokens"] for g in gold.values() if g["tokens"] is not None]
    outcomes: dict[str, int] = defaultdict(int)
    for r in recs:
        outcomes[r.outcome] += 1
    not_passing = sorted({r.task_id for r in installed if not r.passed})
    first: dict[str, SampleRecord] = {}
    for r in installed:
        if not r.passed:
            first.setdefault(r.task_id, r)
    detail = {
        "per_family": {f: group(rs) for f, rs in sorted(per_family.items())},
        "per_corruptions": {k: group(rs) for k, rs in sorted(per_count.items())},
        "gold_distance": {
            "n_tasks": len(nc),
            "no_comments_mean": metrics.mean(nc),
            "no_comments_median": statistics.median(nc) if nc else None,
            "no_comments_max": max(nc) if nc else None,
            "body_no_comments_mean": metrics.mean(body),
            "raw_mean": metrics.mean(raw),
            "no_comments_tokens_mean": metrics.mean(toks),
            "no_comments_tokens_min": min(toks) if toks else None,
            "no_comments_tokens_max": max(toks) if toks else None,
        },
        "env_missing": dict(sorted(env_missing.items())),
        "outcomes": dict(sorted(outcomes.items())),
        "not_passing": [
            {
                "task_id": t,
                "outcome": first[t].outcome,
                "exec_status": first[t].exec_status,
                "error": (first[t].error or first[t].stderr_tail or "")[-300:],
            }
            for t in not_passing[:100]
        ],
        "n_not_passing": len(not_passing),
    }
    return head, detail


def fmt(v: float | None, nd: int = 3) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def render_text(summary: dict[str, Any]) -> str:
    """The paper's table (Pass@1, excess ELev, added CC per condition), then per family and per count."""
    header = (
        f"{'condition':<10} {'Pass@1':>7} {'installed':>9} {'ExcessLev':>9} {'body':>7} {'AddedCC':>8} "
        f"{'|AddedCC|':>9} {'tasks':>6} {'env-missing':>11}"
    )
    lines = [f"overedit: {summary.get('backend', '')}", header]
    for cond, m in summary.get("conditions", {}).items():
        lines.append(
            f"{cond:<10} {fmt(m['pass@1']):>7} {fmt(m['pass@1_installed']):>9} {fmt(m['excess_lev'], 4):>9} "
            f"{fmt(m['excess_lev_body'], 4):>7} {fmt(m['added_cc']):>8} {fmt(m['added_cc_abs']):>9} "
            f"{m['n_tasks']:>6} {m['n_env_missing']:>11}"
        )
    lines.append(
        f"\n{'flagged units':<10} {'warn':>7} {'hint':>7} {'warned':>7}   {'warn':>7} {'hint':>7} {'warned':>7}"
        f"\n{'':<10} {'raw texts (server)':^23}   {'normalised (paper)':^23}"
    )
    for cond, m in summary.get("conditions", {}).items():
        lines.append(
            f"{cond:<10} {fmt(m.get('flagged_warning_mean'), 2):>7} {fmt(m.get('flagged_hint_mean'), 2):>7} "
            f"{pct(m.get('flagged_warning_rate')):>7}   {fmt(m.get('flagged_warning_normalised_mean'), 2):>7} "
            f"{fmt(m.get('flagged_hint_normalised_mean'), 2):>7} {pct(m.get('flagged_warning_normalised_rate')):>7}"
        )
    lines.append("(per passing repair; warned: the share with a unit at warning severity, the flagged-unit rate)")
    for cond, d in summary.get("details", {}).items():
        g = d["gold_distance"]
        lines.append(
            f"\n[{cond}] gold d(G, C) no_comments: mean {fmt(g['no_comments_mean'], 4)}, median "
            f"{fmt(g['no_comments_median'], 4)}, max {fmt(g['no_comments_max'], 4)}; body_no_comments mean "
            f"{fmt(g['body_no_comments_mean'], 4)} ({g['n_tasks']} tasks)"
        )
        lines.append(f"{'family / corruptions':<32} {'Pass@1':>7} {'ExcessLev':>9} {'AddedCC':>8} {'tasks':>6}")
        for label, m in [
            *d["per_family"].items(),
            *((f"{k} corruption(s)", v) for k, v in d["per_corruptions"].items()),
        ]:
            lines.append(
                f"{label:<32} {fmt(m['pass@1']):>7} {fmt(m['excess_lev'], 4):>9} {fmt(m['added_cc']):>8} "
                f"{m['n_tasks']:>6}"
            )
        if d["env_missing"]:
            lines.append("environment lacks: " + ", ".join(f"{t} ({m})" for t, m in d["env_missing"].items()))
    return "\n".join(lines)
