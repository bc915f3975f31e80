"""The suite's parts: the problems, the recorded archives, the judge and its plain run, summary and report."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from benchmark.run import recorded
from benchmark.suite import Dataset, Reporter, Scorer, Solver, Suite, SuiteSummary, no_options
from benchmark.suites.canitedit.archive import load_archive
from benchmark.suites.canitedit.download import download
from benchmark.suites.canitedit.html import sections
from benchmark.suites.canitedit.judge import TIMING, Verdict, judge, passes
from benchmark.suites.canitedit.problems import load
from benchmark.suites.canitedit.summary import compare_table, render_text, summarise
from benchmark.suites.canitedit.task import CONDITIONS, NAME, Problem

if TYPE_CHECKING:
    from benchmark.run.records import RunConfig, SampleRecord


class Problems(Dataset[Problem]):
    def load(self, data: str | Path | None, limit: int | None) -> list[Problem]:
        return load(data, limit)


class Edits(Solver[Problem]):
    """Edits of `before` with the gold (the defaults); recorded runs also as MultiPL-E's archives."""

    def load_recorded(self, path: str | Path) -> recorded.Recorded:
        """A published run archive (MultiPL-E's tar.gz, `archive.py`), or a run of ours."""
        found = recorded.locate(path)
        return load_archive(found) if found.name.endswith(recorded.ARCHIVES) else recorded.load(found)


class Tests(Scorer[Problem]):
    """The hidden tests, then coverage for ExcessCode (`judge.py`)."""

    def timing_sensitive(self, task: Problem) -> bool:
        return bool(TIMING.search(task.tests))

    async def judge(self, box: Any, task: Problem, condition: str, completion: str) -> Verdict:
        return await judge(box, task, completion)

    async def passes(self, box: Any, task: Problem, condition: str, text: str) -> bool | None:
        return await passes(box, task, text)


class Tables(Reporter):
    def summarise(self, config: RunConfig, records: list[SampleRecord]) -> SuiteSummary:
        return msgspec.convert(summarise(config, records), SuiteSummary)

    def render_text(self, summary: dict[str, Any]) -> str:
        return render_text(summary)

    def compare_table(self, summaries: list[dict[str, Any]]) -> str:
        return compare_table(summaries)

    def html_sections(self, summary: dict[str, Any], records: list[SampleRecord]) -> str:
        return sections(summary, records)


def _download(data: str | Path | None, log: Callable[[str], None]) -> Path:
    return download(data, log=log)


def make(options: Mapping[str, str] | None = None) -> Suite[Problem]:
    no_options(NAME, options or {})
    return Suite(
        name=NAME,
        conditions=CONDITIONS,
        dataset=Problems(),
        solver=Edits(),
        scorer=Tests(),
        reporter=Tables(),
        sandbox_env=NAME,
        download=_download,
    )
