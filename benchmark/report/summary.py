"""Summaries of a run directory: `summary.json` (the command-line contract) and a text table.

Each suite sums up its own records (`Suite.summarise`, e.g. `benchmark.suites.canitedit.summary`); this
module holds the run state every summary carries, the details edit suites share (flagged units, the
reference-free excess), the generic tables and the run-directory plumbing.

Every suite's scores are over the samples that got a verdict only: a sample that ended in an error of
the machinery (backend, sandbox, judge) is left out of them and counted in `errors` per condition, and
`complete` is false while any remains (or while samples of the run are still to do). Records are summed
in a fixed order (task, condition, backend, sample), so the summary's bytes do not depend on the order
results.jsonl was written in (a killed and resumed run gives the same summary.json as an uninterrupted one).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from benchmark import suites
from benchmark.report import metrics
from benchmark.run.records import RunConfig, SampleRecord, is_error
from benchmark.run.reference_free import pooled_excess
from benchmark.run.store import RESULTS, read_config, read_records, write_summary
from benchmark.suite import SuiteSummary

NAMED_ERRORS = 100


class FlakySample(msgspec.Struct, kw_only=True):
    """A timing-sensitive sample whose repeated runs split (the majority is its verdict)."""

    task: str
    sample: int
    outcome: str
    votes: list[bool]


class RunSummary(msgspec.Struct, kw_only=True):
    """summary.json: the suite's figures (`SuiteSummary`) and what they are over, the run's state."""

    suite: str
    backend: str
    conditions: dict[str, dict[str, Any]]
    details: dict[str, Any]
    complete: bool  # no error, nothing left to run, no passing sample without its follow-up numbers
    errors: dict[str, int]  # per condition
    error_kinds: dict[str, dict[str, int]]
    first_error: dict[str, str]
    error_samples: dict[str, list[str]]  # every sample left out of the scores (the first `NAMED_ERRORS`)
    flaky: dict[str, list[FlakySample]]
    partial: dict[str, int]  # passing samples whose follow-up run (coverage) failed
    n_verdicts: int
    missing: int | None  # samples not run yet; None: the run's plan is unknown
    scores: str  # what the scores are over, in words


def run_summary(config: RunConfig, records: list[SampleRecord]) -> RunSummary:
    suite = suites.get(config.suite, config.options)  # the run's options: they can change what is summarised
    ordered = sorted(records, key=lambda r: r.key)
    errors = [r for r in ordered if is_error(r, suite.input_error_kinds)]
    verdicts = [r for r in ordered if not is_error(r, suite.input_error_kinds)]
    body = suite.reporter.summarise(config, verdicts)
    return RunSummary(
        suite=config.suite,
        backend=config.backend,
        conditions=body.conditions,
        details=body.details,
        **run_state(config, body, verdicts, errors),
    )


def summarise(config: RunConfig, records: list[SampleRecord]) -> dict:
    """The run's summary as summary.json holds it (the document every report and comparison reads)."""
    return as_document(run_summary(config, records))


def as_document(summary: RunSummary) -> dict[str, Any]:
    document: dict[str, Any] = msgspec.to_builtins(summary)
    return document


def _error_kind(r: SampleRecord) -> str:
    return f"{r.outcome}/{r.error_kind}" if r.error_kind else r.outcome


