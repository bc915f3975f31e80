"""Suite `canitedit` (SPEC 3.3): problems, conditions, and the sandbox verdict with ExcessCode.

A completion passes when `completion + "\\n" + tests` exits 0 within 15 s under `python3` in the
prepared `canitedit` environment; a passing completion runs again under coverage.py (default
exclusions plus `@(abc\\.)?abstractmethod`, which the sandbox applies) and its excess is the number
of missing lines of the completion part over the Differ line count against `before` (missing lines
as the evaluator reads them from `coverage report -m`, see `metrics`; strict mode alongside).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from benchmark import metrics
from benchmark.datadir import DataError, data_dir, require
from benchmark.suite import Suite
from benchmark.suite import Verdict as BaseVerdict

if TYPE_CHECKING:
    from benchmark.records import RunConfig, SampleRecord

NAME = "canitedit"
CONDITIONS = ("descriptive", "lazy")
TIMEOUT_S = 15.0
PROGRAM = "program.py"


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    name: str
    full_name: str
    before: str
    after: str
    tests: str
    instruction_descriptive: str
    instruction_lazy: str
    taxonomy: dict = {}

    @property
    def task_id(self) -> str:
        return self.full_name

    def instruction(self, condition: str) -> str:
        if condition == "descriptive":
            return self.instruction_descriptive
        if condition == "lazy":
            return self.instruction_lazy
        raise ValueError(f"unknown CanItEdit condition {condition!r}; known: {', '.join(CONDITIONS)}")


HF_DATASET = "nuprl/CanItEdit"
FILE = Path("canitedit") / "canitedit_test.jsonl"


def download(data: str | Path | None = None, *, log=None) -> Path:
    """The test split from the Hugging Face hub into the data directory (sorted by id, as the data dir has it)."""
    from benchmark.download import hf_rows, write_jsonl

    def progress(done: int, total: int) -> None:
        if log is not None:
            log(f"CanItEdit: {done}/{total} problems")

    rows = sorted(hf_rows(HF_DATASET, "test", on_page=progress), key=lambda r: r["id"])
    for r in rows:
        msgspec.convert(r, Problem)  # refuse a split whose fields are not CanItEdit's before writing it
    return write_jsonl(data_dir(data) / FILE, rows, what="CanItEdit problems")


def load(data: str | Path | None = None, limit: int | None = None) -> list[Problem]:
    """The problems from the data directory; with no directory configured (the per-user cache), the
    first use downloads them from the hub."""
    path = data_dir(data) / FILE
    if not path.exists() and data is None and not os.environ.get("EDIT_FIDELITY_DATA"):
        import sys

        download(log=lambda msg: print(msg, file=sys.stderr))
    path = require(path, f"CanItEdit problems ({FILE}; `edit-fidelity bench download canitedit` fetches them)")
    problems = parse(path)
    problems.sort(key=lambda p: p.id)
    return problems[:limit] if limit else problems


def parse(path: Path) -> list[Problem]:
    """Every line a problem; a damaged file is refused whole (naming file:line), since a run on part of
    the problems would report figures that are not CanItEdit's."""
    fix = "fetch it again with `edit-fidelity bench download canitedit`"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start}); {fix}") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read CanItEdit problems: {exc.strerror or exc}") from None
    problems: list[Problem] = []
    bad: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            problems.append(msgspec.convert(json.loads(line), Problem))
        except (ValueError, msgspec.ValidationError) as exc:  # JSONDecodeError is a ValueError
            bad.append(f"{path}:{n}: not a CanItEdit problem ({' '.join(str(exc).split())[:200]})")
    if bad:
        more = f" (and {len(bad) - 1} more bad lines)" if len(bad) > 1 else ""
        raise DataError(f"{bad[0]}{more}; {fix}")
    if not problems:
        raise DataError(f"{path}: no CanItEdit problems in it; {fix}")
    return problems


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
        rec.missing_lines, rec.differ_lines, rec.excess_code = self.missing_lines, self.differ_lines, self.excess_code
        rec.missing_statements, rec.excess_code_strict = self.missing_statements, self.excess_code_strict


async def judge(box, problem: Problem, completion: str) -> Verdict:
    """Run the tests; for a pass, run under coverage and compute the completion's ExcessCode."""
    files = {PROGRAM: program(completion, problem)}
    res = await box.arun(files, PROGRAM, suite=NAME, timeout_s=TIMEOUT_S)
    v = Verdict(passed=res.status == "ok", exec_status=res.status, exit_code=res.exit_code,
                stderr_tail=(res.stderr or res.error)[-400:], sandbox_ms=res.wall_s * 1000.0)
    if res.status == "error":
        v.sandbox_error = res.error or "sandbox error"
    if v.passed:
        cov = await box.arun(files, PROGRAM, suite=NAME, timeout_s=TIMEOUT_S, coverage=True)
        v.sandbox_ms += cov.wall_s * 1000.0
        fc = (cov.coverage or {}).get(PROGRAM)
        if cov.status == "ok" and fc is not None:
            statements = [*fc.executed, *fc.missing]
            missing = metrics.completion_missing(metrics.report_missing_lines(statements, fc.missing), completion)
            strict = metrics.completion_missing(fc.missing, completion)
            v.missing_lines, v.missing_statements = missing, strict
            v.differ_lines = metrics.differ_lines(problem.before, completion)
            v.excess_code = metrics.excess_code(missing, problem.before, completion)
            v.excess_code_strict = metrics.excess_code(strict, problem.before, completion)
        else:
            v.sandbox_error = f"coverage run: {cov.status} {cov.error or cov.stderr[-200:]}".strip()
    return v


# tests that compare timings (47_merge_sort, 55_bm25, 60_unique_number): 10% margins that load can cross
TIMING = re.compile(r"\btimeit\b|perf_counter|time\.time\(")


class CanItEdit(Suite):
    name = NAME
    conditions = CONDITIONS
    sandbox_env = NAME

    def timing_sensitive(self, task: Problem) -> bool:  # type: ignore[override]
        return bool(TIMING.search(task.tests))

    def load(self, data: str | Path | None, limit: int | None) -> list[Problem]:
        return load(data, limit)

    def download(self, data: str | Path | None, log: Callable[[str], None]) -> Path:
        return download(data, log=log)

    async def judge(self, box: Any, task: Problem, condition: str, completion: str) -> Verdict:  # type: ignore[override]
        return await judge(box, task, completion)

    async def passes(self, box: Any, task: Problem, condition: str, text: str) -> bool | None:  # type: ignore[override]
        res = await box.arun({PROGRAM: program(text, task)}, PROGRAM, suite=NAME, timeout_s=TIMEOUT_S)
        return None if res.status == "error" else res.status == "ok"  # the plain run only: no coverage

    def summarise(self, config: RunConfig, records: list[SampleRecord]) -> dict[str, Any]:
        from benchmark.report import summarise_canitedit

        return summarise_canitedit(config, records)

    def html_sections(self, summary: dict[str, Any], records: list[SampleRecord]) -> str:
        from benchmark.html import canitedit_sections

        return canitedit_sections(summary, records)
