"""Unrequested units by kind, per run and condition, for the run report and the comparison page: the share of
passing completions with at least one unrequested unit at warning severity, and such units per completion by
the kind the server flagged them for (the summary's `flag_details`, wherever the suite keeps them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmark.report.summary import KINDS_KEY, kind_figures

FIXED = ("passing counted", "warned share", "warning units")
NOTE = (
    "Over passing completions whose record says the kinds (older records do not: run again). Warned share: "
    "completions with at least one unrequested unit at warning severity; warning units: such units per "
    "completion; then such units per completion by the kind they are flagged for (a unit flagged for two "
    "kinds counts under both; an unrequested statement inside a requested unit is a unit of its own)."
)


def kind_table(summaries: Sequence[tuple[str | None, dict[str, Any]]]) -> tuple[list[str], list[list[Any]]]:
    """(columns, rows): one row per (run, condition) whose summary has the figures; `summaries` as
    (label, summary), label None for a run's own report (no run column). ([], []): no figures at all."""
    found = [
        (label, cond, f)
        for label, s in summaries
        for cond in s.get("conditions") or {}
        if (f := kind_figures(s, cond)) is not None
    ]
    if not found:
        return [], []
    kinds = sorted({k for _, _, f in found for k in f[KINDS_KEY]})
    runs = any(label is not None for label, _, _ in found)
    columns = [*(["run"] if runs else []), "condition", *FIXED, *kinds]
    rows = []
    for label, cond, f in found:
        n = int(f.get("n_kind_counted") or 0)
        rows.append(
            [
                *([label] if runs else []),
                cond,
                n,
                f.get("flagged_warning_rate"),
                f.get("flagged_warning_mean"),
                *((f[KINDS_KEY].get(k, 0.0) if n else None) for k in kinds),
            ]
        )
    return columns, rows
