"""`bench compare RUN... --html FILE`: one page with models side by side. A sortable leaderboard (each
suite's headline metrics and the fidelity columns, one row per run and condition), Pass@1 against token
excess with one point per run, and the per-task differences (where one run passes minimally and another
over-edits or fails), with a warning when the runs do not cover the same tasks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from statistics import mean
from typing import Any

from markupsafe import Markup

from benchmark import suites
from benchmark.report import charts, kinds
from benchmark.report.summary import run_name
from benchmark.report.templating import env
from benchmark.run.records import SampleRecord, is_error
from benchmark.run.store import RESULTS, read_records

# each suite's headline numbers, in its papers' terms (from the summary's per-condition metrics)
HEADLINE = {
    "canitedit": ("pass@1", "excess_code"),
    "overedit": ("pass@1", "excess_lev", "added_cc"),
    "codeeditorbench": ("pass@1", "opt_score"),
    "canaicode": ("score", "points", "total"),
    "bics": ("accuracy", "accuracy_without_longest"),
}
# a summary key as the papers' tables head it
LABELS = {
    "excess_code": "ExcessCode",
    "excess_lev": "excess ELev",
    "added_cc": "paper added CC",  # (the fidelity columns have their own "added CC")
    "opt_score": "OptScore",
    "accuracy_without_longest": "accuracy w/o longest",
}
MINIMAL = 0.01  # token excess (normalised) up to which a passing edit counts as minimal


class Run:
    def __init__(self, run_dir: Path, summary: dict[str, Any], records: Sequence[SampleRecord], label: str) -> None:
        self.dir, self.summary, self.records, self.label = run_dir, summary, records, label

    @property
    def suite(self) -> str:
        return str(self.summary["suite"])


def _mean(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return mean(vals) if vals else None


def fidelity(records: Sequence[SampleRecord]) -> dict[str, float | int | None]:
    """The fidelity columns, the same for every suite: over samples with a verdict, then passing ones."""
    judged = [r for r in records if not is_error(r)]
    passing = [r for r in judged if r.passed]
    warned = [r.flagged_warning for r in passing]
    return {
        "samples": len(records),
        "errors": len(records) - len(judged),
        "pass rate": None if not judged else round(100 * len(passing) / len(judged), 2),
        "token excess": _mean([r.excess_lev for r in passing]),
        "added CC": _mean([r.added_cc for r in passing]),
        "flagged units": _mean([float(r.flagged_hunks) for r in passing]),
        "warned share": None
        if not passing or all(w is None for w in warned)
        else round(sum(1 for w in warned if w) / len(passing), 4),
    }


def leaderboard(runs: Sequence[Run]) -> tuple[list[str], list[list[Any]]]:
    heads: list[str] = []
    for run in runs:
        for name in HEADLINE.get(run.suite, ()):
            if name not in heads:
                heads.append(name)
    columns = ["run", "suite", "condition", *(LABELS.get(h, h) for h in heads), *fidelity([]).keys()]
    rows = []
    for run in runs:
        by_cond: dict[str, list[SampleRecord]] = defaultdict(list)
        for r in run.records:
            by_cond[r.condition].append(r)
        for cond, metrics in (run.summary.get("conditions") or {}).items():
            rows.append(
                [
                    run.label,
                    run.suite,
                    cond,
                    *(metrics.get(h) for h in heads),
                    *fidelity(by_cond.get(cond, [])).values(),
                ]
            )
    return columns, rows


def coverage_warnings(runs: Sequence[Run]) -> list[str]:
    """Why the runs are not directly comparable: other suites, other conditions, other tasks."""
    out = []
    if len({r.suite for r in runs}) > 1:
        out.append("the runs are of different suites: " + ", ".join(f"{r.label} ({r.suite})" for r in runs))
    tasks = {r.label: {(x.task_id, x.condition) for x in r.records} for r in runs}
    common = set.intersection(*tasks.values()) if tasks else set()
    for label, own in tasks.items():
        if own != common:
            out.append(
                f"{label} covers {len({t for t, _ in own})} tasks ({len(own)} task-conditions), of which "
                f"{len(own - common)} task-conditions are not in every run: compare the per-task table, not the totals"
            )
    return out


def task_differences(runs: Sequence[Run], limit: int = 60) -> tuple[list[str], list[dict[str, Any]]]:
    """Task-conditions in every run where the runs differ: one passes minimally, another over-edits or fails."""
    per: dict[tuple[str, str], dict[str, list[SampleRecord]]] = defaultdict(dict)
    for run in runs:
        for r in run.records:
            per[(r.task_id, r.condition)].setdefault(run.label, []).append(r)
    labels = [r.label for r in runs]
    out: list[dict[str, Any]] = []
    for (task, cond), by_run in per.items():
        if len(by_run) < len(labels):
            continue
        cells: dict[str, dict[str, Any]] = {}
        kinds: set[str] = set()
        for label in labels:
            recs = [r for r in by_run[label] if not is_error(r)]
            passing = [r for r in recs if r.passed]
            excess = _mean([r.excess_lev for r in passing])
            kind = (
                "error"
                if not recs
                else "fail"
                if not passing
                else "minimal"
                if excess is None or excess <= MINIMAL
                else "over-edit"
            )
            kinds.add(kind)
            cells[label] = {"kind": kind, "passed": len(passing), "n": len(recs), "excess": excess}
        if "minimal" in kinds and kinds & {"over-edit", "fail"}:
            spread = max(float(c["excess"] or 0.0) for c in cells.values())
            out.append({"task": task, "condition": cond, "cells": cells, "spread": spread})
    out.sort(key=lambda d: (-float(d["spread"]), str(d["task"])))
    return labels, out[:limit]


def across_runs(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Each suite's own figures across its runs (`Suite.compare`): CodeEditorBench's Win Rate as a table,
    any other suite's as its text."""
    out = []
    for suite in dict.fromkeys(r.suite for r in runs):
        group = {r.label: r.summary for r in runs if r.suite == suite}
        if len(group) < 2 or suite not in suites.SUITES:
            continue
        got = suites.get(suite).reporter.compare(group)
        if got is None:
            continue
        numbers, text = got
        rates = numbers.get("win_rate") if isinstance(numbers, dict) else None
        if isinstance(rates, dict):
            cats = sorted({c for w in rates.values() for c in (w.get("scores") or {})})
            rows = sorted(
                (
                    [label, w.get("win_rate"), *((w.get("scores") or {}).get(c) for c in cats)]
                    for label, w in rates.items()
                ),
                key=lambda row: -(row[1] if row[1] is not None else -1.0),
            )
            out.append({"suite": suite, "title": "Win Rate", "columns": ["run", "win rate", *cats], "rows": rows})
        else:
            out.append({"suite": suite, "title": "across runs", "text": text})
    return out


