"""A repair's numbers: excess ELev over the gold and added cognitive complexity, read from the report the
server sent for it (`report_fidelity`), and flagged change units on the paper's (normalised) footing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmark.suites.overedit.tasks import Task
    from server.protocol.report import Distance, FidelityReport


def fidelity(task: Task, completion: str) -> dict[str, Any]:
    """`report_fidelity` of the core's report for a repair (what the server reports for it in a run)."""
    from server.fidelity import measure

    return report_fidelity(measure(task.before, completion, gold=task.after))


def report_fidelity(report: FidelityReport) -> dict[str, Any]:
    """Excess ELev (no_comments, body_no_comments), the distances, and added paper cognitive complexity
    (the repair's minus the gold's), read from a report measured against the gold edit."""
    excess = report.excess or {}
    gold = report.gold_distance or {}
    paper = report.complexity.get("paper")
    gold_paper = (report.gold_complexity or {}).get("paper")
    after = paper.after if paper is not None else None
    gold_after = gold_paper.after if gold_paper is not None else None

    def normalized(distances: dict[str, Distance], variant: str) -> float | None:
        d = distances.get(variant)
        return d.normalized if d is not None else None

    tokens = gold.get("no_comments")
    return {
        "distance": normalized(report.distance, "no_comments"),
        "gold_distance": normalized(gold, "no_comments"),
        "gold_distance_body": normalized(gold, "body_no_comments"),
        "gold_distance_raw": normalized(gold, "raw"),
        "gold_tokens": tokens.tokens if tokens is not None else None,
        "excess_lev": excess.get("no_comments"),
        "excess_lev_body": excess.get("body_no_comments"),
        "added_cc": after - gold_after if after is not None and gold_after is not None else None,
    }


def normalised_flags(task: Task, condition: str, completion: str) -> dict[str, Any]:
    """Flagged change units of a repair on the paper's footing: both sides `ast.unparse`-normalised, as
    the paper's distance compares them, so the dataset's layout differences (the corrupted program is the
    normalised reference) are not blamed on the model. The server judges the raw texts (the record's
    `flagged_warning`); it cannot judge texts no backend answered, so this is the pure core and the
    judge's own rules (`server.fidelity.judge.flags`) at the default severity settings, with the instruction
    the model got."""
    from server.fidelity import measure, normalize
    from server.fidelity.judge.flags import count_unit_flags

    c, m = normalize(task.before), normalize(completion)
    rep = measure(c, m)
    warn, hint = count_unit_flags(rep, task.instruction(condition), original=c, edited=m)
    return {"flagged_warning_normalised": warn, "flagged_hint_normalised": hint, "units_normalised": len(rep.hunks)}
