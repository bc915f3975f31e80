"""Validity study of the reference-free excess: how well does "excess over the smallest sub-edit the
tests accept" estimate the gold-based excess, where a gold patch is known?

    EDIT_FIDELITY_DATA=../shared/data .venv/bin/python -m benchmark.studies.necessity.study \\
        [--overedit-tasks 20] [--canitedit-tasks 10] [--runs canitedit_runs] [--samples 1] [--max-runs 32] \\
        [--granularity units] [--gold] [--out DIR]

For each candidate edit M of an original C with a gold patch G and hidden tests:
- gold-based excess = d(M, C) - d(G, C);
- reference-free excess = d(M, C) - D_min, D_min = d(S, C) for the smallest sub-edit S of M (a subset of
  its hunks, found by ddmin, `server.fidelity.judge.ddmin`) that still passes the tests in the sandbox;
- the `pooled` reference-free excess = d(M, C) - the smallest D_min among the analysed completions of the
  same problem (every run and instruction; `figures.py`);
with d the normalised `no_comments` token distance (SPEC 3.1). Sources:
- overedit (SPEC 3.4): C = the corrupted solution, G = the canonical one; the candidates are the gold
  fix plus behaviour-preserving extra hunks a model might add (an unused import, a defensive guard, a
  renamed local, a return through a temporary), built on G's syntax tree; the tests run in the
  sandbox environment `overedit` (`edit-fidelity sandbox prepare --suite overedit`);
- canitedit (SPEC 3.3): C = `before`, G = `after`, the candidates are the recorded runs' completions
  that passed (distinct ones, `--samples` per problem and kind), checked again in the sandbox
  (`canitedit` environment), with their ExcessCode from the coverage run;
- gold (`--gold`): every CanItEdit problem's gold edit analysed the same way, to show how much of the
  reference the tests do not need, and how many completions change less than even its minimal sub-edit.

It prints, per source, Pearson and Spearman correlation and the mean absolute error between the two
excesses (and, for CanItEdit, the correlation of each with ExcessCode), the sandbox runs per analysis
and how many analyses hit the run budget; `--out` gets items.jsonl, summary.json and report.html
(scatter plots). `--overedit-tasks` / `--canitedit-tasks` bound the runtime.

`reference_free_metrics` (`benchmark.run.reference_free`), the step each analysis runs, is the one a suite with
hidden tests runs for any passing completion (`bench run --necessity`).
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import os
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from benchmark.arg_types import number_arg
from benchmark.datadir import data_dir, require, run_script
from benchmark.run.reference_free import VARIANT, Passes, reference_free_metrics
from benchmark.run.testrun import run_tests
from benchmark.studies.necessity.figures import (  # noqa: F401 - re-exported: the study's figures
    StudyItem,
    _ranks,
    pearson,
    render_html,
    render_text,
    spearman,
)
from benchmark.studies.necessity.figures import summarise as _summarise
from benchmark.suites import canitedit
from benchmark.suites.canitedit.archive import load_archive
from sandbox import Sandbox, envs
from server.errors import UserError
from server.fidelity import distances
from server.fidelity.text import pyast

OVEREDIT_FILE = "overedit/corrupted_solutions_manual_easy_400.jsonl"


# -- the analysis of one completion ----------------------------------------------------------------
async def analyse(
    item: StudyItem,
    before: str,
    completion: str,
    gold: str,
    passes: Passes,
    *,
    max_runs: int,
    parallel: int,
    full_passed: bool | None = None,
    statements: bool = False,
) -> StudyItem:
    try:
        d_full = (await asyncio.to_thread(distances, before, completion))[VARIANT].normalized
        d_gold = (await asyncio.to_thread(distances, before, gold))[VARIANT].normalized
        item.distance, item.gold_distance, item.excess_gold = d_full, d_gold, d_full - d_gold
        m = await reference_free_metrics(
            before,
            completion,
            passes,
            max_runs=max_runs,
            parallel=parallel,
            full_passed=full_passed,
            statements=statements,
        )
    except Exception as exc:  # noqa: BLE001 - one bad item is reported, the study goes on
        item.status, item.error = "error", f"{type(exc).__name__}: {exc}"[:300]
        return item
    item.status, item.runs, item.hunks = m["necessity_status"], m["necessity_runs"], m["hunks"]
    item.needed, item.unnecessary = m["needed_hunks"], m["unnecessary_hunks"]
    item.d_min, item.excess_ref_free = m["d_min"], m["excess_ref_free"]
    if item.status == "full_fails":
        item.error = item.error or "the whole candidate fails the tests"
    elif item.status == "unresolved":
        item.error = item.error or "the sandbox could not run the tests"
    return item


# -- overedit: the gold fix plus extra hunks -------------------------------------------------------
def gold_text(canonical: str) -> str:
    """The canonical solution in the corrupted solution's form (`ast.unparse`), so that the diff holds
    the corruption's inverse only, not formatting and comments."""
    return ast.unparse(pyast.parse(canonical))


