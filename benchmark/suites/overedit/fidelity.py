"""A repair's numbers: excess ELev over the gold and added cognitive complexity, read from the report the
server sent for it (`report_fidelity`), and flagged change units on the paper's (normalised) footing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmark.suites.overedit.tasks import Task


def fidelity(task: Task, completion: str) -> dict[str, Any]:
    """`report_fidelity` of the core's report for a repair (what the server reports for it in a run)."""
    import msgspec

    from server.fidelity import measure

    return report_fidelity(msgspec.to_builtins(measure(task.before, completion, gold=task.after)))


def report_fidelity(report: dict[str, Any]) -> dict[str, Any]:
    """Excess ELev (no_comments, body_no_comments), the distances, and added paper cognitive complexity
    (the repair's minus the gold's), read from a report measured against the gold edit."""
    excess = report.get("excess") or {}
    gold = report.get("gold_distance") or {}
    after = ((report.get("complexity") or {}).get("paper") or {}).get("after")
    gold_after = ((report.get("gold_complexity") or {}).get("paper") or {}).get("after")

    def normalized(variant: str) -> float | None:
        return (report.get("distance") or {}).get(variant, {}).get("normalized")

    return {
        "distance": normalized("no_comments"),
        "gold_distance": gold.get("no_comments", {}).get("normalized"),
        "gold_distance_body": gold.get("body_no_comments", {}).get("normalized"),
        "gold_distance_raw": gold.get("raw", {}).get("normalized"),
        "gold_tokens": gold.get("no_comments", {}).get("tokens"),
        "excess_lev": excess.get("no_comments"),
        "excess_lev_body": excess.get("body_no_comments"),
        "added_cc": after - gold_after if after is not None and gold_after is not None else None,
    }


def normalised_flags(task: Task, condition: str, completion: str) -> dict[str, Any]:
    """Flagged change units of a repair on the paper's footing: both sides `ast.unparse`-normalised, as
    the paper's distance compares them, so the dataset's layout differences (the corrupted program is the
    normalised reference) are not blamed on the model. The server judges the raw texts (the record's
    `flagged_warning`); it cannot judge texts no backend answered, so this is the pure core and the
    judge's own rules (`server.fidelity.flags`) at the default severity settings, with the instruction
    the model got."""
    from server.fidelity import measure, normalize
    from server.fidelity.flags import count_unit_flags

    c, m = normalize(task.before), normalize(completion)
    rep = measure(c, m)
    warn, hint = count_unit_flags(rep, task.instruction(condition), original=c, edited=m)
    return {"flagged_warning_normalised": warn, "flagged_hint_normalised": hint, "units_normalised": len(rep.hunks)}