def run_state(
    config: RunConfig, body: SuiteSummary, verdicts: list[SampleRecord], errors: list[SampleRecord]
) -> dict[str, Any]:
    """What the scores are over: errors per condition (with their kinds and the first message), verdicts
    that split under repeated runs (flaky), samples not run yet, and whether the scores are complete."""
    conds = list(body.conditions or {})
    conds += sorted({r.condition for r in errors} - set(conds))
    n_err = Counter(r.condition for r in errors)
    missing = max(config.planned - len(verdicts) - len(errors), 0) if config.planned else None
    flaky: dict[str, list[FlakySample]] = {}
    for r in verdicts:
        if r.flaky:
            flaky.setdefault(r.condition, []).append(
                FlakySample(task=r.task_id, sample=r.sample, outcome=r.outcome, votes=list(r.votes or []))
            )
    # passing samples whose follow-up run (coverage) failed: pass@1 counts them, their metrics are absent
    partial = Counter(r.condition for r in verdicts if r.outcome == "pass" and r.error is not None)
    complete = not errors and not missing and not partial
    left = [f"{len(errors)} ended in an error"] if errors else []
    left += [f"{missing} not run yet"] if missing else []
    left += [f"the numbers of {sum(partial.values())} passing whose follow-up run (coverage) failed"] if partial else []
    return {
        "complete": complete,
        "errors": {c: n_err.get(c, 0) for c in conds},
        "error_kinds": {
            c: dict(sorted(Counter(_error_kind(r) for r in errors if r.condition == c).items()))
            for c in conds
            if n_err.get(c)
        },
        "first_error": {
            c: next(
                f"{r.task_id} sample {r.sample}: {_error_kind(r)}: {' '.join((r.error or '').split())[:200]}"
                for r in errors
                if r.condition == c
            )
            for c in conds
            if n_err.get(c)
        },
        # every sample left out of the scores, by name (the first `NAMED_ERRORS` of each condition)
        "error_samples": {
            c: [
                f"{r.task_id} sample {r.sample}: {_error_kind(r)}: {' '.join((r.error or '').split())[:120]}"
                for r in errors
                if r.condition == c
            ][:NAMED_ERRORS]
            for c in conds
            if n_err.get(c)
        },
        "flaky": flaky,
        "partial": dict(sorted(partial.items())),
        "n_verdicts": len(verdicts),
        "missing": missing,
        "scores": f"over the {len(verdicts)} samples with a verdict"
        + ("" if complete else f"; incomplete, left out: {'; '.join(left)}"),
    }


def flag_details(passing: list[SampleRecord], prefix: str = "flagged", *, normalised: bool = False) -> dict:
    """Flagged change units of passing completions, as the server judged them (`flaggedHunks` with their
    `hunkSeverities`): the mean number at warning severity and at hint severity, and the flagged-unit rate,
    the share of completions with at least one unit at warning severity. Over the records that carry
    severities (`n_flag_counted`; older records have none). `normalised`: the over-editing suite's counts
    on the paper's footing (`flagged_warning_normalised`, from the record's metrics). On the server's
    footing also the units at warning severity per completion by the unrequested kind they are flagged for
    (`{prefix}_warning_kinds`, kinds sorted; a unit of two kinds counts under both), over the records that
    carry them (`n_kind_counted`)."""

    def counts(r: SampleRecord) -> tuple[int, int] | None:
        if normalised:
            w, h = r.metrics.get("flagged_warning_normalised"), r.metrics.get("flagged_hint_normalised")
        else:
            w, h = r.flagged_warning, r.flagged_hint
        return None if w is None or h is None else (int(w), int(h))

    got = [c for c in map(counts, passing) if c is not None]
    tag = "_normalised" if normalised else ""
    out: dict[str, Any] = {
        f"{prefix}_warning{tag}_mean": metrics.mean([float(w) for w, _ in got]),
        f"{prefix}_hint{tag}_mean": metrics.mean([float(h) for _, h in got]),
        f"{prefix}_warning{tag}_rate": metrics.mean([1.0 if w else 0.0 for w, _ in got]),
        f"n_flag_counted{tag}": len(got),
    }
    if not normalised:
        per = [r.flagged_warning_kinds for r in passing if r.flagged_warning_kinds is not None]
        out[f"{prefix}_warning_kinds"] = {
            k: metrics.mean([float(d.get(k, 0)) for d in per]) for k in sorted({k for d in per for k in d})
        }
        out["n_kind_counted"] = len(per)
    return out


KINDS_KEY = "flagged_warning_kinds"


def kind_figures(summary: dict, cond: str) -> dict | None:
    """A condition's flag details that hold the per-kind figures, wherever its suite keeps them (CanItEdit
    under `details`, CodeEditorBench under `details[...]["fidelity"]`, the over-editing suite in the
    condition's own row); None: the run has none (a suite without edits, a summary from before them)."""
    details = (summary.get("details") or {}).get(cond) or {}
    for place in (details, details.get("fidelity") or {}, (summary.get("conditions") or {}).get(cond) or {}):
        if isinstance(place, dict) and isinstance(place.get(KINDS_KEY), dict):
            return place
    return None