def _main_function(tree: ast.Module) -> ast.FunctionDef | None:
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    return next((f for f in funcs if f.name == "task_func"), funcs[0] if funcs else None)


def _first_statement(fn: ast.FunctionDef) -> int:
    first = fn.body[0] if fn.body else None
    is_doc = (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    )
    return 1 if is_doc else 0


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(node) if isinstance(a, ast.arg)
    }


def extra_unused_import(tree: ast.Module) -> bool:
    at = 0
    while at < len(tree.body) and (
        (isinstance(tree.body[at], ast.ImportFrom) and tree.body[at].module == "__future__")  # type: ignore[attr-defined]
        or (at == 0 and isinstance(tree.body[0], ast.Expr))
    ):
        at += 1
    tree.body.insert(at, ast.Import(names=[ast.alias(name="typing")]))
    return True


def extra_defensive_guard(tree: ast.Module) -> bool:
    """A guard that never fires (`is NotImplemented`): defensive code the tests cannot need."""
    fn = _main_function(tree)
    if fn is None:
        return False
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs) if a.arg != "self"]
    if not params:
        return False
    guard = pyast.parse(f"if {params[0]} is NotImplemented:\n    raise ValueError('invalid {params[0]}')").body[0]
    fn.body.insert(_first_statement(fn), guard)
    return True


def extra_return_temp(tree: ast.Module) -> bool:
    """`return expr` -> `result_value = expr; return result_value` for the function's last return."""
    fn = _main_function(tree)
    if fn is None or "result_value" in _names(tree):
        return False
    for i in range(len(fn.body) - 1, -1, -1):
        stmt = fn.body[i]
        if (
            isinstance(stmt, ast.Return)
            and stmt.value is not None
            and not isinstance(stmt.value, (ast.Name, ast.Constant))
        ):
            temp = ast.Name(id="result_value", ctx=ast.Store())
            fn.body[i : i + 1] = [
                ast.Assign(targets=[temp], value=stmt.value),
                ast.Return(value=ast.Name(id="result_value", ctx=ast.Load())),
            ]
            return True
    return False


