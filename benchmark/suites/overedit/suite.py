"""The suite's parts: tasks and their sandbox environments, the judge, the numbers of a repair, summary and
report."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from benchmark.datadir import data_dir
from benchmark.suite import Dataset, EditSolver, Reporter, Scorer, Suite, SuiteSummary, Verdict, no_options
from benchmark.suites.overedit.compare import compare_conditions, render_compare
from benchmark.suites.overedit.download import download
from benchmark.suites.overedit.fidelity import normalised_flags, report_fidelity
from benchmark.suites.overedit.html import sections, table
from benchmark.suites.overedit.judge import ENV_OVERRIDE, MEMORY_MB, TIMEOUT_S, missing_imports
from benchmark.suites.overedit.judge import judge as judge_task
from benchmark.suites.overedit.summary import render_text, summarise
from benchmark.suites.overedit.tasks import CONDITIONS, DATA_FILE, ENV, NAME, Task, load

if TYPE_CHECKING:
    from benchmark.run.records import RunConfig, SampleRecord
    from server.protocol.report import FidelityReport


class Environments:
    """Which sandbox environment a task runs in: its own, unless one is chosen for every task."""

    def __init__(self, env: str | None = None) -> None:
        self.env = env

    def __call__(self, task: Task) -> str:
        return self.env or task.env or ENV


class Tasks(Dataset[Task]):
    def __init__(self, env_for: Environments) -> None:
        self.env_for = env_for

    def load(self, data: str | Path | None, limit: int | None) -> Sequence[Task]:
        tasks, errors = load(data, limit)
        for err in errors:
            print(f"edit-fidelity overedit: {err}", file=sys.stderr)
        gaps = {t.task_id: mods for t in tasks if (mods := missing_imports(t, self.env_for(t)))}
        if gaps:  # they still run: their records say what is missing, and Pass@1 is also given without them
            print(
                f"edit-fidelity overedit: {len(gaps)} task(s) import modules their sandbox environment lacks: "
                + ", ".join(f"{tid} ({', '.join(m)})" for tid, m in gaps.items()),
                file=sys.stderr,
            )
        return tasks


class Repairs(Scorer[Task]):
    """The task's unittest cases in its environment; the gold-relative distances from the server's report and
    the normalised flags from the texts (`fidelity.py`)."""

    def __init__(self, env_for: Environments, *, timeout_s: float, memory_mb: int) -> None:
        self.env_for, self.timeout_s, self.memory_mb = env_for, timeout_s, memory_mb

    async def judge(self, box: Any, task: Task, condition: str, completion: str) -> Verdict:
        return await judge_task(
            box, task, completion, env=self.env_for(task), timeout_s=self.timeout_s, memory_mb=self.memory_mb
        )

    def report_metrics(self, task: Task, report: FidelityReport) -> dict[str, Any]:
        return report_fidelity(report)

    def completion_metrics(self, task: Task, condition: str, completion: str) -> dict[str, Any]:
        return normalised_flags(task, condition, completion)


class Tables(Reporter):
    def summarise(self, config: RunConfig, records: list[SampleRecord]) -> SuiteSummary:
        return msgspec.convert(summarise(config, records), SuiteSummary)

    def html_sections(self, summary: dict[str, Any], records: list[SampleRecord]) -> str:
        return table(summary) + sections(summary, records)

    def within_run(self, records: list[SampleRecord]) -> tuple[dict[str, Any], str] | None:
        """`bench compare`: generic against explicit for the same backend (matched tasks)."""
        if {"generic", "explicit"} <= {r.condition for r in records}:
            cmp = compare_conditions(records)
            return cmp, render_compare(cmp)
        return None

    def render_text(self, summary: dict[str, Any]) -> str | None:
        return render_text(summary)


def _download(data: str | Path | None, log: Callable[[str], None]) -> Path:
    return download(data_dir(data) / "overedit" / DATA_FILE)


def make(
    options: Mapping[str, str] | None = None,
    *,
    env: str | None = None,
    timeout_s: float = TIMEOUT_S,
    memory_mb: int = MEMORY_MB,
) -> Suite[Task]:
    """`env`: one sandbox environment for every task (else EDIT_FIDELITY_OVEREDIT_ENV, else the task's own)."""
    no_options(NAME, options or {})
    env_for = Environments(env or os.environ.get(ENV_OVERRIDE) or None)
    return Suite(
        name=NAME,
        conditions=CONDITIONS,
        dataset=Tasks(env_for),
        solver=EditSolver(),
        scorer=Repairs(env_for, timeout_s=timeout_s, memory_mb=memory_mb),
        reporter=Tables(),
        sandbox_env=env_for,
        styles={"generic": "generic", "explicit": "minimal"},
        download=_download,
    )