def kinds_table(summaries: list[dict], *, runs: bool) -> list[str]:
    """Unrequested units at warning severity per passing completion by kind, one row per (run, condition)
    that has the figures (`runs`: a column naming the run); [] when no row has them."""
    rows = [(s, cond, f) for s in summaries for cond in s.get("conditions") or {} if (f := kind_figures(s, cond))]
    if not rows:
        return []
    kinds = sorted({k for _, _, f in rows for k in f[KINDS_KEY]})
    width = {k: max(len(k), 6) for k in kinds}
    head = (f"{'backend':<48} " if runs else "") + f"{'condition':<12} {'n':>6} {'warned':>7} {'warn':>6}"
    head += "".join(f" {k:>{width[k]}}" for k in kinds)
    lines = [
        "unrequested units at warning severity per passing completion, by the kind they are flagged for:",
        head,
        "-" * len(head),
    ]
    for s, cond, f in rows:
        n = f.get("n_kind_counted") or 0
        line = (f"{run_name(s):<48} " if runs else "") + f"{cond:<12} {n:>6} "
        line += f"{pct(f.get('flagged_warning_rate')):>7} {fmt(f.get('flagged_warning_mean')):>6}"
        line += "".join(f" {(fmt(f[KINDS_KEY].get(k, 0.0)) if n else '-'):>{width[k]}}" for k in kinds)
        lines.append(line)
    lines.append(
        "n: passing completions whose record says the kinds (older records do not: run again); warned: share "
        "with >= 1 unit at warning severity; warn: such units per completion; a unit flagged for two kinds "
        "counts under both, a flagged statement inside a requested unit is a unit of its own."
    )
    return lines


def ref_free_details(passing: list[SampleRecord]) -> dict:
    """The reference-free excess (`bench run --necessity`) over passing completions, beside the gold-based
    token excess of the same completions; empty when the run did not analyse necessity."""
    done = [r for r in passing if r.metrics.get("excess_ref_free") is not None]
    if not any("necessity_status" in r.metrics for r in passing):
        return {}
    pairs = [(r.metrics["excess_ref_free"], r.excess_lev) for r in done if r.excess_lev is not None]
    # pooled over the condition's samples of each task: d(M, C) = excess + D_min
    pooled = pooled_excess(
        [(r.task_id, r.metrics["excess_ref_free"] + r.metrics["d_min"], r.metrics["d_min"]) for r in done]
    )
    pooled_pairs = [(p, r.excess_lev) for p, r in zip(pooled, done, strict=True) if r.excess_lev is not None]
    return {
        "excess_ref_free_mean": metrics.mean([r.metrics["excess_ref_free"] for r in done]),
        "excess_ref_free_mae_vs_gold": metrics.mean([abs(a - b) for a, b in pairs]),
        "excess_pooled_mean": metrics.mean(pooled),
        "excess_pooled_mae_vs_gold": metrics.mean([abs(a - b) for a, b in pooled_pairs]),
        "necessity_analysed": len(done),
        "necessity_runs_mean": metrics.mean(
            [float(r.metrics.get("necessity_runs") or 0) for r in passing if "necessity_runs" in r.metrics]
        ),
        "necessity_statuses": dict(Counter(str(r.metrics.get("necessity_status")) for r in passing)),
    }


def load_summary(run_dir: Path) -> dict:
    config = read_config(run_dir)
    return summarise(config, read_records(run_dir / RESULTS))


def report(run_dir: Path) -> dict:
    """Writes RUN_DIR/summary.json (the `RunSummary`); its document."""
    summary = run_summary(read_config(run_dir), read_records(run_dir / RESULTS))
    write_summary(run_dir, summary)
    return as_document(summary)


