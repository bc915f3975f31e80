"""can-ai-code's part of the HTML report: the score per interview and per condition, statuses, and the
questions that lost points."""

from __future__ import annotations

from typing import Any

from benchmark.report import charts
from benchmark.report.html import esc, fmt
from benchmark.run.records import SampleRecord


def sections(summary: dict[str, Any], records: list[SampleRecord]) -> str:
    conds: dict[str, Any] = dict(summary.get("conditions") or {})
    details = summary.get("details") or {}
    rows = "".join(
        f"<tr><td>{esc(c)}</td><td>{m.get('points')}</td><td>{m.get('total')}</td><td>{fmt(m.get('score'), 4)}</td>"
        f"<td>{m.get('n_questions')}</td><td>{esc(', '.join(f'{k} {v}' for k, v in sorted(((details.get(c) or {}).get('statuses') or {}).items())))}</td></tr>"
        for c, m in conds.items()
    )
    overall = details.get("overall") or {}
    interviews = sorted({i for c in conds for i in ((details.get(c) or {}).get("interviews") or {})})
    per = {c: (details.get(c) or {}).get("interviews") or {} for c in conds}
    plots = [
        charts.grouped_bars(
            "score per interview",
            interviews,
            {c: [(per[c].get(i) or {}).get("score") for i in interviews] for c in conds},
            "points / total",
            fmt="{:.2f}",
        ),
        charts.bars(
            "score per condition", [(c, m.get("score")) for c, m in conds.items()], "points / total", fmt="{:.3f}"
        ),
    ]
    lost = [
        (c, x) for c in conds for x in ((details.get(c) or {}).get("rows") or []) if x.get("points") != x.get("total")
    ]
    lost_rows = "".join(
        f"<tr><td>{esc(c)}</td><td>{esc(x['task'])}</td><td>{x.get('sample')}</td><td>{esc(x.get('status'))}</td>"
        f"<td>{x.get('points')}/{x.get('total')}</td><td>{esc(x.get('error', ''))}</td></tr>"
        for c, x in lost[:200]
    )
    return (
        "<table><tr><th>condition</th><th>points</th><th>total</th><th>score</th><th>questions</th><th>statuses</th>"
        f"</tr>{rows}</table>"
        f"<p>Overall: {overall.get('points', '-')} of {overall.get('total', '-')} points "
        f"({fmt(overall.get('score'), 4)}).</p>"
        f'<div class="charts">{"".join(plots)}</div>'
        f"<h2>Questions that lost points ({len(lost)})</h2>"
        + (
            "<table><tr><th>condition</th><th>question</th><th>sample</th><th>status</th><th>points</th><th>error</th>"
            f"</tr>{lost_rows}</table>"
            if lost
            else "<p>None.</p>"
        )
    )
