"""CanItEdit's part of the HTML report: the paper's table, pass@1 and ExcessCode per instruction kind and
per change kind (the paper's figures), pass@1 against ExcessCode, and the flagged change units by kind."""

from __future__ import annotations

from benchmark.report import charts
from benchmark.report.html import esc, flagged_kinds_chart, fmt, pct
from benchmark.run.records import SampleRecord


def _table(conds: dict, details: dict) -> str:
    rows = "".join(
        f"<tr><td>{esc(c)}</td><td>{fmt(m['pass@1'], 1)}</td><td>{fmt(m['excess_code'])}</td><td>{m['n_tasks']}</td>"
        f"<td>{m['n_samples']}</td><td>{fmt(details[c].get('excess_lev_mean'), 4)}</td>"
        f"<td>{fmt(details[c].get('added_cc_mean'))}</td>"
        f"<td>{fmt(details[c].get('flagged_hunks_mean'))}</td>"
        f"<td>{fmt(details[c].get('flagged_warning_mean'))}</td><td>{fmt(details[c].get('flagged_hint_mean'))}</td>"
        f"<td>{pct(details[c].get('flagged_warning_rate'))}</td>"
        f"<td>{fmt(100 * details[c]['recorded_agreement'], 2) + '%' if 'recorded_agreement' in details[c] else '-'}</td></tr>"
        for c, m in conds.items()
    )
    return f"""<table><tr><th>condition</th><th>pass@1</th><th>ExcessCode</th><th>tasks</th><th>n</th><th>token excess</th><th>added CC</th>
<th>flagged units</th><th>at warning severity</th><th>at hint severity</th><th>flagged-unit rate</th>
<th>agreement with recorded</th></tr>{rows}</table>"""


def sections(summary: dict, records: list[SampleRecord]) -> str:
    conds = summary["conditions"]
    details = summary["details"]
    names = list(conds)
    plots = [
        charts.grouped_bars(
            "pass@1 per instruction kind", names, {"pass@1": [conds[c]["pass@1"] for c in names]}, "pass@1 (x100)"
        ),
        charts.grouped_bars(
            "ExcessCode per instruction kind",
            names,
            {"ExcessCode": [conds[c]["excess_code"] for c in names]},
            "ExcessCode (x100)",
            fmt="{:.2f}",
        ),
        charts.scatter(
            "pass@1 against ExcessCode, per instruction kind",
            [(c, conds[c]["pass@1"], conds[c]["excess_code"]) for c in names],
            "pass@1 (x100)",
            "ExcessCode (x100)",
        ),
    ]
    change_kinds = sorted({k for c in names for k in (details[c].get("per_change_kind") or {})})
    if change_kinds:
        per = {c: details[c].get("per_change_kind") or {} for c in names}
        plots.append(
            charts.grouped_bars(
                "pass@1 per change kind",
                change_kinds,
                {c: [(per[c].get(k) or {}).get("pass@1") for k in change_kinds] for c in names},
                "pass@1 (x100)",
            )
        )
        plots.append(
            charts.grouped_bars(
                "ExcessCode per change kind",
                change_kinds,
                {c: [(per[c].get(k) or {}).get("excess_code") for k in change_kinds] for c in names},
                "ExcessCode (x100)",
                fmt="{:.2f}",
            )
        )
    plots.append(
        charts.histogram(
            "token excess over gold (passing completions)",
            [r.excess_lev for r in records if r.passed and r.excess_lev is not None],
            "excess ELev d(M,C) - d(G,C)",
        )
    )
    plots.append(flagged_kinds_chart(records, names))
    return f"""{_table(conds, details)}
<div class="charts">{"".join(plots)}</div>
<p>pass@1 and ExcessCode as CanItEdit (x100). Token excess: d(M, C) - d(G, C), no_comments; added CC: paper cognitive
complexity CC(M) - CC(G); flagged units: unrequested change units (any severity, then at warning severity and at
hint severity, per completion); flagged-unit rate: the share of completions with at least one unit at warning
severity; all over passing completions. Change kinds: the
dataset's taxonomy (corrective, adaptive, perfective).</p>"""
