"""CodeEditorBench's part of the HTML report: pass@1 per kind (zero-shot beside 3-shot), OptScore for
polish, verdict classes per kind, and the fidelity of passing edits (excess, flagged units) per kind."""

from __future__ import annotations

from collections import Counter
from typing import Any

from benchmark.report import charts
from benchmark.report.html import esc, flagged_kinds_chart, fmt, pct
from benchmark.run.records import SampleRecord
from benchmark.suites.codeeditorbench.kinds import KINDS


def _table(conds: dict[str, Any], details: dict[str, Any]) -> str:
    rows = []
    for c, m in conds.items():
        f = (details.get(c) or {}).get("fidelity") or {}
        rows.append(
            f"<tr><td>{esc(c)}</td><td>{fmt(m.get('pass@1'), 4)}</td><td>{fmt(m.get('opt_score'), 4)}</td>"
            f"<td>{m.get('n_tasks', '-')}</td><td>{m.get('n_samples', '-')}</td>"
            f"<td>{fmt(f.get('excess_lev_mean'), 4)}</td><td>{fmt(f.get('added_cc_mean'))}</td>"
            f"<td>{fmt(f.get('flagged_hunks_mean'))}</td><td>{pct(f.get('flagged_warning_rate'))}</td>"
            f"<td>{esc(', '.join(f'{k} {v}' for k, v in sorted(((details.get(c) or {}).get('verdicts') or {}).items())))}"
            "</td></tr>"
        )
    return (
        "<table><tr><th>condition</th><th>pass@1</th><th>OptScore</th><th>tasks</th><th>n</th><th>token excess</th>"
        "<th>added CC</th><th>flagged units</th><th>flagged-unit rate</th><th>verdicts</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def sections(summary: dict[str, Any], records: list[SampleRecord]) -> str:
    conds = summary.get("conditions") or {}
    details = summary.get("details") or {}
    kinds = [k for k in KINDS if k in conds or f"{k}-3shot" in conds]
    shots = {"zero-shot": "", "3-shot": "-3shot"}
    series = {
        name: [(conds.get(k + suffix) or {}).get("pass@1") for k in kinds]
        for name, suffix in shots.items()
        if any(k + suffix in conds for k in kinds)
    }
    plots = [charts.grouped_bars("pass@1 per kind", kinds, series, "pass@1 (fraction)", fmt="{:.3f}")]
    polish = [c for c in conds if "opt_score" in conds[c]]
    if polish:
        plots.append(charts.bars("OptScore (polish)", [(c, conds[c].get("opt_score")) for c in polish], "OptScore"))
    verdicts: dict[str, Counter[str]] = {c: Counter((details.get(c) or {}).get("verdicts") or {}) for c in conds}
    classes = sorted({v for c in verdicts.values() for v in c})
    if classes:
        plots.append(
            charts.grouped_bars(
                "verdicts per condition",
                list(conds),
                {v: [float(verdicts[c][v]) for c in conds] for v in classes},
                "samples",
                fmt="{:.0f}",
            )
        )
    fid = {c: (details.get(c) or {}).get("fidelity") or {} for c in conds}
    edited = [c for c in conds if fid[c]]
    if edited:
        plots.append(
            charts.grouped_bars(
                "fidelity of passing edits per condition",
                edited,
                {
                    "token excess": [fid[c].get("excess_lev_mean") for c in edited],
                    "flagged units": [fid[c].get("flagged_hunks_mean") for c in edited],
                },
                "mean per passing edit",
                fmt="{:.3f}",
            )
        )
    plots.append(flagged_kinds_chart(records, list(conds)))
    return (
        _table(conds, details)
        + f'<div class="charts">{"".join(plots)}</div>'
        + "<p>pass@1 as CodeEditorBench (a fraction); OptScore: the polish kind's speed/memory gain over the "
        "original among correct answers; Win Rate needs several runs: <code>bench compare RUN... --html FILE</code>. "
        "Token excess and flagged units: over passing edits (not translate), as the server judged them.</p>"
    )
