"""One answer to one question in one language, graded as upstream's `evaluation()` grades it.

No code: NO_CODE (0 points). No function found by the regex: NO_FUNCTION (0 points). Otherwise every
check's `assert` expression is evaluated with `f` bound to the function under test; an expression
that raises scores its message as the value (upstream: `test_value = str(e)`), so a failing
`f.args[0].name` or a call that returned garbage is a failed check, never a failed run. The row is
PASS when the points reach the total, else FAIL.

Checks run concurrently, each on a worker thread of this module (its `f.call`s block on sandbox slots),
so one answer's calls overlap on the sandbox's workers.
"""

from __future__ import annotations

import asyncio
import builtins
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import msgspec

from benchmark.suites.canaicode import checks as scoring
from benchmark.suites.canaicode.function import (
    CALL_TIMEOUT_S,
    FunctionUnderTest,
    Runner,
    SandboxFailure,
)
from benchmark.suites.canaicode.interview import Check, InterviewQuestion

Status = Literal["PASS", "FAIL", "NO_CODE", "NO_FUNCTION"]
GOT_MAX_CHARS = 2000  # a stored value longer than this (as JSON) is kept as a truncated repr

# What an `assert` expression may use besides `f`. Interview files are trusted benchmark data, as
# upstream treats them (it evals with everything in scope); this only keeps typos from reaching
# the process's globals. Model code never runs here: `f.call` runs it in the sandbox.
_BUILTIN_NAMES = (
    "abs",
    "all",
    "any",
    "bool",
    "dict",
    "enumerate",
    "filter",
    "float",
    "int",
    "isinstance",
    "len",
    "list",
    "map",
    "max",
    "min",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "sorted",
    "str",
    "sum",
    "tuple",
    "type",
    "zip",
)
SAFE_BUILTINS = {name: getattr(builtins, name) for name in _BUILTIN_NAMES}


class CheckResult(msgspec.Struct, kw_only=True):
    name: str
    assert_: str = msgspec.field(name="assert")
    expected: Any
    weight: int
    got: Any
    points: int
    passed: bool
    error: str | None = None  # the expression raised; `got` is its message, as upstream stores it


class Evaluation(msgspec.Struct, kw_only=True):
    status: Status
    points: int
    total: int
    function: str | None = None
    args: list[str] = []
    checks: list[CheckResult] = []
    calls: int = 0
    timeouts: int = 0
    sandbox_ms: float = 0.0
    sandbox_error: str | None = None  # the sandbox failed (not the answer): the points are not usable


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(32, thread_name_prefix="canaicode-check")
        return _pool


def storable(value: Any) -> Any:
    """A JSON value for the record (upstream stores `got` as JSON too); long or odd values as a repr."""
    try:
        encoded = msgspec.json.encode(value)
    except (TypeError, ValueError, OverflowError):
        text = repr(value)
        return text if len(text) <= GOT_MAX_CHARS else text[:GOT_MAX_CHARS] + "...(truncated)"
    if len(encoded) <= GOT_MAX_CHARS:
        return value
    return encoded[:GOT_MAX_CHARS].decode("utf-8", "ignore") + "...(truncated)"


def run_check(f: FunctionUnderTest, check: Check, padding: scoring.ListPadding) -> tuple[CheckResult, str | None]:
    """Evaluate one check (blocking: its calls run in the sandbox); the result and any sandbox failure."""
    error = failure = None
    try:
        got = eval(compile(check.assert_, f"<check {check.name}>", "eval"), {"__builtins__": SAFE_BUILTINS, "f": f})
    except SandboxFailure as exc:
        got, failure = str(exc), str(exc)
    except Exception as exc:  # noqa: BLE001  # upstream: the exception's message is the value
        got, error = str(exc), f"{type(exc).__name__}: {exc}"
    s = scoring.score(check, got, padding=padding)
    return CheckResult(
        name=check.name,
        assert_=check.assert_,
        expected=scoring.expected_value(check),
        weight=check.weight,
        got=storable(got),
        points=s.points,
        passed=s.passed,
        error=error,
    ), failure


async def evaluate(
    question: InterviewQuestion,
    language: str,
    code: str | None,
    box: Runner,
    *,
    timeout_s: float = CALL_TIMEOUT_S,
    padding: scoring.ListPadding = "better",
) -> Evaluation:
    if question.error is not None:
        raise ValueError(question.error)
    total = question.total
    if not code:
        return Evaluation(status="NO_CODE", points=0, total=total)
    f = FunctionUnderTest(code, language, box, timeout_s=timeout_s)
    if not f.found:
        return Evaluation(status="NO_FUNCTION", points=0, total=total)
    loop = asyncio.get_running_loop()
    done = await asyncio.gather(*(loop.run_in_executor(_executor(), run_check, f, c, padding) for c in question.checks))
    results = [r for r, _ in done]
    failures = [x for _, x in done if x is not None]
    points = sum(r.points for r in results)
    return Evaluation(
        status="PASS" if points == total else "FAIL",
        points=points,
        total=total,
        function=f.name,
        args=[a.name for a in f.args],
        checks=results,
        calls=len(f.runs),
        timeouts=sum(r.status == "timeout" for r in f.runs),
        sandbox_ms=sum(r.wall_s for r in f.runs) * 1000.0,
        sandbox_error=failures[0] if failures else None,
    )
