"""A repair's verdict: the task's unittest `TestCases` in the sandbox's `overedit` environment (or the
task's own), and whether a module the environment lacks is the environment's fault or the repair's."""

from __future__ import annotations

import ast
from typing import Any

from benchmark.run.testrun import run_tests
from benchmark.suite import Verdict
from benchmark.suites.overedit.tasks import Task
from server.fidelity.text import pyast

ENV_OVERRIDE = "EDIT_FIDELITY_OVEREDIT_ENV"  # another environment for every task (CI: `base` for stdlib-only tasks)
TIMEOUT_S = 240.0  # BigCodeBench's own limit per task (a few train models or run tensorflow)
MEMORY_MB = 4096  # address space: pandas + matplotlib + scikit-learn (tensorflow for one task) need more than 1 GiB

NETWORK_MODULES = {"socket", "urllib", "requests", "http", "ftplib", "smtplib", "bs4", "pyquery", "mechanize"}


def imported_modules(*sources: str) -> set[str]:
    """Top-level modules a program imports (anywhere in it); empty for code that does not parse."""
    found: set[str] = set()
    for src in sources:
        try:
            tree = pyast.parse(src)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def environment_gap(task: Task, missing: str | None) -> str | None:
    """`missing` when the task itself needs it (its reference solution or tests import it): then the
    environment, not the repair, is at fault. A module only a model's repair imports is the repair's."""
    if not missing:
        return None
    needed = imported_modules(task.canonical_solution, task.test_code)
    if missing.startswith("nltk_data:"):
        return missing if "nltk" in needed else None
    if missing == "network":
        return missing if needed & NETWORK_MODULES else None
    return missing if missing in needed else None


def missing_imports(task: Task, env: str) -> list[str]:
    """The modules the task imports that `sandbox prepare` found missing in `env` (none when not prepared)."""
    from sandbox import envs

    missing = envs.missing_modules(env)
    return sorted(m for m in imported_modules(task.canonical_solution, task.test_code) if m in missing)


async def judge(box: Any, task: Task, completion: str, *, env: str, timeout_s: float, memory_mb: int) -> Verdict:
    """The task's tests on a repair in the task's sandbox environment (its fidelity numbers come from the
    server's report: `OverEdit.report_metrics`)."""
    run = await run_tests(
        box, completion, task.test_code, kind=task.kind, env=env, timeout_s=timeout_s, memory_mb=memory_mb
    )
    metrics: dict[str, Any] = {
        "families": task.families,
        "n_corruptions": len(task.families),
        "tests_run": run.tests_run,
        "failures": run.failures,
        "errors": run.errors,
    }
    if run.missing:
        metrics["missing"] = run.missing
    gap = environment_gap(task, run.missing)
    if gap:
        metrics["env_missing"] = gap
    v = Verdict(
        passed=run.passed,
        exec_status=run.status,
        exit_code=run.exit_code,
        stderr_tail=run.detail[-600:],
        sandbox_ms=run.wall_s * 1000.0,
        sandbox_error=run.sandbox_error,
        metrics=metrics,
    )
    v.ran("tests", run)
    return v
