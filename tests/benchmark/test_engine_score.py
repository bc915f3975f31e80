"""The benchmark scores what the server reports: excess and added complexity come from the report of the
request that carried the gold edit, with no second measurement in the harness."""

from __future__ import annotations

from types import SimpleNamespace

import msgspec

from benchmark.engine import Job, score
from benchmark.suite import Answer
from server.fidelity import measure

BEFORE = "def f(xs):\n    return sum(xs) + 1\n"
GOLD = "def f(xs):\n    return sum(xs)\n"
EDIT = "def f(xs):\n    total = 0\n    for x in xs:\n        if x:\n            total += x\n    return total\n"


def _record(report: dict):
    task = SimpleNamespace(task_id="t/0", name="t")
    answer = Answer(
        proposal={"status": "ok", "report": report, "flaggedHunks": [], "hunkSeverities": []}, completion=EDIT
    )
    return score("suite", Job(task, "c", (0,)), 0, answer, "model")


def test_excess_and_added_complexity_are_the_reports():
    report = msgspec.to_builtins(measure(BEFORE, EDIT, gold=GOLD))
    gold_cc = measure(BEFORE, GOLD).complexity["paper"].after  # the gold's own complexity, measured alone
    assert report["gold_complexity"]["paper"]["after"] == gold_cc
    rec = _record(report)
    assert rec.excess_lev == report["excess"]["no_comments"] > 0
    assert rec.added_cc == report["complexity"]["paper"]["after"] - gold_cc > 0


def test_no_gold_in_the_report_means_no_excess_and_no_added_complexity():
    rec = _record(msgspec.to_builtins(measure(BEFORE, EDIT)))
    assert rec.excess_lev is None and rec.added_cc is None and rec.distance is not None