def _labels(run_dirs: Sequence[Path], summaries: Sequence[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for d, s in zip(run_dirs, summaries, strict=True):
        label = run_name(s, 64)  # a page has room for more of the name than a terminal
        if label in out:  # two runs of one backend: their directories tell them apart
            label = f"{label} ({d.name})"
        while label in out:
            label += "'"
        out.append(label)
    return out


def render_compare_html(run_dirs: Sequence[Path], summaries: Sequence[dict[str, Any]]) -> str:
    runs = [
        Run(d, s, read_records(d / RESULTS), label)
        for d, s, label in zip(run_dirs, summaries, _labels(run_dirs, summaries), strict=True)
    ]
    columns, rows = leaderboard(runs)
    points = []
    for run in runs:
        f = fidelity(run.records)
        points.append((run.label, f["pass rate"], f["token excess"]))
    scatter = charts.scatter(
        "Pass@1 against token excess, one point per run", points, "pass rate (%)", "token excess (passing)"
    )
    labels, diffs = task_differences(runs)
    reports = {r.label: (r.dir / "report.html").resolve().as_uri() for r in runs if (r.dir / "report.html").exists()}
    kinds_columns, kinds_rows = kinds.kind_table([(r.label, r.summary) for r in runs])
    return (
        env()
        .get_template("compare.html.j2")
        .render(
            columns=columns,
            rows=rows,
            scatter=Markup(scatter),
            warnings=coverage_warnings(runs),
            labels=labels,
            diffs=diffs,
            reports=reports,
            minimal=MINIMAL,
            runs=runs,
            across=across_runs(runs),
            kinds_columns=kinds_columns,
            kinds_rows=kinds_rows,
            kinds_note=kinds.NOTE,
        )
    )
