"""A run's self-contained HTML report (inline SVG charts, one inline script, no external files): opens
offline. Charts come from `benchmark.report.charts`; these names stay for the suites' html modules."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from markupsafe import Markup

from benchmark import suites
from benchmark.report import charts, kinds
from benchmark.report.browser import render_browser
from benchmark.report.summary import state_lines
from benchmark.report.templating import env
from benchmark.run.records import RunConfig, SampleRecord


def esc(x: object) -> str:
    return html.escape(str(x))


def fmt(x: float | None, nd: int = 2) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def bars(title: str, items: Sequence[tuple[str, float | None]], unit: str = "") -> str:
    return charts.bars(title, items, unit)


def scatter(title: str, points: Sequence[tuple[str, float, float]], xlabel: str, ylabel: str) -> str:
    return charts.scatter(title, points, xlabel, ylabel)


def histogram(title: str, values: Sequence[float], bins: int = 12, xlabel: str = "") -> str:
    return charts.histogram(title, values, xlabel or title, bins)


def flagged_kinds(records: list[SampleRecord], conds: list[str]) -> tuple[list[str], dict[str, list[float | None]]]:
    """Flagged units per kind and condition, per passing completion (the server's own judgement): units at
    warning severity by the kind they are flagged for where the records say it (`flagged_warning_kinds`),
    else (older records) flagged units by their first kind."""
    counts: dict[str, Counter[str]] = {c: Counter() for c in conds}
    passing: Counter[str] = Counter()
    by_kind = any(r.flagged_warning_kinds is not None for r in records)
    for r in records:
        if not r.passed or r.condition not in counts:
            continue
        if by_kind and r.flagged_warning_kinds is not None:
            passing[r.condition] += 1
            counts[r.condition].update(r.flagged_warning_kinds)
        elif not by_kind and r.units is not None:
            passing[r.condition] += 1
            counts[r.condition].update(k for u in r.units if u.flagged for k in u.kinds[:1])
    kinds = sorted(k for k in {k for c in counts.values() for k in c} if any(c[k] for c in counts.values()))
    return kinds, {c: [counts[c][k] / passing[c] if passing[c] else None for k in kinds] for c in conds}


def flagged_kinds_chart(records: list[SampleRecord], conds: list[str]) -> str:
    """Flagged units per passing completion by kind, one bar colour per condition (or why not)."""
    title = (
        "unrequested units at warning severity per passing completion, by kind"
        if any(r.flagged_warning_kinds is not None for r in records)
        else "flagged change units per passing completion, by kind"
    )
    kinds, per_kind = flagged_kinds(records, conds)
    if kinds:
        return charts.grouped_bars(title, kinds, per_kind, "units per completion", fmt="{:.2f}")
    if any(r.units is not None for r in records):
        return charts.left_out(title, "no passing completion has a flagged unit")
    return charts.left_out(title, "the records are from before change units were stored (run again to see them)")


def page(summary: dict, body: str, browser: str = "") -> str:
    """A whole report page around a suite's sections (and the sample browser)."""
    columns, rows = kinds.kind_table([(None, summary)])
    return (
        env()
        .get_template("report.html.j2")
        .render(
            summary=summary,
            banner=Markup(state_banner(summary)),
            body=Markup(body),
            browser=Markup(browser),
            kinds_columns=columns,
            kinds_rows=rows,
            kinds_note=kinds.NOTE,
        )
    )


def state_banner(summary: dict) -> str:
    """Errors and flaky verdicts above every table: a reader must not take incomplete scores for final."""
    lines = state_lines(summary)
    if not lines:
        return f'<p class="state">Complete: scores {esc(summary.get("scores", ""))}.</p>'
    items = "".join(f"<li>{esc(line.strip())}</li>" for line in lines)
    return f'<div class="state warn"><ul>{items}</ul></div>'


def metrics_table(summary: dict) -> str:
    """Every suite's summary metrics, one row per condition."""
    conds = summary.get("conditions") or {}
    names: list[str] = []
    for m in conds.values():
        names += [k for k in m if k not in names and not isinstance(m[k], (dict, list))]
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    rows = "".join(
        f"<tr><td>{esc(c)}</td>"
        + "".join(f"<td>{esc(fmt(m.get(n), 4) if isinstance(m.get(n), float) else m.get(n, '-'))}</td>" for n in names)
        + "</tr>"
        for c, m in conds.items()
    )
    return f"<table><tr><th>condition</th>{head}</tr>{rows}</table>"


def render(
    summary: dict, records: list[SampleRecord], run_dir: Path | None = None, config: RunConfig | None = None
) -> str:
    """The run's report page: the suite's own sections, then every sample in the browser."""
    own = suites.get(summary["suite"]).reporter.html_sections(summary, records)
    return page(summary, own if own is not None else metrics_table(summary), render_browser(records, run_dir, config))
