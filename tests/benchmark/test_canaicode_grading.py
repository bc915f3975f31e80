"""can-ai-code grading with the real sandbox: the six published eval files re-grade to exactly their stored
points, statuses and check values, row by row; and answers that misbehave (a check that raises, a call
that never returns, no code, no function, values JSON cannot carry) get a clear per-row result."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest

from benchmark.suites.canaicode.evaluate import evaluate
from benchmark.suites.canaicode.interview import (
    InterviewQuestion,
    load_interview,
    parse_interview_file,
)
from sandbox import Sandbox


@pytest.fixture(scope="module")
def box():
    b = Sandbox(workers=2)
    yield b
    b.close()


def test_published_eval_files_regrade_exactly(canaicode_root: Path, box: Sandbox) -> None:
    files = sorted((canaicode_root / "results_sample").glob("eval_*.ndjson"))
    assert len(files) == 6
    with (canaicode_root / "results_summary_all_eval_files.csv").open(newline="") as fh:
        published = {Path(r["file"]).name: r for r in csv.DictReader(fh)}

    async def regrade(path: Path):
        questions = {q.name: q for q in load_interview(canaicode_root, path.name.split("_")[1])}
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return rows, await asyncio.gather(
            *(evaluate(questions[r["name"]], r["language"], r["code"], box) for r in rows)
        )

    async def all_files():
        return await asyncio.gather(*(regrade(p) for p in files))

    compared = 0
    for path, (rows, evs) in zip(files, asyncio.run(all_files()), strict=True):
        points = {"python": 0, "javascript": 0}
        for r, ev in zip(rows, evs, strict=True):
            where = (path.name, r["name"], r["language"])
            assert (ev.points, ev.total, ev.status) == (r["passed"], r["total"], r["status"]), where
            assert [c.got for c in ev.checks] == [c["got"] for c in r["checks"]], where
            assert [c.points for c in ev.checks] == [c["status"] for c in r["checks"]], where
            assert ev.sandbox_error is None and ev.calls > 0
            points[r["language"]] += ev.points
            compared += 1
        pub = published[path.name]
        assert (points["python"], points["javascript"]) == (int(pub["py_passed"]), int(pub["js_passed"]))
    assert compared == 102


BAD = """\
Slow:
    Signature: "slow(n)"
    Input: "with input n"
    Output: "n"
    Checks:
        name:
            assert: "f.name"
            eq: "slow"
        value:
            assert: "f.call(3)"
            eq: 3
            weight: 2
        raises:
            assert: "f.args[2].name"
            eq: "z"
        odd_call:
            assert: "f.call(True)"
            eq: 1
"""

SLOW_PY = "def slow(n):\n    if n == 3:\n        while True:\n            pass\n    return 1\n"


@pytest.fixture(scope="module")
def slow_question(tmp_path_factory) -> InterviewQuestion:
    path = tmp_path_factory.mktemp("canaicode") / "bad.yaml"
    path.write_text(BAD)
    [q] = parse_interview_file("custom", path)
    assert q.error is None
    return q


def test_a_call_that_never_returns_and_a_check_that_raises_fail_only_their_checks(slow_question, box) -> None:
    ev = asyncio.run(evaluate(slow_question, "python", SLOW_PY, box, timeout_s=1.0))
    by_name = {c.name: c for c in ev.checks}
    assert by_name["name"].points == 1
    assert by_name["value"].got == {"error": "timeout!"} and by_name["value"].points == 0
    assert by_name["raises"].got == "list index out of range" and by_name["raises"].error.startswith("IndexError")
    # arguments are written as JSON literals: Python gets `true`, an undefined name there, as upstream
    assert by_name["odd_call"].got == {"error": "name 'true' is not defined", "exc_type": "NameError"}
    assert (ev.status, ev.points, ev.total, ev.timeouts) == ("FAIL", 1, 5, 1)


def test_javascript_values_and_failures(slow_question, box) -> None:
    js = "function slow(n) {\n  if (n === 3) { while (true) {} }\n  return n === true ? 1 : undefined;\n}\n"
    ev = asyncio.run(evaluate(slow_question, "javascript", js, box, timeout_s=1.0))
    by_name = {c.name: c for c in ev.checks}
    assert by_name["value"].got == {"error": "timeout!"}
    assert by_name["odd_call"].got == 1 and by_name["odd_call"].points == 1  # JS reads the JSON literal `true`
    assert (ev.status, ev.points) == ("FAIL", 2)


def test_no_code_no_function_and_what_upstream_wrappers_allow(canaicode_root: Path, box) -> None:
    q = {q.name: q for q in load_interview(canaicode_root, "junior-v2")}
    fact = q["FactorialZeroShot"]
    assert asyncio.run(evaluate(fact, "python", "", box)).status == "NO_CODE"
    nf = asyncio.run(evaluate(fact, "python", "print('I cannot do that')", box))
    assert (nf.status, nf.points, nf.total, nf.calls) == ("NO_FUNCTION", 0, 4, 0)
    # the Python wrapper imported math before the answer runs; a generator comes back as a list
    gcd = asyncio.run(evaluate(q["GCDZeroShot"], "python", "def gcd(a, b):\n    return math.gcd(a, b)", box))
    assert gcd.status == "PASS"
    fib = asyncio.run(
        evaluate(
            q["FibonacciListZeroShot"],
            "python",
            "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        yield a\n        a, b = b, a + b",
            box,
        )
    )
    assert {c.name: c.got for c in fib.checks}["value_5"] == [0, 1, 1, 2, 3]
    # JavaScript that returns undefined prints `###undefined`: not JSON, the check's value is the error text
    undefined = asyncio.run(evaluate(fact, "javascript", "function factorial(n) {\n  let r = 1;\n}", box))
    assert {c.name: c.got for c in undefined.checks}["value_5"] == "Expecting value: line 1 column 1 (char 0)"
    # a syntax error in the answer is the call's error value, not a crash
    broken = asyncio.run(evaluate(fact, "python", "def factorial(n):\n    return n +", box))
    assert broken.checks[2].got["exc_type"] == "SyntaxError" and broken.status == "FAIL"
