"""The judge's data: programs, test cases and limits in, per-test results and judgements out."""

from __future__ import annotations

from collections.abc import Callable
from statistics import mean, pstdev
from typing import Literal, get_args

import msgspec

Verdict = Literal[
    "accepted",
    "wrong_answer",
    "time_limit",
    "memory_limit",
    "runtime_error",
    "compile_error",
    "output_limit",
    "judge_error",
]
VERDICTS: tuple[str, ...] = get_args(Verdict)  # the same names, in order, at run time
Shape = Literal["auto", "program", "function"]
# A checker name, or a special judge: (input, expected, output) -> ok, or (ok, why)
Checker = str | Callable[[str, str, str], "bool | tuple[bool, str]"]
CHECKERS = ("exact", "lines", "tokens", "numbers", "value")
JUDGE_LANGUAGES = ("python", "cpp", "java")

BAD_INPUT_EXIT = 3  # the harness could not read a test input (the test's fault, not the program's)
BAD_INPUT_MARK = "edit-fidelity judge: bad test input"
ARTIFACT = "artifact.tar"
COMPILE_TIMEOUT_S = 90.0
TAIL = 2000  # characters of stderr / compiler output kept in a verdict


class JudgeLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Limits of one test run."""

    time_s: float = 2.0  # CPU seconds per test case
    memory_mb: int = 256  # address space (C++, Python) or heap (Java) per test case
    output_kb: int = 1024  # stdout + stderr per test case
    wall_factor: float = 3.0  # the wall-clock stop: time_s * wall_factor + 1 s


class TestCase(msgspec.Struct, frozen=True, kw_only=True):
    __test__ = False  # not a pytest class

    input: str
    expected: str | None = None  # None: the output is collected, not compared
    name: str = ""


class Program(msgspec.Struct, frozen=True, kw_only=True):
    source: str
    language: str  # python | cpp | java (or an alias: c++, python3, py)
    shape: Shape = "auto"
    entry: str | None = None  # function shape: the function to call (found when None)


class TestResult(msgspec.Struct, kw_only=True):
    __test__ = False

    name: str
    verdict: Verdict
    cpu_s: float = 0.0
    wall_s: float = 0.0
    memory_mb: float = 0.0
    output: str = ""
    detail: str = ""


class Judgement(msgspec.Struct, kw_only=True):
    verdict: Verdict
    language: str
    shape: str
    entry: str | None = None
    detail: str = ""
    compile_output: str = ""
    tests: list[TestResult] = []

    @property
    def passed(self) -> bool:
        return self.verdict == "accepted"

    @property
    def cpu_s(self) -> float:
        return sum(t.cpu_s for t in self.tests)

    @property
    def memory_mb(self) -> float:
        return max((t.memory_mb for t in self.tests), default=0.0)


class Usage(msgspec.Struct, kw_only=True):
    """Repeated runs of one program over a test set: per repeat the CPU seconds summed over the tests
    and the peak memory over the tests; `failures` counts repeats in which some test did not run cleanly."""

    cpu_s: list[float]
    memory_mb: list[float]
    failures: int = 0

    @property
    def mean_cpu_s(self) -> float:
        return mean(self.cpu_s) if self.cpu_s else 0.0

    @property
    def mean_memory_mb(self) -> float:
        return mean(self.memory_mb) if self.memory_mb else 0.0

    @property
    def sd_cpu_s(self) -> float:
        return pstdev(self.cpu_s) if len(self.cpu_s) > 1 else 0.0

    @property
    def sd_memory_mb(self) -> float:
        return pstdev(self.memory_mb) if len(self.memory_mb) > 1 else 0.0


class FunctionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """The entry function of a function-shaped program: its name and (name, type text) parameters."""

    name: str
    params: list[tuple[str, str]]
    owner: str | None = None  # the class it is a method of ("Solution"), None for a free function


class Build(msgspec.Struct, kw_only=True):
    """A program ready to run: its files and command, or why it cannot run."""

    language: str
    shape: str
    entry: str | None = None
    files: dict[str, str | bytes] = {}  # Python: the source; C++/Java: the compiled artifact (a tar)
    main_class: str | None = None  # Java: the class the JVM starts
    verdict: Verdict | None = None  # compile_error / judge_error when it cannot run
    detail: str = ""
    compile_output: str = ""
