"""The suite's parts: tasks, requests, judging glue (tests, verdict, OptScore, fidelity), summary and report."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from benchmark.datadir import DataError, data_dir
from benchmark.run.lang_fidelity import lang_fidelity
from benchmark.suite import Dataset, Reporter, Scorer, Solver, Suite, SuiteSummary, Verdict, no_options
from benchmark.suites.codeeditorbench.download import download
from benchmark.suites.codeeditorbench.kinds import CONDITIONS, KINDS, NAME, kind_of
from benchmark.suites.codeeditorbench.scores import OPT_REPEATS, polish_metrics
from benchmark.suites.codeeditorbench.summary import compare_backends, render_text, summarise
from benchmark.suites.codeeditorbench.tasks import SUBDIR, LoadIssue, Task, load
from benchmark.suites.codeeditorbench.testsets import TaskTests, build_tests, checker_of, limits_for
from sandbox.judge import Judge, JudgeLimits, Program, SingleFlight, guess_language

if TYPE_CHECKING:
    from benchmark.run.records import RunConfig, SampleRecord

logger = logging.getLogger(__name__)


class Tasks(Dataset[Task]):
    """The published files (or the paper's samples); each task belongs to the conditions of its kind."""

    def __init__(self) -> None:
        self.load_issues: list[LoadIssue] = []

    def load(self, data: str | Path | None, limit: int | None) -> list[Task]:
        return load(data, limit, self.load_issues)

    def task_conditions(self, task: Task, conditions: Sequence[str]) -> list[str]:
        return [c for c in conditions if kind_of(c) == task.kind]


class Requests(Solver[Task]):
    """Edits of the task's document in its own language; a translation's answer in the target language."""

    def task_language(self, task: Task) -> str:
        return task.language

    def answer_language(self, task: Task) -> str | None:
        # translate: the source program is the document; the server asks for, and reads, the target's code
        return task.answer_language if task.kind == "translate" else None

    def answer_fence(self, task: Task, condition: str) -> str | None:
        return task.answer_language


class Judging(Scorer[Task]):
    """The sandbox's judge on the task's tests (built once per task and kept for the run), OptScore for
    polish, and C++/Java fidelity numbers."""

    def __init__(self, *, opt_repeats: int = OPT_REPEATS) -> None:
        self.opt_repeats = opt_repeats
        self._judges: dict[int, Judge] = {}
        self._tests: SingleFlight[str, TaskTests] = SingleFlight(keep=True)  # by task, kept for the run

    def judge_for(self, box: Any) -> Judge:
        judge = self._judges.get(id(box))
        if judge is None:
            judge = self._judges[id(box)] = Judge(box)
        return judge

    async def tests_for(self, box: Any, task: Task) -> TaskTests:
        judge = self.judge_for(box)
        key = hashlib.sha256(msgspec.json.encode(task)).hexdigest()
        return await self._tests.run(key, lambda: build_tests(judge, task))  # the task's samples share one build

    async def judge(self, box: Any, task: Task, condition: str, completion: str) -> Verdict:
        try:
            return await self._judge(box, task, completion)
        except Exception as exc:  # a judge failure costs this sample, not the run
            logger.exception("judging %s", task.task_id)
            return Verdict(
                passed=False,
                exec_status="judge_error",
                sandbox_error=f"{task.task_id}: the judge failed: {type(exc).__name__}: {exc}"[:400],
                metrics={"kind": task.kind, "verdict": "judge_error"},
            )

    async def _judge(self, box: Any, task: Task, completion: str) -> Verdict:
        judge = self.judge_for(box)
        tt = await self.tests_for(box, task)
        found: dict[str, Any] = {
            "kind": task.kind,
            "language": task.answer_language,
            "shape": task.shape,
            "tests": len(tt.tests),
            "expected_from": tt.expected_from,
            "test_issues": len(tt.issues),
        }
        if task.kind == "debug":
            found["bug_type"] = task.bug_type
        if not tt.tests:
            return Verdict(
                passed=False,
                exec_status="judge_error",
                sandbox_error=f"{task.task_id}: no usable test: " + "; ".join(tt.issues)[:400],
                metrics={**found, "verdict": "judge_error"},
            )
        program = Program(source=completion, language=task.answer_language, shape=task.shape)
        limits = limits_for(task.answer_language)
        # the reference read every test input, so one the answer cannot take is the answer's fault
        j = await judge.judge(program, tt.tests, limits, checker=checker_of(task), trusted_inputs=True)
        guessed = guess_language(completion)
        found.update(
            {
                "verdict": j.verdict,
                "tests_passed": sum(t.verdict == "accepted" for t in j.tests),
                "cpu_s": round(j.cpu_s, 4),
                "memory_mb": j.memory_mb,
                "wrong_language": guessed is not None and guessed != task.answer_language,
            }
        )
        if task.kind == "polish":
            found.update(
                await self._polish(judge, task, program, tt, limits)
                if j.passed
                else {"opt_score": 0.0, "opt_score_margin": 0.0}
            )
        if task.kind != "translate" and task.language != "python":
            # C++/Java: distance and complexity delta through the core's language layer (pure, ms)
            found["lang_fidelity"] = await asyncio.to_thread(
                lang_fidelity, task.language, task.before, completion, task.after
            )
        return Verdict(
            passed=j.passed,
            exec_status=j.verdict,
            stderr_tail=(j.detail or j.compile_output)[-400:],
            sandbox_error=(j.detail[:400] or "the judge could not decide") if j.verdict == "judge_error" else None,
            sandbox_ms=sum(t.wall_s for t in j.tests) * 1000.0,
            metrics=found,
        )

    async def _polish(
        self, judge: Judge, task: Task, candidate: Program, tt: TaskTests, limits: JudgeLimits
    ) -> dict[str, Any]:
        """OptScore of an accepted candidate: it and the original, `opt_repeats` times, interleaved."""
        original = Program(source=task.before, language=task.language, shape=task.shape)
        orig, cand = await judge.measure([original, candidate], tt.tests, limits, repeats=self.opt_repeats)
        if orig.failures or cand.failures:
            return {
                "opt_score": 0.0,
                "opt_score_margin": 0.0,
                "opt_error": f"measurement runs failed (original {orig.failures}, candidate {cand.failures})",
            }
        try:
            return polish_metrics(orig, cand)
        except ValueError as exc:  # an original measured at no time or memory at all
            return {"opt_score": 0.0, "opt_score_margin": 0.0, "opt_error": str(exc)}


class Tables(Reporter):
    def summarise(self, config: RunConfig, records: list[SampleRecord]) -> SuiteSummary:
        return msgspec.convert(summarise(config, records), SuiteSummary)

    def compare(self, summaries: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], str] | None:
        """Win Rate across the compared backends (SPEC 3.7)."""
        return compare_backends(summaries)

    def render_text(self, summary: dict[str, Any]) -> str | None:
        return render_text(summary)

    def html_sections(self, summary: dict[str, Any], records: list[SampleRecord]) -> str:
        from benchmark.suites.codeeditorbench.html import sections

        return sections(summary, records)


def _download(data: str | Path | None, log: Callable[[str], None]) -> Path:
    _files, errors = download(data, on_file=lambda name, state: log(f"{name}: {state}"))
    if errors:
        raise DataError("; ".join(errors))
    return data_dir(data) / SUBDIR


def make(options: Mapping[str, str] | None = None, *, opt_repeats: int = OPT_REPEATS) -> Suite[Task]:
    no_options(NAME, options or {})
    return Suite(
        name=NAME,
        conditions=CONDITIONS,
        default_conditions=KINDS,
        dataset=Tasks(),
        solver=Requests(),
        scorer=Judging(opt_repeats=opt_repeats),
        reporter=Tables(),
        download=_download,
    )
