"""Suite `canitedit` (SPEC 3.3): problems, conditions, and the sandbox verdict with ExcessCode.

A completion passes when `completion + "\\n" + tests` exits 0 within 15 s under `python3` in the
prepared `canitedit` environment; a passing completion runs again under coverage.py (default
exclusions plus `@(abc\\.)?abstractmethod`, which the sandbox applies) and its excess is the number
of missing lines of the completion part over the Differ line count against `before` (missing lines
as the evaluator reads them from `coverage report -m`, see `metrics`; strict mode alongside).
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from benchmark import metrics
from benchmark.datadir import data_dir, require

NAME = "canitedit"
CONDITIONS = ("descriptive", "lazy")
TIMEOUT_S = 15.0
PROGRAM = "program.py"


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    name: str
    full_name: str
    before: str
    after: str
    tests: str
    instruction_descriptive: str
    instruction_lazy: str
    taxonomy: dict = {}

    @property
    def task_id(self) -> str:
        return self.full_name

    def instruction(self, condition: str) -> str:
        if condition == "descriptive":
            return self.instruction_descriptive
        if condition == "lazy":
            return self.instruction_lazy
        raise ValueError(f"unknown CanItEdit condition {condition!r}; known: {', '.join(CONDITIONS)}")


def load(data: str | Path | None = None, limit: int | None = None) -> list[Problem]:
    path = require(data_dir(data) / "canitedit" / "canitedit_test.jsonl", "CanItEdit problems (canitedit/canitedit_test.jsonl)")
    problems = [msgspec.convert(json.loads(line), Problem) for line in path.read_text().splitlines() if line.strip()]
    problems.sort(key=lambda p: p.id)
    return problems[:limit] if limit else problems


def program(completion: str, problem: Problem) -> str:
    return completion + "\n" + problem.tests


class Verdict(msgspec.Struct, kw_only=True):
    passed: bool
    exec_status: str
    exit_code: int | None
    stderr_tail: str
    missing_lines: list[int] | None = None  # compat: the lines inside the report's Missing ranges
    missing_statements: list[int] | None = None  # strict: missing statements only
    differ_lines: int | None = None
    excess_code: float | None = None
    excess_code_strict: float | None = None
    sandbox_ms: float = 0.0  # the programs' own wall time (plain run + coverage run), without queueing
    sandbox_error: str | None = None


async def judge(box, problem: Problem, completion: str) -> Verdict:
    """Run the tests; for a pass, run under coverage and compute the completion's ExcessCode."""
    files = {PROGRAM: program(completion, problem)}
    res = await box.arun(files, PROGRAM, suite=NAME, timeout_s=TIMEOUT_S)
    v = Verdict(passed=res.status == "ok", exec_status=res.status, exit_code=res.exit_code,
                stderr_tail=(res.stderr or res.error)[-400:], sandbox_ms=res.wall_s * 1000.0)
    if res.status == "error":
        v.sandbox_error = res.error or "sandbox error"
    if v.passed:
        cov = await box.arun(files, PROGRAM, suite=NAME, timeout_s=TIMEOUT_S, coverage=True)
        v.sandbox_ms += cov.wall_s * 1000.0
        fc = (cov.coverage or {}).get(PROGRAM)
        if cov.status == "ok" and fc is not None:
            statements = [*fc.executed, *fc.missing]
            missing = metrics.completion_missing(metrics.report_missing_lines(statements, fc.missing), completion)
            strict = metrics.completion_missing(fc.missing, completion)
            v.missing_lines, v.missing_statements = missing, strict
            v.differ_lines = metrics.differ_lines(problem.before, completion)
            v.excess_code = metrics.excess_code(missing, problem.before, completion)
            v.excess_code_strict = metrics.excess_code(strict, problem.before, completion)
        else:
            v.sandbox_error = f"coverage run: {cov.status} {cov.error or cov.stderr[-200:]}".strip()
    return v
