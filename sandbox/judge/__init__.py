"""A stdin/stdout judge on top of the sandbox: programs, test cases and limits in, verdicts out.

    judge = Judge(Sandbox())
    j = await judge.judge(Program(source=src, language="cpp"), [TestCase(input="1 2\\n", expected="3\\n")],
                          JudgeLimits(time_s=2, memory_mb=256))
    j.verdict        # accepted | wrong_answer | time_limit | memory_limit | runtime_error | compile_error
                     # | output_limit | judge_error (the judge could not decide: the sandbox or a test item failed)

Two program shapes. A `program` reads stdin and writes stdout itself (C++ without headers gets
`<bits/stdc++.h>`; a Java program runs from the file its public/main class needs). A `function` is a
LeetCode-style solution (a `class Solution` method or a free function): a per-language template adds
the usual headers/imports and `ListNode`/`TreeNode`, drops the answer's own `main`, and wraps it in a
harness that reads one JSON value per line (one line per parameter), calls the function and prints
the result as compact JSON (a `void` function prints its first argument, changed in place). The
entry function is named or found: the one no other function calls.

C++ and Java compile once per distinct source (cached): the compile step runs in the sandbox and
hands the artifact back as a base64 tar on stdout, which each test run unpacks in its own fresh
work dir (the sandbox keeps nothing between runs). Python is "compiled" with `compile()` on the host
(parsing only, nothing runs), so a SyntaxError is a compile error as on the usual online judges.

Time limits count the program's CPU seconds (reported by the sandbox's reaper, out of the program's
reach); the wall clock only stops runaways (`wall_factor`), so a loaded machine does not turn into
time-limit verdicts. Memory: C++ and Python run under RLIMIT_AS = the limit, Java with -Xmx = the limit.
`measure` runs programs over the tests repeatedly, interleaved, for runtime/memory comparisons.

Modules, one job each: `model` (the data), `scan` (language, shape and entry function from the source),
`assemble` with `harness/` (the per-language templates, package data), `build` (compile and run per
language), `verdicts` (a run's verdict, the judgement), `checkers` (output comparison), `runner` (`Judge`).
"""

from sandbox.judge.assemble import (
    CPP_IO,
    CPP_NODES,
    CPP_PRELUDE,
    JAVA_HARNESS,
    JAVA_IMPORTS,
    JAVA_MAIN_CLASS,
    JAVA_NODES,
    PYTHON_HARNESS,
    PYTHON_NODES,
    PYTHON_PRELUDE,
    SourceError,
    assemble,
)
from sandbox.judge.checkers import check, parse_value, read_value
from sandbox.judge.model import (
    ARTIFACT,
    BAD_INPUT_EXIT,
    BAD_INPUT_MARK,
    CHECKERS,
    COMPILE_TIMEOUT_S,
    JUDGE_LANGUAGES,
    TAIL,
    VERDICTS,
    Build,
    Checker,
    FunctionInfo,
    JudgeLimits,
    Judgement,
    Program,
    Shape,
    TestCase,
    TestResult,
    Usage,
    Verdict,
)
from sandbox.judge.runner import Judge
from sandbox.judge.scan import describe, detect_shape, guess_language, normalise_language
from sandbox.singleflight import SingleFlight

__all__ = [
    "ARTIFACT",
    "BAD_INPUT_EXIT",
    "BAD_INPUT_MARK",
    "CHECKERS",
    "COMPILE_TIMEOUT_S",
    "CPP_IO",
    "CPP_NODES",
    "CPP_PRELUDE",
    "JAVA_HARNESS",
    "JAVA_IMPORTS",
    "JAVA_MAIN_CLASS",
    "JAVA_NODES",
    "JUDGE_LANGUAGES",
    "PYTHON_HARNESS",
    "PYTHON_NODES",
    "PYTHON_PRELUDE",
    "TAIL",
    "VERDICTS",
    "Build",
    "Checker",
    "FunctionInfo",
    "Judge",
    "Judgement",
    "JudgeLimits",
    "Program",
    "Shape",
    "SingleFlight",
    "SourceError",
    "TestCase",
    "TestResult",
    "Usage",
    "Verdict",
    "assemble",
    "check",
    "describe",
    "detect_shape",
    "guess_language",
    "normalise_language",
    "parse_value",
    "read_value",
]
