"""Summaries of a run directory: `summary.json` (the command-line contract) and a text table.

Each suite sums up its own records (`Suite.summarise`); this module holds CanItEdit's summary (the
model for edit suites), the generic tables and the run-directory plumbing.

Every suite's scores are over the samples that got a verdict only: a sample that ended in an error of
the machinery (backend, sandbox, judge) is left out of them and counted in `errors` per condition, and
`complete` is false while any remains (or while samples of the run are still to do). Records are summed
in a fixed order (task, condition, backend, sample), so the summary's bytes do not depend on the order
results.jsonl was written in (a killed and resumed run gives the same summary.json as an uninterrupted one).

CanItEdit: `conditions[cond]` holds exactly `pass@1`, `excess_code`, `n_tasks`, `n_samples` (samples per task);
everything else (pass@k for other k, our fidelity metrics over passing completions,
agreement with a recorded run's verdicts, outcome counts) is under `details[cond]`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from statistics import median
from typing import Any

from benchmark import metrics
from benchmark.records import RunConfig, SampleRecord, is_error
from benchmark.store import RESULTS, read_config, read_records, write_summary


def _round(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


def summarise(config: RunConfig, records: list[SampleRecord]) -> dict:
    from benchmark import suites

    suite = suites.get(config.suite)
    ordered = sorted(records, key=lambda r: r.key)
    errors = [r for r in ordered if is_error(r, suite.input_error_kinds)]
    verdicts = [r for r in ordered if not is_error(r, suite.input_error_kinds)]
    body = suite.summarise(config, verdicts)
    return {"suite": config.suite, "backend": config.backend, **body, **run_state(config, body, verdicts, errors)}


def _error_kind(r: SampleRecord) -> str:
    return f"{r.outcome}/{r.error_kind}" if r.error_kind else r.outcome


def run_state(config: RunConfig, body: dict, verdicts: list[SampleRecord], errors: list[SampleRecord]) -> dict[str, Any]:
    """What the scores are over: errors per condition (with their kinds and the first message), verdicts
    that split under repeated runs (flaky), samples not run yet, and whether the scores are complete."""
    conds = list(body.get("conditions") or {})
    conds += sorted({r.condition for r in errors} - set(conds))
    n_err = Counter(r.condition for r in errors)
    missing = max(config.planned - len(verdicts) - len(errors), 0) if config.planned else None
    flaky: dict[str, list[dict]] = {}
    for r in verdicts:
        if r.flaky:
            flaky.setdefault(r.condition, []).append({"task": r.task_id, "sample": r.sample, "outcome": r.outcome,
                                                      "votes": list(r.votes or [])})
    # passing samples whose follow-up run (coverage) failed: pass@1 counts them, their metrics are absent
    partial = Counter(r.condition for r in verdicts if r.outcome == "pass" and r.error is not None)
    complete = not errors and not missing and not partial
    left = [f"{len(errors)} ended in an error"] if errors else []
    left += [f"{missing} not run yet"] if missing else []
    left += [f"the numbers of {sum(partial.values())} passing whose follow-up run (coverage) failed"] if partial else []
    return {
        "complete": complete,
        "errors": {c: n_err.get(c, 0) for c in conds},
        "error_kinds": {c: dict(sorted(Counter(_error_kind(r) for r in errors if r.condition == c).items()))
                        for c in conds if n_err.get(c)},
        "first_error": {c: next(f"{r.task_id} sample {r.sample}: {_error_kind(r)}: {' '.join((r.error or '').split())[:200]}"
                                for r in errors if r.condition == c) for c in conds if n_err.get(c)},
        "flaky": flaky,
        "partial": dict(sorted(partial.items())),
        "n_verdicts": len(verdicts),
        "missing": missing,
        "scores": f"over the {len(verdicts)} samples with a verdict" + ("" if complete else
                  f"; incomplete, left out: {'; '.join(left)}"),
    }


def summarise_canitedit(config: RunConfig, records: list[SampleRecord]) -> dict:
    by_cond = metrics.by_condition(records)
    conditions: dict[str, dict] = {}
    details: dict[str, dict] = {}
    for cond in config.conditions or sorted(by_cond):
        recs = by_cond.get(cond, [])
        per_task = metrics.by_task(recs)
        counts = metrics.pass_counts(per_task)
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
                {"task": r.task_id, "sample": r.sample, "recorded_pass": r.recorded_pass, "outcome": r.outcome,
                 "exec_status": r.exec_status, "error": (r.error or r.stderr_tail)[-200:]} for r in disagree]
            rp = defaultdict(list)
            for r in known:
                rp[r.task_id].append(bool(r.recorded_pass))
            d["recorded_pass@1"] = _round(metrics.suite_pass_at_k([(len(v), sum(v)) for v in rp.values()], 1), 2)
        kinds = _change_kinds(config)
        if kinds:
            by_kind: dict[str, list[str]] = defaultdict(list)
            for task_id in per_task:
                by_kind[kinds.get(task_id, "unknown")].append(task_id)
            d["per_change_kind"] = {
                k: {"n_tasks": len(ids),
                    "pass@1": _round(metrics.suite_pass_at_k(
                        metrics.pass_counts({t: per_task[t] for t in ids}), 1), 1),
                    "excess_code": _round(metrics.suite_excess_code(
                        [[r.excess_code for r in per_task[t] if r.passed and r.excess_code is not None] for t in ids]), 2)}
                for k, ids in sorted(by_kind.items())}
        details[cond] = d
    return {"conditions": conditions, "details": details}


def flag_details(passing: list[SampleRecord], prefix: str = "flagged", *, normalised: bool = False) -> dict:
    """Flagged change units of passing completions, as the server judged them (`flaggedHunks` with their
    `hunkSeverities`): the mean number at warning severity and at hint severity, and the flagged-unit rate,
    the share of completions with at least one unit at warning severity. Over the records that carry
    severities (`n_flag_counted`; older records have none). `normalised`: the over-editing suite's counts
    on the paper's footing (`flagged_warning_normalised`, from the record's metrics)."""
    def counts(r: SampleRecord) -> tuple[int, int] | None:
        if normalised:
            w, h = r.metrics.get("flagged_warning_normalised"), r.metrics.get("flagged_hint_normalised")
        else:
            w, h = r.flagged_warning, r.flagged_hint
        return None if w is None or h is None else (int(w), int(h))

    got = [c for c in map(counts, passing) if c is not None]
    tag = "_normalised" if normalised else ""
    return {
        f"{prefix}_warning{tag}_mean": metrics.mean([float(w) for w, _ in got]),
        f"{prefix}_hint{tag}_mean": metrics.mean([float(h) for _, h in got]),
        f"{prefix}_warning{tag}_rate": metrics.mean([1.0 if w else 0.0 for w, _ in got]),
        f"n_flag_counted{tag}": len(got),
    }


def ref_free_details(passing: list[SampleRecord]) -> dict:
    """The reference-free excess (`bench run --necessity`) over passing completions, beside the gold-based
    token excess of the same completions; empty when the run did not analyse necessity."""
    done = [r for r in passing if r.metrics.get("excess_ref_free") is not None]
    if not any("necessity_status" in r.metrics for r in passing):
        return {}
    pairs = [(r.metrics["excess_ref_free"], r.excess_lev) for r in done if r.excess_lev is not None]
    return {
        "excess_ref_free_mean": metrics.mean([r.metrics["excess_ref_free"] for r in done]),
        "excess_ref_free_mae_vs_gold": metrics.mean([abs(a - b) for a, b in pairs]),
        "necessity_analysed": len(done),
        "necessity_runs_mean": metrics.mean([float(r.metrics.get("necessity_runs") or 0) for r in passing
                                             if "necessity_runs" in r.metrics]),
        "necessity_statuses": dict(Counter(str(r.metrics.get("necessity_status")) for r in passing)),
    }


def _change_kinds(config: RunConfig) -> dict[str, str]:
    """CanItEdit's taxonomy per task (corrective / adaptive / perfective), when the data is at hand."""
    from benchmark import canitedit
    from benchmark.datadir import DataError

    if not config.data_dir or not (Path(config.data_dir) / canitedit.FILE).exists():
        return {}  # never a download for a report
    try:
        return {p.task_id: str(p.taxonomy.get("change_kind", "unknown")) for p in canitedit.load(config.data_dir)}
    except (DataError, OSError, ValueError):
        return {}


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


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def render_text(summary: dict) -> str:
    """The suite's table, then what its scores leave out (errors, samples not run, flaky verdicts)."""
    from benchmark import suites

    own = suites.get(summary["suite"]).render_text(summary)
    if own is None:
        own = render_generic(summary) if summary["suite"] != "canitedit" else _render_canitedit(summary)
    footer = state_lines(summary)
    return own + ("\n\n" + "\n".join(footer) if footer else "")