def extra_rename_local(tree: ast.Module) -> bool:
    """Rename the function's first assigned local everywhere in the function (consistently)."""
    fn = _main_function(tree)
    if fn is None:
        return False
    calls = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    if calls & {"locals", "vars", "eval", "exec", "globals"}:
        return False
    args = {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
    declared = {name for n in ast.walk(fn) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    taken = _names(tree)
    for stmt in ast.walk(fn):
        if not isinstance(stmt, ast.Assign):
            continue
        for target in stmt.targets:
            if isinstance(target, ast.Name) and target.id not in args | declared and f"{target.id}_value" not in taken:
                old, new = target.id, f"{target.id}_value"
                for n in ast.walk(fn):
                    if isinstance(n, ast.Name) and n.id == old:
                        n.id = new
                return True
    return False


EXTRAS: dict[str, Callable[[ast.Module], bool]] = {
    "unused_import": extra_unused_import,
    "defensive_guard": extra_defensive_guard,
    "rename_local": extra_rename_local,
    "return_temp": extra_return_temp,
}


def with_extras(gold: str, kinds: Sequence[str]) -> str | None:
    """The gold text with the extra hunks of `kinds`; None when one of them does not apply."""
    tree = pyast.parse(gold)
    for kind in kinds:
        if not EXTRAS[kind](tree):
            return None
    return ast.unparse(ast.fix_missing_locations(tree))


def overedit_candidates(gold: str, rng: random.Random, per_task: int) -> list[tuple[list[str], str]]:
    """Up to `per_task` candidates: every applicable extra at once, then random smaller sets."""
    applicable = [k for k in EXTRAS if with_extras(gold, [k]) is not None]
    if not applicable:
        return []
    wanted: list[list[str]] = [applicable]
    tries = 0
    while len(wanted) < per_task and tries < 20:
        tries += 1
        pick = sorted(rng.sample(applicable, rng.randint(1, len(applicable))), key=list(EXTRAS).index)
        if pick not in wanted:
            wanted.append(pick)
    out = []
    for kinds in wanted[:per_task]:
        text = with_extras(gold, kinds)
        if text is not None and text != gold:
            out.append((kinds, text))
    return out


async def overedit_items(
    box: Any,
    data: Path,
    *,
    tasks: int,
    per_task: int,
    env: str | None,
    timeout_s: float,
    max_runs: int,
    parallel: int,
    seed: int,
    concurrency: int,
    task_ids: Sequence[str] = (),
    statements: bool = False,
) -> list[StudyItem]:
    """Constructed candidates for the first `tasks` tasks (or those named in `task_ids`); `env`: the
    sandbox environment the tests run in (None: the base interpreter)."""
    path = require(data / OVEREDIT_FILE, "the over-editing tasks (overedit/...jsonl)")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["task_id"] in set(task_ids)] if task_ids else rows[:tasks]
    sem = asyncio.Semaphore(concurrency)
    jobs = []
    for row in rows:
        item_base = {"source": "overedit", "task_id": row["task_id"]}
        try:
            gold = gold_text(row["canonical_solution"])
        except SyntaxError as exc:
            jobs.append(_ready(StudyItem(**item_base, condition="-", error=f"canonical solution: {exc}")))
            continue
        corrupted, tests = row["corrupted_solution"], row["test_code"]

        async def passes(text: str, tests: str = tests) -> bool | None:
            run = await run_tests(box, text, tests, kind="unittest", env=env, timeout_s=timeout_s)
            return None if run.sandbox_error else run.passed

        rng = random.Random(f"{seed}:{row['task_id']}")
        for i, (kinds, text) in enumerate(overedit_candidates(gold, rng, per_task)):
            item = StudyItem(**item_base, condition="+".join(kinds), sample=i)
            jobs.append(
                _limited(
                    sem,
                    analyse(
                        item, corrupted, text, gold, passes, max_runs=max_runs, parallel=parallel, statements=statements
                    ),
                )
            )
    return list(await asyncio.gather(*jobs))


# -- canitedit: recorded completions that passed ---------------------------------------------------
async def canitedit_items(
    box: Any,
    data: Path,
    *,
    tasks: int,
    samples: int,
    max_runs: int,
    parallel: int,
    concurrency: int,
    statements: bool = False,
    runs_dir: str = "canitedit_runs",
) -> list[StudyItem]:
    problems = canitedit.load(data, tasks)
    runs = sorted((data / runs_dir).glob("*.tar.gz"))
    if not runs:
        raise SystemExit(
            f"no recorded CanItEdit runs (*.tar.gz) in {data / runs_dir}: name a folder of the data with --runs"
        )
    sem = asyncio.Semaphore(concurrency)
    jobs = []
    for run_path in runs:
        rec = load_archive(run_path)
        run_name = re.split(r"-baseline|-canitedit", run_path.name)[0]
        for problem in problems:
            passes = _problem_passes(box, problem)
            for condition in canitedit.CONDITIONS:
                completions = rec.get(problem.task_id, condition)
                chosen: list[tuple[int, str]] = []
                for i, text in enumerate(completions):
                    if rec.verdict(problem.task_id, condition, i) and text not in {t for _, t in chosen}:
                        chosen.append((i, text))
                for i, text in chosen[:samples]:
                    item = StudyItem(
                        source="canitedit", task_id=problem.task_id, condition=f"{run_name}/{condition}", sample=i
                    )
                    one = _canitedit_one(box, item, problem, text, passes, max_runs, parallel, statements)
                    jobs.append(_limited(sem, one))
    return list(await asyncio.gather(*jobs))


async def gold_items(
    box: Any, data: Path, *, tasks: int, max_runs: int, parallel: int, concurrency: int, statements: bool = False
) -> list[StudyItem]:
    """The gold edit of every problem analysed like a completion (source `gold`): how much of the gold
    patch the tests do not need, the reference that the gold-based excess measures against."""
    sem = asyncio.Semaphore(concurrency)
    jobs = []
    for problem in canitedit.load(data, tasks):
        item = StudyItem(source="gold", task_id=problem.task_id, condition="gold")
        job = analyse(
            item,
            problem.before,
            problem.after,
            problem.after,
            _problem_passes(box, problem),
            max_runs=max_runs,
            parallel=parallel,
            statements=statements,
        )
        jobs.append(_limited(sem, job))
    return list(await asyncio.gather(*jobs))


def _problem_passes(box: Any, problem: canitedit.Problem) -> Passes:
    async def passes(text: str) -> bool | None:
        return await canitedit.passes(box, problem, text)

    return passes


async def _canitedit_one(
    box: Any,
    item: StudyItem,
    problem: Any,
    completion: str,
    passes: Passes,
    max_runs: int,
    parallel: int,
    statements: bool = False,
) -> StudyItem:
    verdict = await canitedit.judge(box, problem, completion)  # the pass, and ExcessCode from the coverage run
    item.excess_code = verdict.excess_code
    if not verdict.passed:
        item.status = "unresolved" if verdict.sandbox_error else "full_fails"
        item.error = (
            f"the recorded passing completion does not pass here: {verdict.exec_status} "
            f"{verdict.stderr_tail[-200:]}".strip()
        )
        return item
    return await analyse(
        item,
        problem.before,
        completion,
        problem.after,
        passes,
        max_runs=max_runs,
        parallel=parallel,
        full_passed=True,
        statements=statements,
    )


async def _ready(item: StudyItem) -> StudyItem:
    return item


async def _limited(sem: asyncio.Semaphore, job: Awaitable[StudyItem]) -> StudyItem:
    async with sem:
        return await job


def summarise(items: Sequence[StudyItem]) -> dict[str, Any]:
    """The figures per source, with the constructed over-edits grouped by their extra hunks."""
    return _summarise(items, list(EXTRAS))


# -- the command ------------------------------------------------------------------------------------
def _as_now(item: StudyItem) -> StudyItem:
    """An item of an earlier study under today's definition: the whole edit passes too, so D_min is never
    farther than d(M, C) (`reference_free_excess`; earlier studies could store a negative excess)."""
    if item.d_min is not None and item.distance is not None and item.d_min > item.distance:
        item.d_min, item.excess_ref_free = item.distance, 0.0
    return item


def read_items(path: Path) -> list[StudyItem]:
    """The items.jsonl of an earlier study; a UserError (one line) when it cannot be read."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise UserError(f"--items: cannot read {path}: {exc.strerror or exc}") from None
    items = []
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                items.append(_as_now(msgspec.json.decode(line, type=StudyItem)))
            except msgspec.DecodeError as exc:  # malformed JSON or not a study item
                raise UserError(f"--items: {path} line {n} is not a study item ({exc})") from None
    if not items:  # figures of nothing would read as a study that found nothing
        raise UserError(f"--items: {path} holds no study items: give the items.jsonl a study wrote with --out")
    return items


def default_overedit_env() -> str:
    return "overedit" if "overedit" in envs.SUITES and envs.is_prepared("overedit") else "canitedit"


async def study(args: argparse.Namespace) -> tuple[list[StudyItem], dict[str, Any]]:
    data = data_dir(args.data)
    box = Sandbox(workers=args.workers)
    # how every analysis runs, whatever its source
    how: dict[str, Any] = {
        "max_runs": args.max_runs,
        "parallel": args.parallel,
        "concurrency": max(1, args.workers // args.parallel),
        "statements": args.granularity == "statements",
    }
    items: list[StudyItem] = []
    try:
        if args.overedit_tasks or args.overedit_ids:
            items += await overedit_items(
                box,
                data,
                tasks=args.overedit_tasks,
                per_task=args.per_task,
                env=args.overedit_env or default_overedit_env(),
                timeout_s=args.timeout,
                seed=args.seed,
                task_ids=args.overedit_ids,
                **how,
            )
        if args.canitedit_tasks:
            items += await canitedit_items(
                box, data, tasks=args.canitedit_tasks, samples=args.samples, runs_dir=args.runs, **how
            )
        if args.gold:
            items += await gold_items(box, data, tasks=args.canitedit_tasks, **how)
    finally:
        box.close()
    return items, summarise(items)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data")
    ap.add_argument("--out", type=Path, help="write items.jsonl, summary.json and report.html here")
    ap.add_argument(
        "--overedit-tasks", type=number_arg(int, 0), default=20, help="first N over-editing tasks (0: none)"
    )
    ap.add_argument(
        "--overedit-ids",
        type=lambda v: [x for x in v.split(",") if x],
        default=[],
        help="comma-separated over-editing task ids instead of the first N",
    )
    ap.add_argument(
        "--per-task", type=number_arg(int, 1), default=2, help="constructed candidates per over-editing task"
    )
    ap.add_argument(
        "--overedit-env",
        help="sandbox environment for the over-editing tests (default: overedit when prepared, else canitedit)",
    )
    ap.add_argument(
        "--canitedit-tasks", type=number_arg(int, 0), default=10, help="first N CanItEdit problems (0: none)"
    )
    ap.add_argument(
        "--runs",
        default="canitedit_runs",
        help="the data's folder of recorded CanItEdit runs (default canitedit_runs; canitedit_runs_more: 8 more)",
    )
    ap.add_argument(
        "--samples", type=number_arg(int, 1), default=1, help="distinct passing completions per problem, kind and run"
    )
    ap.add_argument("--max-runs", type=number_arg(int, 1), default=32, help="sandbox runs per analysis")
    ap.add_argument("--parallel", type=number_arg(int, 1), default=2, help="runs at once per analysis")
    ap.add_argument(
        "--granularity",
        choices=("units", "statements"),
        default="units",
        help="what ddmin drops: change units (the published study), or also the needed units' new statements",
    )
    ap.add_argument(
        "--gold",
        action="store_true",
        help="also analyse every problem's gold edit: how much of it the tests do not need (source gold)",
    )
    ap.add_argument("--workers", type=number_arg(int, 1), default=os.cpu_count() or 1, help="sandbox slots")
    ap.add_argument(
        "--timeout", type=number_arg(float, 0, open_low=True), default=60.0, help="seconds per over-editing test run"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--items", type=Path, help="summarise the items.jsonl of an earlier study instead of running one")
    args = ap.parse_args(argv)
    if args.gold and not args.canitedit_tasks and not args.items:
        raise UserError("--gold analyses the CanItEdit problems' gold edits: give --canitedit-tasks 1 or more")
    if not (args.items or args.canitedit_tasks or args.overedit_tasks or args.overedit_ids):
        raise UserError("nothing to study: give --canitedit-tasks N or --overedit-tasks N (or --items FILE)")
    started = time.monotonic()
    if args.items:
        items = read_items(args.items)
        summary = summarise(items)
    else:
        items, summary = asyncio.run(study(args))
    settings = {
        "max_runs": args.max_runs,
        "granularity": args.granularity,
        "parallel": args.parallel,
        "workers": args.workers,
        "overedit_tasks": args.overedit_tasks,
        "canitedit_tasks": args.canitedit_tasks,
        "per_task": args.per_task,
        "samples": args.samples,
        "seed": args.seed,
    }
    text = render_text(summary, settings)
    print(text)
    errors = Counter((i.source, (i.error or "").split(":")[0][:60]) for i in items if i.error)
    for (source, why), n in errors.most_common(8):
        print(f"  {source}: {n} x {why}")
    print(
        f"{len(items)} candidates, {sum(i.runs for i in items)} sandbox runs in the analyses, "
        f"{time.monotonic() - started:.0f} s"
    )
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "items.jsonl").write_bytes(b"".join(msgspec.json.encode(i) + b"\n" for i in items))
        (args.out / "summary.json").write_text(json.dumps({"settings": settings, "sources": summary}, indent=2))
        (args.out / "report.html").write_text(render_html(summary, items, text))
        print(f"wrote {args.out}/items.jsonl, summary.json, report.html")
    return 0


if __name__ == "__main__":
    sys.exit(run_script(main))
