"""Verdicts: what one sandbox run of a test says about the program, and the judgement a test set adds up to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandbox.judge.build import tail
from sandbox.judge.checkers import check
from sandbox.judge.model import BAD_INPUT_EXIT, BAD_INPUT_MARK, Checker, JudgeLimits, Judgement, TestCase, TestResult

if TYPE_CHECKING:
    from sandbox.result import ExecResult


def run_result(res: ExecResult, limits: JudgeLimits, name: str, *, trusted_input: bool = False) -> TestResult:
    """The run's verdict before any comparison (`accepted`: it ran cleanly). A harness that cannot read
    the input as the function's arguments is the test's fault (`judge_error`), unless the input is
    trusted (a reference read it), then the program's: its signature does not fit (`runtime_error`)."""
    out = TestResult(
        name=name,
        verdict="accepted",
        cpu_s=res.cpu_s,
        wall_s=res.wall_s,
        memory_mb=res.peak_memory_mb,
        output=res.stdout,
    )
    stderr = res.stderr or ""
    if res.status == "error":
        out.verdict, out.detail = "judge_error", f"sandbox: {res.error}"
    elif res.status == "timeout" or res.cpu_s > limits.time_s:
        out.verdict = "time_limit"
        out.detail = (
            f"over {limits.time_s:g} s of CPU"
            if res.status != "timeout"
            else f"stopped after {res.wall_s:.1f} s (limit {limits.time_s:g} s of CPU)"
        )
    elif res.status == "memory":
        out.verdict, out.detail = "memory_limit", f"allocation failed under {limits.memory_mb} MiB: {tail(stderr, 300)}"
    elif res.status == "output_limit":
        out.verdict, out.detail = "output_limit", f"more than {limits.output_kb} KiB of output"
    elif res.status != "ok":
        if res.exit_code == BAD_INPUT_EXIT and BAD_INPUT_MARK in stderr:
            why = stderr.strip().splitlines()[-1][:500]
            out.verdict, out.detail = (
                ("runtime_error", f"cannot take the test input: {why}") if trusted_input else ("judge_error", why)
            )
        else:
            how = f"signal {res.signal}" if res.signal else f"exit code {res.exit_code}"
            out.verdict, out.detail = "runtime_error", f"{how}: {tail(stderr.strip(), 600)}"
    return out


def compare(test: TestCase, r: TestResult, checker: Checker) -> None:
    """A cleanly run test's verdict after comparing its output with the expected one (in place)."""
    if r.verdict != "accepted":
        return
    if test.expected is None:
        r.verdict, r.detail = "judge_error", "the test has no expected output"
        return
    try:
        ok, why = check(checker, test.input, test.expected, r.output)
    except Exception as exc:  # noqa: BLE001  # a faulty special judge is the judge's failure, per test
        r.verdict, r.detail = "judge_error", f"checker failed: {type(exc).__name__}: {exc}"
        return
    if not ok:
        r.verdict = "wrong_answer"
    r.detail = why


def first_failure(j: Judgement) -> Judgement:
    """The verdict of the first test, in order, that was not accepted (none: it stays accepted)."""
    failed = next((r for r in j.tests if r.verdict != "accepted"), None)
    if failed is not None:
        j.verdict, j.detail = failed.verdict, f"{failed.name}: {failed.detail}".strip(": ")
    return j