def state_lines(summary: dict) -> list[str]:
    """The lines a reader must not miss: why the scores are incomplete, which verdicts were flaky."""
    lines = []
    errors = summary.get("errors") or {}
    if summary.get("complete") is False:
        lines.append(f"INCOMPLETE: every score above is {summary.get('scores', '')}.")
        for cond, n in errors.items():
            if n:
                kinds = ", ".join(f"{k} {v}" for k, v in (summary.get("error_kinds") or {}).get(cond, {}).items())
                lines.append(f"  {cond}: {n} error(s) ({kinds}); first: {(summary.get('first_error') or {}).get(cond, '')}")
        lines.append("  `bench run ... --resume` with the same options runs the errors and the missing samples again.")
    for cond, items in (summary.get("flaky") or {}).items():
        lines.append(f"FLAKY verdicts ({cond}): " + ", ".join(
            f"{f['task']} sample {f['sample']} ({sum(f['votes'])} of {len(f['votes'])} runs passed: {f['outcome']})"
            for f in items) + "; the majority is counted (timing-sensitive tests).")
    return lines


def _render_canitedit(summary: dict) -> str:
    lines = [f"suite {summary['suite']}   backend {summary['backend']}", ""]
    head = (f"{'condition':<12} {'pass@1':>7} {'ExcessCode':>10} {'tasks':>6} {'n':>4} {'passing':>8} {'ELev':>8} "
            f"{'addCC':>7} {'flagged':>8} {'warn':>6} {'hint':>6} {'warned':>7} {'agree':>7}")
    lines += [head, "-" * len(head)]
    for cond, m in summary["conditions"].items():
        d = summary["details"].get(cond, {})
        agree = d.get("recorded_agreement")
        lines.append(
            f"{cond:<12} {_fmt(m['pass@1'], 1):>7} {_fmt(m['excess_code']):>10} {m['n_tasks']:>6} {m['n_samples']:>4} "
            f"{d.get('n_passing', 0):>8} {_fmt(d.get('excess_lev_mean'), 4):>8} {_fmt(d.get('added_cc_mean')):>7} "
            f"{_fmt(d.get('flagged_hunks_mean')):>8} {_fmt(d.get('flagged_warning_mean')):>6} "
            f"{_fmt(d.get('flagged_hint_mean')):>6} {_pct(d.get('flagged_warning_rate')):>7} "
            f"{('-' if agree is None else f'{100 * agree:.1f}%'):>7}")
    lines.append("")
    for cond in summary["conditions"]:
        d = summary["details"].get(cond, {})
        if "excess_ref_free_mean" in d:  # bench run --necessity
            lines.append(f"{cond}: reference-free excess {_fmt(d['excess_ref_free_mean'], 4)} (token excess of the "
                         f"edit over its smallest sub-edit that passes the tests; {d['necessity_analysed']} analysed, "
                         f"{_fmt(d['necessity_runs_mean'], 1)} runs each; MAE against ELev "
                         f"{_fmt(d['excess_ref_free_mae_vs_gold'], 4)})")
    lines.append("pass@1 and ExcessCode as CanItEdit (x100); ELev: token excess over the gold patch (no_comments), "
                 "addCC: paper cognitive complexity over gold, flagged: unrequested change units (warn: at warning "
                 "severity, hint: at hint severity), warned: share with a warning-severity unit (the flagged-unit "
                 "rate); all over passing completions.")
    return "\n".join(lines)