def fmt(x: object, nd: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def render_text(summary: dict) -> str:
    """The suite's table, then what its scores leave out (errors, samples not run, flaky verdicts)."""
    own = suites.get(summary["suite"]).reporter.render_text(summary)
    if own is None:
        own = render_generic(summary)
    kinds = kinds_table([summary], runs=False)
    if kinds:
        own += "\n\n" + "\n".join(kinds)
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
                lines.append(
                    f"  {cond}: {n} error(s) ({kinds}); first: {(summary.get('first_error') or {}).get(cond, '')}"
                )
        lines.append("  `bench run ... --resume` with the same options runs the errors and the missing samples again.")
    for cond, items in (summary.get("flaky") or {}).items():
        lines.append(
            f"FLAKY verdicts ({cond}): "
            + ", ".join(
                f"{f['task']} sample {f['sample']} ({sum(f['votes'])} of {len(f['votes'])} runs passed: {f['outcome']})"
                for f in items
            )
            + "; the majority is counted (timing-sensitive tests)."
        )
    return lines


def render_generic(summary: dict) -> str:
    """Any suite's summary: one row per condition, one column per summary metric."""
    conds = summary.get("conditions") or {}
    names: list[str] = []
    for m in conds.values():
        names += [k for k in m if k not in names and not isinstance(m[k], (dict, list))]
    lines = [f"suite {summary['suite']}   backend {summary['backend']}", ""]
    head = f"{'condition':<14}" + "".join(f" {n:>12}" for n in names)
    lines += [head, "-" * len(head)]
    for cond, m in conds.items():
        lines.append(f"{cond:<14}" + "".join(f" {fmt(m.get(n), 4):>12}" for n in names))
    return "\n".join(lines)


def run_name(summary: dict, width: int = 48) -> str:
    """A run's backend as tables name it: a recorded run by its file's name, without the archive's
    extension; a longer name loses its middle (runs of one family differ at the start or at the end)."""
    name = summary["backend"]
    if name.startswith("recorded:"):
        name = "recorded:" + Path(name.split(":", 1)[1]).name.removesuffix(".tar.gz").removesuffix(".tgz")
    if len(name) <= width:
        return name
    keep = width - 3
    return name[: keep - keep // 3] + "..." + name[len(name) - keep // 3 :]


def render_compare(summaries: list[dict]) -> str:
    """One row per (run, condition), one table per suite: the suite's own layout (`Suite.compare_table`,
    e.g. CanItEdit's paper table), else its summary metrics."""
    out: list[str] = []
    for suite, group in _by_suite(summaries).items():
        own = suites.get(suite).reporter.compare_table(group) if suite in suites.SUITES else None
        out.append(own if own is not None else _compare_generic(suite, group))
        kinds = kinds_table(group, runs=True)
        if kinds:
            out.append("\n".join(kinds))
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
    if len(group) < 2:
        return None
    labels: dict[str, dict] = {}
    for s in group:
        label = run_name(s)
        while label in labels:  # two runs of one backend: keep both
            label += "'"
        labels[label] = s
    return suites.get(suite).reporter.compare(labels)


def errors_cell(summary: dict, cond: str) -> str:
    """A run's errors in a condition, marked `!` when its scores are incomplete."""
    n = (summary.get("errors") or {}).get(cond, 0)
    return f"{n}!" if summary.get("complete") is False else str(n)


def incomplete_notes(summaries: list[dict]) -> list[str]:
    return [
        f"! {run_name(s)}: INCOMPLETE, scores {s.get('scores', '')}" for s in summaries if s.get("complete") is False
    ]


def _compare_generic(suite: str, summaries: list[dict]) -> str:
    names: list[str] = []
    for s in summaries:
        for m in s["conditions"].values():
            names += [k for k in m if k not in names and not isinstance(m[k], (dict, list))]
    widths = {n: max(12, len(n)) for n in names}  # a column as wide as its header: never cut or shifted
    head = f"{'backend':<48} {'condition':<12}" + "".join(f" {n:>{widths[n]}}" for n in names) + f" {'run errors':>10}"
    lines = [f"suite {suite}", head, "-" * len(head)]
    for s in summaries:
        for cond, m in s["conditions"].items():
            lines.append(
                f"{run_name(s):<48} {cond:<12}"
                + "".join(f" {fmt(m.get(n), 4):>{widths[n]}}" for n in names)
                + f" {errors_cell(s, cond):>10}"
            )
    return "\n".join(lines + incomplete_notes(summaries))
