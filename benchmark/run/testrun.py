"""Running a solution's tests in the sandbox: a unittest `TestCases` class (BigCodeBench) or a plain
test script (CanItEdit, a user's asserts).

`unittest`: the solution and the tests run as one module (`solution + "\\n" + tests`, as BigCodeBench's
evaluator does), `TestCases` is loaded and run; a pass is a successful result with at least one test
and no errors. `script`: `solution + "\\n" + tests` runs as a file; a pass is exit status 0.
A module or an NLTK resource that is not installed is reported as `missing`, and so is `network` when
a failing program tried to reach a host (the sandbox has loopback only): a task whose environment
lacks something is told apart from a wrong solution.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

import msgspec

TestKind = Literal["unittest", "script"]
MARK = "@@edit-fidelity-tests@@"

# Runs inside the sandbox (the suite's own interpreter); prints one marked JSON line at the end.
RUNNER = r"""
import io, json, os, sys, time, types, unittest
from contextlib import redirect_stderr, redirect_stdout

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ["TZ"] = "UTC"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
time.tzset()
MARK = "@@edit-fidelity-tests@@"
real_stdout = sys.stdout
out = {"tests_run": 0, "failures": 0, "errors": 0, "skipped": 0, "ok": False, "load_error": None, "problems": [],
       "network": []}


def watch(name):  # a lookup or connection that fails here is the missing network, not the program
    import socket
    real = getattr(socket, name)

    def watched(*args, **kwargs):
        try:
            return real(*args, **kwargs)
        except OSError as exc:
            if len(out["network"]) < 5:
                out["network"].append(f"{name}{args[:1]!r}: {exc}"[:200])
            raise
    setattr(socket, name, watched)


for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr"):
    watch(name)


def finish(code):
    real_stdout.write("\n" + MARK + json.dumps(out) + "\n")
    real_stdout.flush()
    os._exit(code)  # no atexit handlers or lingering threads of the program


source = open("solution.py").read() + "\n" + open("tests.py").read()
module = types.ModuleType("__test__")
module.__dict__.update({"__file__": os.path.abspath("__test__.py")})
sys.modules["__test__"] = module
sink = io.StringIO()
try:
    with redirect_stdout(sink), redirect_stderr(sink):
        exec(compile(source, "__test__.py", "exec"), module.__dict__)
    cases = getattr(module, "TestCases", None)
    if cases is None:
        raise LookupError("the tests define no TestCases class")
    suite = unittest.TestLoader().loadTestsFromTestCase(cases)
except BaseException as exc:
    out["load_error"] = f"{type(exc).__name__}: {exc}"[:2000]
    if isinstance(exc, ModuleNotFoundError):
        out["missing_module"] = exc.name
    finish(1)
result = unittest.TestResult()
with redirect_stdout(sink), redirect_stderr(sink):
    try:
        suite.run(result)
    except BaseException as exc:
        out["load_error"] = f"{type(exc).__name__} while running the tests: {exc}"[:2000]
out.update(tests_run=result.testsRun, failures=len(result.failures), errors=len(result.errors),
           skipped=len(result.skipped))
out["problems"] = [[t.id().rsplit(".", 1)[-1], trace[-1500:]] for t, trace in (result.errors + result.failures)[:20]]
out["ok"] = out["load_error"] is None and result.wasSuccessful() and result.testsRun > 0
finish(0 if out["ok"] else 1)
"""

_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_NLTK_RESOURCE = re.compile(r"Resource ([\w/.]+) not found")  # nltk's LookupError, colours removed
_NO_HOST = re.compile(r"Temporary failure in name resolution|Name or service not known|Network is unreachable")


class TestRun(msgspec.Struct, kw_only=True):
    """The outcome of one program's tests."""

    passed: bool
    status: str  # the sandbox status: ok | failed | timeout | memory | output_limit | error
    exit_code: int | None = None
    tests_run: int = 0
    failures: int = 0
    errors: int = 0
    missing: str | None = None  # a module ("pandas") or NLTK resource ("nltk_data:stopwords") not installed
    detail: str = ""  # why it failed: the load error, the first failing tests' tracebacks, or stderr
    wall_s: float = 0.0
    cpu_s: float = 0.0
    starved_runs: int = 0  # runs the sandbox did again alone because the program got no CPU
    sandbox_error: str | None = None  # the sandbox could not run it (says nothing about the program)


def missing_from(text: str) -> str | None:
    m = _NO_MODULE.search(text)
    if m:
        return m.group(1).split(".")[0]
    m = _NLTK_RESOURCE.search(_ANSI.sub("", text))
    if m:
        return f"nltk_data:{m.group(1).split('/')[-1]}"
    if _NO_HOST.search(text):
        return "network"
    return None


def files_for(solution: str, tests: str, kind: TestKind) -> tuple[dict[str, str], str]:
    if kind == "unittest":
        return {"solution.py": solution, "tests.py": tests, "run_tests.py": RUNNER}, "run_tests.py"
    return {"program.py": solution + "\n" + tests}, "program.py"


def read_result(res: Any, kind: TestKind) -> TestRun:
    """Turn the sandbox's `ExecResult` into a `TestRun`."""
    run = TestRun(
        passed=False,
        status=res.status,
        exit_code=res.exit_code,
        wall_s=res.wall_s,
        cpu_s=res.cpu_s,
        starved_runs=getattr(res, "starved_runs", 0),
    )
    if res.status == "error":
        run.sandbox_error = res.error or "sandbox error"
        run.detail = run.sandbox_error
        return run
    stdout, stderr = res.stdout or "", res.stderr or ""
    if kind == "script":
        run.passed = res.status == "ok"
        run.missing = missing_from(stderr)
        run.detail = "" if run.passed else (stderr or stdout)[-1500:]
        return run
    report = None
    at = stdout.rfind(MARK)
    if at >= 0:
        try:
            report = json.loads(stdout[at + len(MARK) :].strip().splitlines()[0])
        except (ValueError, IndexError):
            report = None
    if report is None:  # killed, crashed, or the program closed our stdout: no report
        run.detail = (f"{res.status}: " + (stderr or stdout)[-1500:]).strip()
        run.missing = missing_from(stderr)
        return run
    run.tests_run, run.failures, run.errors = report["tests_run"], report["failures"], report["errors"]
    run.passed = bool(report["ok"]) and res.status == "ok"
    problems = "\n".join(f"{name}: {trace}" for name, trace in report.get("problems") or [])
    run.detail = (report.get("load_error") or problems)[-3000:] if not run.passed else ""
    run.missing = report.get("missing_module") or missing_from((report.get("load_error") or "") + "\n" + problems)
    if run.missing and ":" not in run.missing:
        run.missing = run.missing.split(".")[0]
    if not run.passed and not run.missing and report.get("network"):
        run.missing = "network"
        run.detail = ("network: " + "; ".join(report["network"]) + "\n" + run.detail)[-3000:]
    return run


async def run_tests(
    box: Any,
    solution: str,
    tests: str,
    *,
    kind: TestKind,
    env: str | None,
    timeout_s: float,
    memory_mb: int | None = None,
) -> TestRun:
    """Run `tests` against `solution` in the sandbox `box` with the suite environment `env`."""
    files, entry = files_for(solution, tests, kind)
    res = await box.arun(files, entry, suite=env, timeout_s=timeout_s, memory_mb=memory_mb)
    return read_result(res, kind)


def detect_kind(tests: str) -> TestKind:
    """`unittest` when the tests define a `TestCases` class, else a plain script."""
    return "unittest" if re.search(r"^class\s+TestCases\b", tests, re.MULTILINE) else "script"