def render_generic(summary: dict) -> str:
    """Any suite's summary: one row per condition, one column per summary metric."""
    conds = summary.get("conditions") or {}
    names: list[str] = []
    for m in conds.values():
        names += [k for k in m if k not in names]
    lines = [f"suite {summary['suite']}   backend {summary['backend']}", ""]
    head = f"{'condition':<14}" + "".join(f" {n:>12}" for n in names)
    lines += [head, "-" * len(head)]
    for cond, m in conds.items():
        lines.append(f"{cond:<14}" + "".join(f" {_fmt(m.get(n), 4):>12}" for n in names))
    return "\n".join(lines)


def _run_name(summary: dict) -> str:
    name = summary["backend"]
    if name.startswith("recorded:"):
        name = "recorded:" + Path(name.split(":", 1)[1]).name
    return name if len(name) <= 48 else name[:45] + "..."


def render_compare(summaries: list[dict]) -> str:
    """One row per (run, condition): CanItEdit runs in the layout of its paper's table, other suites
    with their own summary metrics (one table per suite)."""
    out: list[str] = []
    for suite, group in _by_suite(summaries).items():
        out.append(_compare_canitedit(group) if suite == "canitedit" else _compare_generic(suite, group))
        extra = _suite_compare(suite, group)
        if extra is not None:
            out.append(extra[1])
    return "\n\n".join(out)


