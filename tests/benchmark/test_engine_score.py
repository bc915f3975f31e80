"""The benchmark scores what the server reports: excess and added complexity come from the report of the
request that carried the gold edit, with no second measurement in the harness."""

from __future__ import annotations

from types import SimpleNamespace

from benchmark.run.engine import Job, score
from benchmark.suite import Answer
from server.fidelity import FidelityReport, measure
from server.protocol.commands import ProposalRecord

BEFORE = "def f(xs):\n    return sum(xs) + 1\n"
GOLD = "def f(xs):\n    return sum(xs)\n"
EDIT = "def f(xs):\n    total = 0\n    for x in xs:\n        if x:\n            total += x\n    return total\n"


def _record(report: FidelityReport):
    task = SimpleNamespace(task_id="t/0", name="t")
    proposal = ProposalRecord(id="p", backend="model", status="ok", edits=report.edits, report=report, latency_ms=1.0)
    return score("suite", Job(task, "c", (0,)), 0, Answer(proposal=proposal, completion=EDIT), "model")


def test_excess_and_added_complexity_are_the_reports():
    report = measure(BEFORE, EDIT, gold=GOLD)
    gold_cc = measure(BEFORE, GOLD).complexity["paper"].after  # the gold's own complexity, measured alone
    assert report.gold_complexity is not None and report.gold_complexity["paper"].after == gold_cc
    assert report.excess is not None and gold_cc is not None
    rec = _record(report)
    assert rec.excess_lev == report.excess["no_comments"] > 0
    paper_after = report.complexity["paper"].after
    assert paper_after is not None and rec.added_cc == paper_after - gold_cc > 0
    assert isinstance(rec.added_cc, int) and isinstance(rec.cc_delta, int)  # counts stay integers, as sent


def test_no_gold_in_the_report_means_no_excess_and_no_added_complexity():
    rec = _record(measure(BEFORE, EDIT))
    assert rec.excess_lev is None and rec.added_cc is None and rec.distance is not None
