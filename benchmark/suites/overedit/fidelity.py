"""A repair's numbers from the texts alone (the pure core): excess ELev over the gold, added cognitive
complexity, and flagged change units on the paper's (normalised) footing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmark.suites.overedit.tasks import Task


def fidelity(task: Task, completion: str) -> dict[str, Any]:
    """Excess ELev (no_comments, body_no_comments), the distances, and added paper cognitive complexity."""
    from server.fidelity import measure

    rep = measure(task.before, completion, gold=task.after)
    excess = rep.excess or {}
    gold = rep.gold_distance or {}
    cc = measure(task.after, completion).complexity["paper"]  # before: CC(G), after: CC(M)
    added = cc.after - cc.before if cc.after is not None and cc.before is not None else None
    return {
        "distance": rep.distance["no_comments"].normalized,
        "gold_distance": gold["no_comments"].normalized if "no_comments" in gold else None,
        "gold_distance_body": gold["body_no_comments"].normalized if "body_no_comments" in gold else None,
        "gold_distance_raw": gold["raw"].normalized if "raw" in gold else None,
        "gold_tokens": gold["no_comments"].tokens if "no_comments" in gold else None,
        "excess_lev": excess.get("no_comments"),
        "excess_lev_body": excess.get("body_no_comments"),
        "added_cc": added,
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
