"""Suite `canitedit` (SPEC 3.3): 105 instructed edits of Python programs with hidden tests, two
instruction kinds (`descriptive`, `lazy`), pass@k and ExcessCode.

Data (`DATA/canitedit/canitedit_test.jsonl`): the hub's `nuprl/CanItEdit` test split, fetched by
`edit-fidelity bench download canitedit` (or on first use into the per-user cache). Recorded runs
(`recorded:RUN.tar.gz`) are the paper's MultiPL-E archives.

Judging: `completion + "\\n" + tests` runs under `python3` in the `canitedit` sandbox environment
(15 s); a passing completion runs again under coverage.py and its ExcessCode is the completion's
missing lines over the Differ line count against `before` (`metrics`: the evaluator's reading of
`coverage report -m`, and a strict mode over statements alone).

Modules, one job each: `task` (the task type), `problems` (the loader), `download`, `judge` (the sandbox
verdict), `metrics` (ExcessCode), `archive` (recorded runs), `summary` (summary.json and the text
tables), `html` (report sections), `suite` (the parts and `make`, the suite).
"""

from __future__ import annotations

from benchmark.suites.canitedit.download import download
from benchmark.suites.canitedit.judge import PROGRAM, TIMEOUT_S, TIMING, Verdict, judge, passes, program
from benchmark.suites.canitedit.problems import CONDITIONS, FILE, HF_DATASET, NAME, Problem, load, parse
from benchmark.suites.canitedit.suite import make

__all__ = [
    "CONDITIONS",
    "FILE",
    "HF_DATASET",
    "NAME",
    "PROGRAM",
    "TIMEOUT_S",
    "TIMING",
    "Problem",
    "Verdict",
    "download",
    "judge",
    "load",
    "make",
    "parse",
    "passes",
    "program",
]
