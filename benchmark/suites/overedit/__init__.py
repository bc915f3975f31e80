"""Suite `overedit` (SPEC 3.4): the minimal-fix tasks of "When Models Edit Too Much".

Each task is a correct BigCodeBench solution with one or two injected corruptions; the document the
server opens is the corrupted program C, the gold G is the reference solution (the corruptions undone).
Conditions: `generic` ("What is wrong? Fix and complete my function.") and `explicit` (the same, plus
"but keep as much of the original code as possible"), sent with the server's prompt styles `generic`
and `minimal`. A repair M passes when the task's unittest `TestCases` run successfully, with no
errors, in the sandbox's `overedit` environment (`edit-fidelity sandbox prepare --suite overedit`).

Reported over passing repairs: excess ELev = d(M, C) - d(G, C) in the `no_comments` and
`body_no_comments` variants, and added cognitive complexity CC(M) - CC(G) (paper mode), signed mean and
mean of absolute values; all per condition, per corruption family and per number of corruptions.
Tasks whose environment lacks a module (or an NLTK resource) are listed with it, and Pass@1 is also
given over the other tasks.

Modules, one job each: `tasks` (the task type and the loader), `download`, `judge` (the sandbox verdict
and environment gaps), `fidelity` (the numbers from the texts), `summary` (summary.json and the text
table), `compare` (explicit against generic), `html` (report sections), `suite` (the parts and `make`, the suite).
"""

from __future__ import annotations

from benchmark.suites.overedit.compare import compare_conditions, render_compare
from benchmark.suites.overedit.download import SOURCE_SHA256, SOURCE_URL, URL_ENV, download
from benchmark.suites.overedit.fidelity import fidelity, normalised_flags
from benchmark.suites.overedit.html import sections
from benchmark.suites.overedit.judge import (
    ENV_OVERRIDE,
    MEMORY_MB,
    NETWORK_MODULES,
    TIMEOUT_S,
    environment_gap,
    imported_modules,
    missing_imports,
)
from benchmark.suites.overedit.suite import make
from benchmark.suites.overedit.summary import render_text, summarise, summarise_condition
from benchmark.suites.overedit.tasks import (
    CONDITIONS,
    DATA_FILE,
    ENV,
    EXPLICIT_ASK,
    GENERIC_ASK,
    NAME,
    Task,
    data_file,
    load,
    parse_tasks,
)

__all__ = [
    "CONDITIONS",
    "DATA_FILE",
    "ENV",
    "ENV_OVERRIDE",
    "EXPLICIT_ASK",
    "GENERIC_ASK",
    "MEMORY_MB",
    "NAME",
    "NETWORK_MODULES",
    "SOURCE_SHA256",
    "SOURCE_URL",
    "TIMEOUT_S",
    "URL_ENV",
    "Task",
    "compare_conditions",
    "data_file",
    "download",
    "environment_gap",
    "fidelity",
    "imported_modules",
    "load",
    "make",
    "missing_imports",
    "normalised_flags",
    "parse_tasks",
    "render_compare",
    "render_text",
    "sections",
    "summarise",
    "summarise_condition",
]
