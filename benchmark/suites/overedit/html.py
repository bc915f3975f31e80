"""The over-editing suite's part of the HTML report: the paper's figures, Pass@1 against excess (per
condition and per corruption family) and the per-family bars, with the conditions side by side."""

from __future__ import annotations

from typing import Any

from benchmark.report import charts
from benchmark.report.html import esc, flagged_kinds_chart, fmt, pct
from benchmark.run.records import SampleRecord


def _short(family: str) -> str:
    return family.removeprefix("mutate_").replace("_", " ")


# (header, key, format): the paper's columns first, then the server's flagged units, raw and normalised
COLUMNS = (
    ("Pass@1", "pass@1", "4"),
    ("Pass@1 (env installed)", "pass@1_installed", "4"),
    ("excess ELev", "excess_lev", "4"),
    ("excess ELev (body)", "excess_lev_body", "4"),
    ("added CC", "added_cc", "3"),
    ("|added CC|", "added_cc_abs", "3"),
    ("tasks", "n_tasks", ""),
    ("passing", "n_passing", ""),
    ("env missing", "n_env_missing", ""),
    ("warn / repair", "flagged_warning_mean", "2"),
    ("hint / repair", "flagged_hint_mean", "2"),
    ("warned", "flagged_warning_rate", "%"),
    ("warn / repair (normalised)", "flagged_warning_normalised_mean", "2"),
    ("hint / repair (normalised)", "flagged_hint_normalised_mean", "2"),
    ("warned (normalised)", "flagged_warning_normalised_rate", "%"),
)


def _cell(v: Any, how: str) -> str:
    if v is None or not isinstance(v, (int, float)):
        return "-" if v is None else esc(v)
    return pct(v) if how == "%" else fmt(v, int(how)) if how else str(v)


def table(summary: dict[str, Any]) -> str:
    """The conditions with labelled columns (not the summary's key names)."""
    conds = summary.get("conditions", {})
    cols = [c for c in COLUMNS if any(c[1] in m for m in conds.values())]
    head = "".join(f"<th>{esc(h)}</th>" for h, _, _ in cols)
    rows = "".join(
        f"<tr><td>{esc(c)}</td>" + "".join(f"<td>{_cell(m.get(k), how)}</td>" for _, k, how in cols) + "</tr>"
        for c, m in conds.items()
    )
    return f"<table><tr><th>condition</th>{head}</tr>{rows}</table>"


def sections(summary: dict[str, Any], records: list[SampleRecord]) -> str:
    """Per-condition and per-family charts (matplotlib, inline SVG)."""
    conds = summary.get("conditions", {})
    details = summary.get("details", {})
    names = list(conds)
    parts = ["<section><h2>Over-editing: pass rate against excess</h2>"]
    parts.append(
        charts.scatter(
            "Pass@1 against excess ELev, per condition",
            [(c, m.get("pass@1"), m.get("excess_lev")) for c, m in conds.items()],
            "Pass@1",
            "excess ELev (no_comments)",
        )
    )
    parts.append(
        charts.grouped_bars(
            "Pass@1, added CC and warned share per condition",
            names,
            {
                "Pass@1": [conds[c].get("pass@1") for c in names],
                "added CC": [conds[c].get("added_cc") for c in names],
                "warned (normalised)": [conds[c].get("flagged_warning_normalised_rate") for c in names],
            },
            "value",
            fmt="{:.2f}",
        )
    )
    families = sorted({f for c in names for f in (details.get(c, {}).get("per_family") or {})})
    fam = {c: details.get(c, {}).get("per_family") or {} for c in names}
    if families:
        labels = [_short(f) for f in families]
        parts.append("<h3>Per corruption family</h3>")
        for key, title, fmt in (
            ("pass@1", "Pass@1 per family", "{:.2f}"),
            ("excess_lev", "excess ELev per family", "{:.3f}"),
        ):
            series = {c: [(fam[c].get(f) or {}).get(key) for f in families] for c in names}
            parts.append(charts.grouped_bars(title, labels, series, key, fmt=fmt))
        for c in names:
            parts.append(
                charts.scatter(
                    f"{c}: Pass@1 against excess ELev per family",
                    [(_short(f), m.get("pass@1"), m.get("excess_lev")) for f, m in fam[c].items()],
                    "Pass@1",
                    "excess ELev",
                )
            )
    counts = sorted({k for c in names for k in (details.get(c, {}).get("per_corruptions") or {})}, key=str)
    if counts:
        per = {c: details.get(c, {}).get("per_corruptions") or {} for c in names}
        for key, title, fmt in (("pass@1", "Pass@1", "{:.2f}"), ("excess_lev", "excess ELev", "{:.3f}")):
            series = {c: [(per[c].get(k) or {}).get(key) for k in counts] for c in names}
            parts.append(charts.grouped_bars(f"{title} per number of corruptions", counts, series, title, fmt=fmt))
    parts.append(flagged_kinds_chart(records, names))
    for c in names:
        missing = details.get(c, {}).get("env_missing")
        if missing:
            parts.append(
                f"<p>{esc(c)}: environment lacks (not counted in the per-family figures): "
                + ", ".join(f"{esc(t)} ({esc(m)})" for t, m in missing.items())
                + "</p>"
            )
    parts.append(
        "<p>Excess ELev: d(M, C) - d(G, C), normalised token Levenshtein, no_comments; added CC: paper "
        "cognitive complexity CC(M) - CC(G); both over passing repairs. Flagged units (table above): "
        "unrequested change units at warning and at hint severity per passing repair, as the server judged "
        "the raw texts and on the paper's footing (both sides normalised, `_normalised`); the rate is the "
        "share of passing repairs with a unit at warning severity.</p></section>"
    )
    return "".join(parts)
