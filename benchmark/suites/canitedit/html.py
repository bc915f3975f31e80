"""CanItEdit's part of the HTML report: the paper's table, pass@1 against ExcessCode, per kind and change kind."""

from __future__ import annotations

from benchmark.html import bars, esc, fmt, histogram, pct, scatter
from benchmark.records import SampleRecord


def sections(summary: dict, records: list[SampleRecord]) -> str:
    conds = summary["conditions"]
    details = summary["details"]
    rows = "".join(
        f"<tr><td>{esc(c)}</td><td>{fmt(m['pass@1'], 1)}</td><td>{fmt(m['excess_code'])}</td><td>{m['n_tasks']}</td>"
        f"<td>{m['n_samples']}</td><td>{fmt(details[c].get('excess_lev_mean'), 4)}</td>"
        f"<td>{fmt(details[c].get('added_cc_mean'))}</td>"
        f"<td>{fmt(details[c].get('flagged_hunks_mean'))}</td>"
        f"<td>{fmt(details[c].get('flagged_warning_mean'))}</td><td>{fmt(details[c].get('flagged_hint_mean'))}</td>"
        f"<td>{pct(details[c].get('flagged_warning_rate'))}</td>"
        f"<td>{fmt(100 * details[c]['recorded_agreement'], 2) + '%' if 'recorded_agreement' in details[c] else '-'}</td></tr>"
        for c, m in conds.items())
    points = [(c, m["pass@1"], m["excess_code"]) for c, m in conds.items()
              if m["pass@1"] is not None and m["excess_code"] is not None]
    lev = [r.excess_lev for r in records if r.passed and r.excess_lev is not None]
    plots = [
        scatter("pass@1 against ExcessCode", points, "pass@1 (x100)", "ExcessCode (x100)"),
        bars("pass@1 per instruction kind", [(c, m["pass@1"]) for c, m in conds.items()]),
        bars("ExcessCode per instruction kind", [(c, m["excess_code"]) for c, m in conds.items()]),
        histogram("token excess over gold (passing completions)", lev),
    ]
    for c in conds:
        per_kind = details[c].get("per_change_kind") or {}
        if per_kind:
            plots.append(bars(f"pass@1 per change kind ({c})", [(k, v["pass@1"]) for k, v in per_kind.items()]))
            plots.append(bars(f"ExcessCode per change kind ({c})", [(k, v["excess_code"]) for k, v in per_kind.items()]))
    return f"""<table><tr><th>condition</th><th>pass@1</th><th>ExcessCode</th><th>tasks</th><th>n</th><th>token excess</th><th>added CC</th>
<th>flagged units</th><th>at warning severity</th><th>at hint severity</th><th>flagged-unit rate</th>
<th>agreement with recorded</th></tr>{rows}</table>
<div>{''.join(plots)}</div>
<p>pass@1 and ExcessCode as CanItEdit (x100). Token excess: d(M, C) - d(G, C), no_comments; added CC: paper cognitive
complexity CC(M) - CC(G); flagged units: unrequested change units (any severity, then at warning severity and at
hint severity, per completion); flagged-unit rate: the share of completions with at least one unit at warning
severity; all over passing completions. Change kinds: the
dataset's taxonomy (corrective, adaptive, perfective).</p>"""
