"""CanItEdit's sandbox verdict: the tests, then for a pass the coverage run and the completion's ExcessCode.

A completion passes when `completion + "\\n" + tests` exits 0 within 15 CPU-seconds under `python3` in the
prepared `canitedit` environment; a passing completion runs again under coverage.py (default
exclusions plus `@(abc\\.)?abstractmethod`, which the sandbox applies) and its excess is the number
of missing lines of the completion part over the Differ line count against `before` (missing lines
as the evaluator reads them from `coverage report -m`, see `metrics`; strict mode alongside).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from benchmark.run.records import ExcessCode
from benchmark.suite import Verdict as BaseVerdict
from benchmark.suites.canitedit.metrics import completion_missing, differ_lines, excess_code, report_missing_lines
from benchmark.suites.canitedit.task import NAME, Problem

if TYPE_CHECKING:
    from benchmark.run.records import SampleRecord

TIMEOUT_S = 15.0  # CPU seconds (the sandbox's budget; its wall-clock ceiling is 5x)
# the coverage run's own verdict is ignored (tracing slows a program several times): more CPU, so that a
# passing program's ExcessCode is measured however slow the tracer makes it
COVERAGE_TIMEOUT_S = 60.0
PROGRAM = "program.py"
# tests that compare timings (47_merge_sort, 55_bm25, 60_unique_number): 10% margins that load can cross
TIMING = re.compile(r"\btimeit\b|perf_counter|time\.time\(")


def program(completion: str, problem: Problem) -> str:
    return completion + "\n" + problem.tests


class Verdict(BaseVerdict, kw_only=True):
    missing_lines: list[int] | None = None  # compat: the lines inside the report's Missing ranges
    missing_statements: list[int] | None = None  # strict: missing statements only
    differ_lines: int | None = None
    excess_code: float | None = None
    excess_code_strict: float | None = None

    def fill(self, rec: SampleRecord) -> None:
        super().fill(rec)
        rec.scores = ExcessCode(
            missing_lines=self.missing_lines,
            missing_statements=self.missing_statements,
            differ_lines=self.differ_lines,
            excess_code=self.excess_code,
            excess_code_strict=self.excess_code_strict,
        )


async def judge(box: Any, problem: Problem, completion: str) -> Verdict:
    """Run the tests; for a pass, run under coverage and compute the completion's ExcessCode."""
    files = {PROGRAM: program(completion, problem)}
    res = await box.arun(files, PROGRAM, suite=NAME, timeout_s=TIMEOUT_S)
    v = Verdict(
        passed=res.status == "ok",
        exec_status=res.status,
        exit_code=res.exit_code,
        stderr_tail=(res.stderr or res.error)[-400:],
        sandbox_ms=res.wall_s * 1000.0,
    )
    v.ran("tests", res)
    if res.status == "error":
        v.sandbox_error = res.error or "sandbox error"
    if v.passed:
        cov = await box.arun(files, PROGRAM, suite=NAME, timeout_s=COVERAGE_TIMEOUT_S, coverage=True)
        v.sandbox_ms += cov.wall_s * 1000.0
        v.ran("coverage", cov)
        fc = (cov.coverage or {}).get(PROGRAM)
        if cov.status == "ok" and fc is not None:
            statements = [*fc.executed, *fc.missing]
            missing = completion_missing(report_missing_lines(statements, fc.missing), completion)
            strict = completion_missing(fc.missing, completion)
            v.missing_lines, v.missing_statements = missing, strict
            v.differ_lines = differ_lines(problem.before, completion)
            v.excess_code = excess_code(missing, problem.before, completion)
            v.excess_code_strict = excess_code(strict, problem.before, completion)
        else:
            v.sandbox_error = f"coverage run: {cov.status} {cov.error or cov.stderr[-200:]}".strip()
    return v


async def passes(box: Any, problem: Problem, text: str) -> bool | None:
    """The plain run only (no coverage): what the necessity analysis asks of sub-edits."""
    res = await box.arun({PROGRAM: program(text, problem)}, PROGRAM, suite=NAME, timeout_s=TIMEOUT_S)
    return None if res.status == "error" else res.status == "ok"
