"""The suite: tasks and their sandbox environments for the engine, the judge, summary and report hooks."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from benchmark.datadir import data_dir
from benchmark.suite import Suite, Verdict
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


class OverEdit(Suite[Task]):
    name: ClassVar[str] = NAME
    conditions: ClassVar[tuple[str, ...]] = CONDITIONS
    styles: ClassVar[dict[str, str]] = {"generic": "generic", "explicit": "minimal"}

    def __init__(self, *, env: str | None = None, timeout_s: float = TIMEOUT_S, memory_mb: int = MEMORY_MB) -> None:
        self.env = env or os.environ.get(ENV_OVERRIDE) or None  # overrides every task's environment
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.load_errors: list[str] = []

    def download(self, data: str | Path | None, log: Callable[[str], None]) -> Path:
        return download(data_dir(data) / "overedit" / DATA_FILE)

    def load(self, data: str | Path | None, limit: int | None) -> Sequence[Task]:
        tasks, self.load_errors = load(data, limit)
        for err in self.load_errors:
            print(f"edit-fidelity overedit: {err}", file=sys.stderr)
        gaps = {t.task_id: mods for t in tasks if (mods := missing_imports(t, self.env_for(t)))}
        if gaps:  # they still run: their records say what is missing, and Pass@1 is also given without them
            print(
                f"edit-fidelity overedit: {len(gaps)} task(s) import modules their sandbox environment lacks: "
                + ", ".join(f"{tid} ({', '.join(m)})" for tid, m in gaps.items()),
                file=sys.stderr,
            )
        return tasks

    def env_for(self, task: Task) -> str:
        return self.env or task.env or ENV

    def sandbox_envs(self, tasks: Sequence[Task]) -> list[str]:
        return sorted({self.env_for(t) for t in tasks})

    async def judge(self, box: Any, task: Task, condition: str, completion: str) -> Verdict:
        return await judge_task(
            box, task, completion, env=self.env_for(task), timeout_s=self.timeout_s, memory_mb=self.memory_mb
        )

    def report_metrics(self, task: Task, report: FidelityReport) -> dict[str, Any]:
        return report_fidelity(report)

    def completion_metrics(self, task: Task, condition: str, completion: str) -> dict[str, Any]:
        return normalised_flags(task, condition, completion)

    def summarise(self, config: RunConfig, records: list[SampleRecord]) -> dict[str, Any]:
        return summarise(config, records)

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
