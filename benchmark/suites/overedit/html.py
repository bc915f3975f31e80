"""The over-editing suite's part of the HTML report: pass rate against excess, per condition and family."""

from __future__ import annotations

from typing import Any

from benchmark.html import bars, esc, scatter
from benchmark.records import SampleRecord


def sections(summary: dict[str, Any], records: list[SampleRecord]) -> str:
    """Per-condition and per-family plots (pass rate against excess, as in the paper's figures), inline SVG."""
    conds = summary.get("conditions", {})
    parts = ["<section><h2>Over-editing: pass rate against excess</h2>"]
    points = [(c, m["pass@1"], m["excess_lev"]) for c, m in conds.items()
              if m.get("pass@1") is not None and m.get("excess_lev") is not None]
    parts.append(scatter("conditions: Pass@1 against excess ELev", points, "Pass@1", "excess ELev (no_comments)"))
    parts.append(bars("Pass@1 per condition", [(c, m.get("pass@1")) for c, m in conds.items()]))
    parts.append(bars("added cognitive complexity per condition", [(c, m.get("added_cc")) for c, m in conds.items()]))
    parts.append(bars("flagged-unit rate, normalised (% of passing repairs warned)",
                      [(c, None if m.get("flagged_warning_normalised_rate") is None
                        else 100 * m["flagged_warning_normalised_rate"]) for c, m in conds.items()]))
    for cond, d in summary.get("details", {}).items():
        fam = d.get("per_family", {})
        short = {f: f.removeprefix("mutate_").replace("_", " ") for f in fam}
        fpoints = [(short[f], m["pass@1"], m["excess_lev"]) for f, m in fam.items()
                   if m.get("pass@1") is not None and m.get("excess_lev") is not None]
        parts.append(f"<h3>{esc(cond)}: per corruption family</h3>")
        parts.append(scatter(f"{cond}: Pass@1 against excess ELev per family", fpoints, "Pass@1", "excess ELev"))
        parts.append(bars(f"{cond}: Pass@1 per family", [(short[f], m.get("pass@1")) for f, m in fam.items()]))
        parts.append(bars(f"{cond}: excess ELev per family", [(short[f], m.get("excess_lev")) for f, m in fam.items()]))
        count = d.get("per_corruptions", {})
        parts.append(bars(f"{cond}: Pass@1 per number of corruptions", [(k, m.get("pass@1")) for k, m in count.items()]))
        if d.get("env_missing"):
            parts.append("<p>Environment lacks (not counted in the per-family figures): "
                         + ", ".join(f"{esc(t)} ({esc(m)})" for t, m in d["env_missing"].items()) + "</p>")
    parts.append("<p>Excess ELev: d(M, C) - d(G, C), normalised token Levenshtein, no_comments; added CC: paper "
                 "cognitive complexity CC(M) - CC(G); both over passing repairs. Flagged units (table above): "
                 "unrequested change units at warning and at hint severity per passing repair, as the server judged "
                 "the raw texts and on the paper's footing (both sides normalised, `_normalised`); the rate is the "
                 "share of passing repairs with a unit at warning severity.</p></section>")
    return "".join(parts)
