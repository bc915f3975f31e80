"""CanItEdit gold check, in full: for all 105 problems `after + tests` passes with 100% line coverage
and `before + tests` fails, run in the bwrap sandbox with the suite's environment (prepared here
when missing; idempotent, ~30 s from nothing)."""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sandbox import ExecResult, Sandbox, envs

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")
PROBLEMS = DATA / "canitedit" / "canitedit_test.jsonl"
TIMEOUT_S = 15.0  # the paper's per-program limit
COVERAGE_TIMEOUT_S = 60.0
MEMORY_MB = 4096  # torch and scikit-learn reserve a lot of address space at import
# Tests that compare timings (timeit): their verdicts are taken alone after the parallel batch,
# where two programs competing for the 2 cores cannot blur the 10% margins they assert.
TIMING = re.compile(r"\btimeit\b|perf_counter|time\.time\(")
# Modules that cannot be installed here; the suite replaces them with an import stub (the reason is
# in sandbox/envs.py) and the problems that import them are reported, not dropped.
NOT_INSTALLABLE = {"vllm": ["78_llm_inference"]}


def _as_expected(kind: str, res: ExecResult) -> bool:
    """The gold `after` passes; `before` fails (by its assertions or the clock)."""
    return res.status == "ok" if kind == "after" else res.status in ("failed", "timeout")


def _problems() -> list[dict]:
    if not PROBLEMS.exists():
        pytest.skip(f"CanItEdit data not found at {PROBLEMS} (set EDIT_FIDELITY_DATA)")
    return [json.loads(line) for line in PROBLEMS.read_text().splitlines()]


def _imports(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


@pytest.fixture(scope="module")
def suite_box() -> Iterator[Sandbox]:
    envs.prepare("canitedit", log=lambda msg: print(msg, file=sys.stderr))
    box = Sandbox("bwrap", workers=2)
    yield box
    box.close()


def test_every_imported_library_is_installed_or_a_declared_stub(suite_box: Sandbox) -> None:
    problems = _problems()
    third_party: dict[str, list[str]] = {}
    for p in problems:
        for module in _imports(p["before"] + "\n" + p["after"] + "\n" + p["tests"]):
            if module not in sys.stdlib_module_names:
                third_party.setdefault(module, []).append(p["full_name"])
    stubbed = {m: sorted(names) for m, names in third_party.items() if m in envs.SUITES["canitedit"].stubs}
    assert stubbed == NOT_INSTALLABLE
    real = sorted(set(third_party) - set(stubbed))
    assert real == ["autograd", "flask", "numpy", "pandas", "scipy", "sklearn", "torch", "z3"]
    probe = f"import importlib\nfor m in {real!r}:\n    importlib.import_module(m)\nprint('imported')\n"
    res = suite_box.run({"imports.py": probe}, suite="canitedit", timeout_s=60, memory_mb=MEMORY_MB)
    assert res.status == "ok" and res.stdout == "imported\n", res.stderr[-2000:]


def gold_check(box: Sandbox, problems: list[dict], isolation: str) -> dict[tuple[str, str, str], ExecResult]:
    """Every problem's gold `after + tests` (a plain run and a traced one) and `before + tests` in `box`,
    as the paper scores them; asserts that every gold passes with full coverage and every `before` fails.
    Returns the result of each (problem, kind, program) job. Shared by the bwrap and the docker level."""
    timing = {p["full_name"] for p in problems if TIMING.search(p["tests"])}
    jobs: list[tuple[str, str, str]] = []  # (problem, kind, program)
    for p in problems:
        after, before = p["after"] + "\n" + p["tests"], p["before"] + "\n" + p["tests"]
        jobs.append((p["full_name"], "coverage", after))
        if p["full_name"] not in timing:
            jobs += [(p["full_name"], "after", after), (p["full_name"], "before", before)]

    def run(job: tuple[str, str, str]) -> ExecResult:
        _, kind, program = job
        return box.run(
            {"prog.py": program},
            suite="canitedit",
            memory_mb=MEMORY_MB,
            timeout_s=COVERAGE_TIMEOUT_S if kind == "coverage" else TIMEOUT_S,
            coverage=kind == "coverage",
        )

    with ThreadPoolExecutor(2) as pool:
        results = dict(zip(jobs, pool.map(run, jobs), strict=True))
    # Timing tests alone, with no second program on the other core. Their margins are 10%, which
    # load from outside this test (other jobs on a shared machine) can still cross, so one verdict
    # proves little: two expected runs decide, else up to 5 runs (3 expected ones decide). A split
    # vote is load, not data: it is reported as a flaky verdict (a warning in pytest's summary and a
    # line on stderr), never silently; only 5 runs none of which is as expected fail the check.
    flaky: list[str] = []
    for p in problems:
        if p["full_name"] in timing:
            for kind in ("after", "before"):
                job = (p["full_name"], kind, p[kind] + "\n" + p["tests"])
                tries: list[ExecResult] = []
                while len(tries) < 5:
                    tries.append(run(job))
                    good = sum(_as_expected(kind, t) for t in tries)
                    if good == len(tries) == 2 or good >= 3 or good and len(tries) - good >= 3:
                        break
                good = sum(_as_expected(kind, t) for t in tries)
                if 0 < good * 2 <= len(tries):
                    flaky.append(f"{p['full_name']} ({kind}): {good} of {len(tries)} runs as expected")
                results[job] = next((t for t in tries if _as_expected(kind, t)), tries[0])
    for line in flaky:
        warnings.warn(f"flaky timing verdict under load: {line}", stacklevel=1)
        print(f"flaky timing verdict under load: {line}", file=sys.stderr)

    # A gold "after" that hit the clock is re-run once alone: on a machine shared with other work a
    # 4 s torch program can be starved past 15 s; a real failure fails again and is reported.
    for job, res in list(results.items()):
        if job[1] in ("after", "coverage") and res.status == "timeout":
            results[job] = run(job)
            print(f"re-ran {job[0]} ({job[1]}) after a timeout: {results[job].status}", file=sys.stderr)

    failures: list[str] = []
    for (name, kind, _), res in results.items():
        assert res.isolation == isolation
        detail = f"{res.status}: {(res.error or res.stderr)[-400:]}"
        if kind == "coverage" and (res.coverage is None or res.coverage["prog.py"].missing):
            missing = res.coverage["prog.py"].missing if res.coverage else f"no report ({detail})"
            failures.append(f"{name}: gold after not fully covered, missing {missing}")
        elif kind == "after" and res.status != "ok":
            failures.append(f"{name}: gold after + tests {detail}")
        elif kind == "before" and res.status not in ("failed", "timeout"):
            failures.append(f"{name}: before + tests gave {res.status} {res.error}")
    assert failures == [], "\n".join(failures)
    assert [sum(k == kind for _, k, _ in results) for kind in ("after", "before", "coverage")] == [len(problems)] * 3
    return results


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 315 runs; a `before` that times out now spends its 15 CPU-seconds
def test_gold_after_passes_with_full_coverage_and_before_fails(suite_box: Sandbox) -> None:
    """As the paper scores it: the verdict is an untraced run (exit 0 within 15 s); coverage comes
    from a second, traced run whose own verdict is ignored (tracing slows programs and breaks
    timing asserts), given more time so a loaded machine cannot starve the measurement."""
    problems = _problems()
    assert len(problems) == 105
    timing = {p["full_name"] for p in problems if TIMING.search(p["tests"])}
    assert sorted(timing) == ["47_merge_sort", "55_bm25", "60_unique_number"]
    assert len(gold_check(suite_box, problems, "bwrap")) == 315
