"""Test sets: published where published, else the reference's outputs."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import msgspec

from benchmark.suites.codeeditorbench.inputs import InputError, argument_lines, expected_value
from benchmark.suites.codeeditorbench.special import SPECIAL_JUDGES
from sandbox.judge import Checker, Judge, JudgeLimits, Program, TestCase, TestResult, check, describe

if TYPE_CHECKING:
    from benchmark.suites.codeeditorbench.tasks import Task

# Per-test limits: CPU seconds with the usual online-judge allowance for slower runtimes.
TIME_LIMIT_S = 2.0
TIME_FACTOR = {"cpp": 1.0, "java": 2.0, "python": 3.0}
MEMORY_MB = 256


class TaskTests(msgspec.Struct, kw_only=True):
    tests: list[TestCase]
    checker: str  # the checker's name (or "special")
    expected_from: dict[str, int]  # published | reference -> number of tests
    issues: list[str]  # tests left out, and why
    reference_agrees: bool | None  # the reference's output on the published tests matches them


def limits_for(language: str) -> JudgeLimits:
    return JudgeLimits(time_s=TIME_LIMIT_S * TIME_FACTOR[language], memory_mb=MEMORY_MB)


def checker_of(task: Task) -> Checker:
    return SPECIAL_JUDGES.get(task.task_id) or ("value" if task.shape == "function" else "numbers")


async def build_tests(judge: Judge, task: Task) -> TaskTests:
    """The task's test cases with expected outputs (see the package doc)."""
    issues = list(task.load_issues)
    checker = checker_of(task)
    ref = Program(source=task.reference, language=task.reference_language, shape=task.shape)
    inputs: list[tuple[str, str, str | None]] = []  # (name, stdin, published expected)
    if task.shape == "function":
        info = describe(ref)
        if info is None:
            return TaskTests(
                tests=[],
                checker=str(checker),
                expected_from={},
                issues=[*issues, "the reference has no function to call"],
                reference_agrees=None,
            )
        private_out = dict(enumerate(task.private_outputs))
        for name, text, scraped, out in [
            ("public", task.public_input, True, task.public_output),
            *((f"private {i + 1}", x, False, private_out.get(i)) for i, x in enumerate(task.private_inputs)),
        ]:
            try:
                stdin = argument_lines(text, info.params, scraped=scraped)
            except InputError as exc:
                issues.append(f"{name} test left out: {exc}")
                continue
            inputs.append((name, stdin, None if out is None else expected_value(out, scraped=scraped)))
    else:
        inputs.append(("public", _stdin(task.public_input), task.public_output))
        outs: list[str | None] = [*task.private_outputs] or [None] * len(task.private_inputs)
        inputs += [
            (f"private {i + 1}", _stdin(x), o) for i, (x, o) in enumerate(zip(task.private_inputs, outs, strict=True))
        ]
    ran = await judge.outputs(ref, [stdin for _, stdin, _ in inputs], limits_for(task.reference_language))
    results: list[TestResult | None] = [*ran.tests] or [None] * len(inputs)
    # Does the reference reproduce what is published? If not, its outputs stand in for nothing.
    agree: bool | None = None
    for (_, stdin, published), result in zip(inputs, results, strict=True):
        if published is not None and result is not None and result.verdict == "accepted":
            ok, _ = check(checker, stdin, published, result.output)
            agree = ok if agree is None else agree and ok
    tests: list[TestCase] = []
    counts: Counter[str] = Counter()
    distrusted: list[str] = []
    for (name, stdin, published), result in zip(inputs, results, strict=True):
        if published is not None:
            tests.append(TestCase(name=name, input=stdin, expected=published))
            counts["published"] += 1
        elif agree is False:
            distrusted.append(name)
        elif result is None or result.verdict != "accepted":
            why = ran.detail if result is None else f"{result.verdict}: {result.detail}"
            issues.append(f"{name} test left out: the reference failed on it ({why[:200]})")
        else:
            tests.append(TestCase(name=name, input=stdin, expected=result.output))
            counts["reference"] += 1
    if agree is False:
        issues.append(
            "the reference's output differs from the published expected output"
            + (
                f", so it stands in for none: {len(distrusted)} tests without a published output left out"
                if distrusted
                else ""
            )
        )
    return TaskTests(
        tests=tests,
        checker=checker if isinstance(checker, str) else "special",
        expected_from=dict(counts),
        issues=issues,
        reference_agrees=agree,
    )


def _stdin(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
