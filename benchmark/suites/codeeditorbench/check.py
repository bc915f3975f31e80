"""The acceptance check of the judge on the data: references accepted, incorrect solutions rejected."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmark.suites.codeeditorbench.scores import OPT_REPEATS
from benchmark.suites.codeeditorbench.suite import Judging
from benchmark.suites.codeeditorbench.tasks import Task


def expected_rejection(task: Task) -> set[str]:
    """The verdicts an incorrect debug solution should get for its published bug type."""
    kind = task.bug_type.split(":", 1)[0].strip().lower()
    if kind.startswith("syntax"):
        return {"compile_error"}
    if kind.startswith("reference"):
        return {"runtime_error"} if task.language == "python" else {"compile_error"}
    if kind.startswith("logic"):
        return {"wrong_answer", "runtime_error", "time_limit"}
    if kind.startswith("performance"):
        return {"time_limit", "memory_limit"}
    return {"wrong_answer", "runtime_error", "time_limit", "memory_limit", "compile_error"}


async def check_tasks(
    tasks: Sequence[Task],
    *,
    workers: int = 2,
    repeats: int = OPT_REPEATS,
    emit: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """For each task: the reference answer's verdict (and OptScore for polish), and for debug the
    incorrect solution's verdict against the class its bug type predicts."""
    from sandbox import Sandbox

    suite = Judging(opt_repeats=repeats)
    box = Sandbox(workers=workers)
    rows = []
    try:
        for task in tasks:
            t0 = time.perf_counter()
            tt = await suite.tests_for(box, task)
            gold = await suite.judge(box, task, task.kind, task.after)
            row: dict[str, Any] = {
                "task": task.task_id,
                "language": task.answer_language,
                "shape": task.shape,
                "tests": len(tt.tests),
                "expected_from": tt.expected_from,
                "reference_agrees": tt.reference_agrees,
                "issues": tt.issues,
                "gold": gold.exec_status,
                "gold_detail": gold.stderr_tail[-200:],
            }
            if task.kind == "debug":
                bad = await suite.judge(box, task, task.kind, task.before)
                row.update(
                    {
                        "incorrect": bad.exec_status,
                        "expected_rejection": sorted(expected_rejection(task)),
                        "incorrect_detail": bad.stderr_tail[-200:],
                    }
                )
            if task.kind == "polish":
                row.update(
                    {
                        k: gold.metrics.get(k)
                        for k in ("opt_score", "opt_score_margin", "T_cpu_s", "t_cpu_s", "M_mb", "m_mb", "opt_error")
                    }
                )
            row["seconds"] = round(time.perf_counter() - t0, 1)
            rows.append(row)
            if emit:
                emit(row)
    finally:
        box.close()
    return rows