def compare_json(summaries: list[dict]) -> dict:
    """`bench compare --format json`: the summaries, and per suite the figures across its runs."""
    across = {}
    for suite, group in _by_suite(summaries).items():
        extra = _suite_compare(suite, group)
        if extra is not None:
            across[suite] = extra[0]
    return {"runs": summaries, "across": across}


def _by_suite(summaries: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for s in summaries:
        out.setdefault(s["suite"], []).append(s)
    return out


def _suite_compare(suite: str, group: list[dict]) -> tuple[dict, str] | None:
    from benchmark import suites

    if len(group) < 2:
        return None
    labels: dict[str, dict] = {}
    for s in group:
        label = _run_name(s)
        while label in labels:  # two runs of one backend: keep both
            label += "'"
        labels[label] = s
    return suites.get(suite).compare(labels)


def _compare_canitedit(summaries: list[dict]) -> str:
    head = (f"{'backend':<48} {'condition':<12} {'pass@1':>7} {'ExcessCode':>10} {'tasks':>6} {'n':>4} {'ELev':>8} "
            f"{'warn':>6} {'hint':>6} {'warned':>7} {'errors':>7}")
    lines = [head, "-" * len(head)]
    for s in summaries:
        name = _run_name(s)
        for cond, m in s["conditions"].items():
            d = s["details"].get(cond, {})
            lines.append(f"{name:<48} {cond:<12} {_fmt(m['pass@1'], 1):>7} {_fmt(m['excess_code']):>10} "
                         f"{m['n_tasks']:>6} {m['n_samples']:>4} {_fmt(d.get('excess_lev_mean'), 4):>8} "
                         f"{_fmt(d.get('flagged_warning_mean')):>6} {_fmt(d.get('flagged_hint_mean')):>6} "
                         f"{_pct(d.get('flagged_warning_rate')):>7} {_errors_cell(s, cond):>7}")
    lines.append("warn / hint: flagged units per passing completion at warning / hint severity; warned: the "
                 "flagged-unit rate (share of passing completions with a warning-severity unit)")
    return "\n".join(lines + _incomplete_notes(summaries))


def _errors_cell(summary: dict, cond: str) -> str:
    """A run's errors in a condition, marked `!` when its scores are incomplete."""
    n = (summary.get("errors") or {}).get(cond, 0)
    return f"{n}!" if summary.get("complete") is False else str(n)


def _incomplete_notes(summaries: list[dict]) -> list[str]:
    return [f"! {_run_name(s)}: INCOMPLETE, scores {s.get('scores', '')}" for s in summaries if s.get("complete") is False]


def _compare_generic(suite: str, summaries: list[dict]) -> str:
    names: list[str] = []
    for s in summaries:
        for m in s["conditions"].values():
            names += [k for k in m if k not in names]
    head = f"{'backend':<48} {'condition':<12}" + "".join(f" {n:>12}" for n in names) + f" {'run errors':>10}"
    lines = [f"suite {suite}", head, "-" * len(head)]
    for s in summaries:
        for cond, m in s["conditions"].items():
            lines.append(f"{_run_name(s):<48} {cond:<12}" + "".join(f" {_fmt(m.get(n), 4):>12}" for n in names)
                         + f" {_errors_cell(s, cond):>10}")
    return "\n".join(lines + _incomplete_notes(summaries))
