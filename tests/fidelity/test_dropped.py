"""Deleted statements whose value the kept code still reads (`server.fidelity.judge.dropped`), and the
deletion unit the judge flags for them (`server.fidelity.judge.flags`)."""

from __future__ import annotations

from server.fidelity import measure
from server.fidelity.judge.dropped import live_stores_deleted
from server.fidelity.judge.flags import judge_units

ORIGINAL = """def prepare(items, limit):
    items = [i.strip() for i in items]

    items = [i for i in items if i]
    picked = []
    for i in items:
        if len(i) > limit:
            picked.append(i)
    return picked
"""


def test_a_deleted_assignment_the_kept_code_reads_is_found():
    assert live_stores_deleted(ORIGINAL, 3, 4) == "items = [i for i in items if i]"
    # the reads after it are replaced too: the deletion is part of that rewrite
    assert live_stores_deleted(ORIGINAL, 3, 4, changed=range(3, 10)) is None
    # a line that stores nothing, or lines outside a function
    assert live_stores_deleted(ORIGINAL, 3, 3) is None
    assert live_stores_deleted("x = 1\nprint(x)\n", 1, 1) is None


def test_deleting_a_live_statement_inside_the_changed_function_is_flagged():
    edited = ORIGINAL.replace("\n    items = [i for i in items if i]\n", "\n").replace("> limit", ">= limit")
    report = measure(ORIGINAL, edited)
    instruction = "Fix prepare: an item exactly as long as the limit is picked too."
    verdicts = judge_units(report, instruction, original=ORIGINAL, edited=edited)
    deletion = next(i for i, h in enumerate(report.hunks) if h.kinds == ["deletion"])
    assert verdicts[deletion].flagged and verdicts[deletion].unrequested == ("deletion",)
    assert "items = [i for i in items if i]" in verdicts[deletion].reason
    fix = next(i for i, h in enumerate(report.hunks) if i != deletion)
    assert not verdicts[fix].flagged
    # an instruction that asks for a removal, or for a rewrite, excuses it
    for asked in (
        "Fix prepare: remove the empty-item filter, and pick items as long as the limit.",
        "Refactor prepare so that items as long as the limit are picked.",
    ):
        assert not judge_units(report, asked, original=ORIGINAL, edited=edited)[deletion].flagged
