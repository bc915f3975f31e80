"""Timing-sensitive tasks (CanItEdit's 47_merge_sort, 55_bm25, 60_unique_number compare timings with 10%
margins): the engine judges such a verdict alone, by majority of up to three runs, whatever a recorded run
said, and a split vote reaches summary.json and the text report as a flaky verdict. The sandbox runs for real; the suite below
only decides what the timing-sensitive task's runs say, so the votes are known in advance."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path

import pytest

from benchmark.report.summary import render_text, report
from benchmark.run import answer_sources
from benchmark.run.engine import Engine
from benchmark.run.records import RunConfig
from benchmark.run.store import RESULTS, ResultsStore, read_records
from benchmark.suites import canitedit
from benchmark.suites.canitedit import suite as canitedit_suite
from sandbox import Sandbox, envs

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")

pytestmark = [
    pytest.mark.skipif(not (DATA / "canitedit").exists(), reason=f"no CanItEdit data at {DATA}"),
    pytest.mark.skipif(
        not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox"
    ),
]


class Scripted(canitedit_suite.Tests):
    """The first task is timing-sensitive and its runs pass as `votes` says, one value per run."""

    def __init__(self, timed: str, votes: list[bool]) -> None:
        self.timed, self.votes = timed, list(votes)
        self.calls = 0
        self.active = 0
        self.alone: list[bool] = []  # per run of the timed task: no other judge beside it

    def timing_sensitive(self, task: canitedit.Problem) -> bool:
        return task.task_id == self.timed

    async def judge(self, box, task, condition, completion):
        self.active += 1
        try:
            if task.task_id == self.timed:
                self.calls += 1
                self.alone.append(self.active == 1)
            v = await super().judge(box, task, condition, completion)
            if task.task_id == self.timed:
                v.passed = self.votes.pop(0)
                v.exec_status = "ok" if v.passed else "failed"
            return v
        finally:
            self.active -= 1


def _run(tmp_path: Path, votes: list[bool], recorded: bool | None = None) -> tuple[Scripted, dict]:
    problems = canitedit.load(DATA, 4)
    scorer = Scripted(problems[0].task_id, votes)
    suite = dataclasses.replace(canitedit.make(), scorer=scorer)
    config = RunConfig(suite="canitedit", backend="gold", samples=1, limit=4, conditions=["lazy"], planned=4)
    backend = answer_sources.parse("gold")
    if recorded is not None:  # as a recorded run's backend: every sample has a stored verdict
        backend.recorded_verdict = lambda *_: (recorded, None)  # type: ignore[method-assign]
    box = Sandbox(workers=2)
    try:
        with ResultsStore(tmp_path, config, resume=False) as store:
            asyncio.run(Engine(config, suite, problems, backend, store, box, concurrency=4).run())
    finally:
        box.close()
    return scorer, report(tmp_path)


def test_a_split_vote_is_the_majority_and_is_reported_as_flaky(tmp_path: Path) -> None:
    suite, s = _run(tmp_path, [True, False, False])
    assert suite.calls == 3 and suite.votes == []  # two runs disagreed: a third decided
    assert suite.alone == [True, True, True]  # every run had the sandbox to itself
    timed = next(r for r in read_records(tmp_path / RESULTS) if r.task_id == suite.timed)
    assert timed.outcome == "fail" and timed.votes == [True, False, False] and timed.flaky
    assert s["flaky"] == {
        "lazy": [{"task": suite.timed, "sample": 0, "outcome": "fail", "votes": [True, False, False]}]
    }
    assert s["conditions"]["lazy"]["pass@1"] == 75.0 and s["complete"] is True
    text = render_text(s)
    assert f"FLAKY verdicts (lazy): {suite.timed} sample 0 (1 of 3 runs passed: fail)" in text


def test_two_agreeing_runs_decide_and_are_not_flaky(tmp_path: Path) -> None:
    suite, s = _run(tmp_path, [True, True])
    assert suite.calls == 2 and suite.alone == [True, True]
    timed = next(r for r in read_records(tmp_path / RESULTS) if r.task_id == suite.timed)
    assert timed.outcome == "pass" and timed.votes == [True, True] and not timed.flaky
    assert s["flaky"] == {} and "FLAKY" not in render_text(s)
    assert s["conditions"]["lazy"]["pass@1"] == 100.0


@pytest.mark.parametrize("recorded", [True, False])
def test_a_recorded_verdict_decides_nothing(tmp_path: Path, recorded: bool) -> None:
    """Whether a run agrees with the recorded run's stored verdict never changes how often it runs: the same
    votes give the same runs and the same verdict (re-voting only on disagreement flattered the agreement)."""
    suite, s = _run(tmp_path, [True, False, True], recorded=recorded)
    assert suite.calls == 3 and suite.alone == [True, True, True]
    timed = next(r for r in read_records(tmp_path / RESULTS) if r.task_id == suite.timed)
    assert timed.outcome == "pass" and timed.votes == [True, False, True] and timed.recorded_pass is recorded
