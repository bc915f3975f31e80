"""`edit-fidelity bench make-suite`: a new minimal-fix suite from any suite that has solutions and tests.

Sources (`--from`): `overedit` (the 400 BigCodeBench reference solutions and their unittest classes),
`canitedit` (CanItEdit's `after` solutions and test scripts), or a directory of a user's own
`(solution, tests)` pairs: `DIR/NAME/solution.py` + `DIR/NAME/tests.py` (optional `prompt.txt`), or
`DIR/NAME.py` + `DIR/test_NAME.py`. Tests are a unittest `TestCases` class or a script that exits 0.

Per source task: its solution must pass its own tests, also in the normalised form (`ast.unparse`) that
a gold patch gives back; then, per variant, up to `--attempts` seeded
corruptions of the first function (1..`--max-corruptions` of the chosen families) are tried until one
makes the tests fail; its inverse must give the solution back. Every task that yields nothing is
reported with the reason (does not parse, its tests fail or hang, no family applies, the tests still
pass) and the run goes on. The output is the overedit task format (`bench run --suite overedit --data
FILE`), one JSON line per kept task in source order: the same seed gives the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import sys
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from benchmark.build.corruptions import (
    Chooser,
    CorruptionError,
    Family,
    InverseError,
    corrupt,
    gold_patch,
    invert,
    select,
)
from benchmark.build.suite_writer import Progress, SuiteWriter, progress_path, sources_digest
from benchmark.datadir import DataError
from benchmark.run.testrun import TestKind, TestRun, detect_kind, run_tests
from benchmark.suites import canitedit, overedit
from benchmark.suites.overedit import Task
from sandbox import Sandbox, envs
from server.fidelity.text import pyast

DEFAULT_TIMEOUT_S = 60.0  # seconds per test run (`--timeout`)


class Source(msgspec.Struct, frozen=True, kw_only=True):
    """A correct solution with its tests: what a minimal-fix task is made from."""

    task_id: str
    solution: str
    tests: str
    kind: TestKind
    env: str | None  # the sandbox environment its tests need
    prompt: str = ""


@dataclass
class Outcome:
    """What became of one source task: its kept tasks and, per problem, a note."""

    source: Source
    kept: list[Task] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class MadeSuite:
    tasks: list[Task]
    outcomes: list[Outcome]
    load_errors: list[str]

    def problems(self) -> list[str]:
        """One line per source task that did not give every variant, and per unreadable input item."""
        lines = list(self.load_errors)
        for o in self.outcomes:
            lines += [f"{o.source.task_id}: {n}" for n in o.notes]
        return lines


# ------------------------------------------------------------------ sources


def sources(
    spec: str, data: str | Path | None = None, *, env: str | None = None, limit: int | None = None
) -> tuple[list[Source], list[str]]:
    """The source tasks of `--from SPEC` and the problems met while reading them."""
    if spec == "overedit":
        tasks, errors = overedit.load(data)
        found = [
            Source(
                task_id=t.task_id,
                solution=t.canonical_solution,
                tests=t.test_code,
                kind=t.kind,
                env=env or t.env or overedit.ENV,
                prompt=t.prompt,
            )
            for t in tasks
        ]
    elif spec == "canitedit":
        found = [
            Source(task_id=p.full_name, solution=p.after, tests=p.tests, kind="script", env=env or "canitedit")
            for p in canitedit.load(data)
        ]
        errors = []
    elif Path(spec).is_dir():
        found, errors = directory_sources(Path(spec), env=env or "base")
    else:
        raise DataError(
            f"--from {spec!r}: not a suite with solutions and tests (overedit, canitedit) "
            "nor a directory of (solution, tests) pairs"
        )
    return (found[:limit] if limit else found), errors


def directory_sources(root: Path, *, env: str | None) -> tuple[list[Source], list[str]]:
    found: list[Source] = []
    errors: list[str] = []

    def add(task_id: str, solution: Path, tests: Path, prompt: Path | None) -> None:
        try:
            sol, tst = solution.read_text(encoding="utf-8"), tests.read_text(encoding="utf-8")
            text = prompt.read_text(encoding="utf-8").strip() if prompt and prompt.exists() else ""
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(f"{task_id}: cannot read: {exc}")
            return
        found.append(Source(task_id=task_id, solution=sol, tests=tst, kind=detect_kind(tst), env=env, prompt=text))

    for entry in sorted(root.iterdir()):
        if entry.is_dir():
            sol, tst = entry / "solution.py", entry / "tests.py"
            if sol.exists() and tst.exists():
                add(entry.name, sol, tst, entry / "prompt.txt")
            elif any(entry.glob("*.py")):
                errors.append(f"{entry.name}: a task directory needs solution.py and tests.py")
        elif entry.suffix == ".py" and not entry.name.startswith("test_"):
            tst = entry.with_name(f"test_{entry.name}")
            if tst.exists():
                add(entry.stem, entry, tst, None)
            else:
                errors.append(f"{entry.stem}: no tests ({tst.name}) beside {entry.name}")
    if not found and not errors:
        errors.append(f"{root}: no (solution, tests) pairs found")
    return found, errors


# ------------------------------------------------------------------ making


def _verdict_text(run: TestRun) -> str:
    if run.sandbox_error:
        return f"sandbox error: {run.sandbox_error}"
    if run.status == "timeout":
        return "timed out"
    if run.missing:
        return f"needs {run.missing}, which the environment lacks"
    first = run.detail.strip().splitlines()[-1:] or [run.status]
    return f"{run.status}, {run.failures} failures, {run.errors} errors of {run.tests_run}: {first[0][:200]}"


async def make_one(
    box: Any,
    src: Source,
    families: Sequence[Family],
    *,
    max_corruptions: int,
    seed: int,
    variants: int,
    attempts: int,
    timeout_s: float,
    memory_mb: int | None,
    functions: Literal["first", "all"] = "first",
) -> Outcome:
    out = Outcome(src)
    try:
        pyast.parse(src.solution)
    except (SyntaxError, ValueError) as exc:
        out.notes.append(f"skipped: the solution does not parse: {exc}")
        return out
    gold = await run_tests(
        box, src.solution, src.tests, kind=src.kind, env=src.env, timeout_s=timeout_s, memory_mb=memory_mb
    )
    if not gold.passed:
        why = f"time limit of {timeout_s:g} s" if gold.status == "timeout" else _verdict_text(gold)
        out.notes.append(f"skipped: the solution does not pass its own tests ({why})")
        return out
    normal = ast.unparse(pyast.parse(src.solution))
    if normal != src.solution:  # the gold patch gives back this form (comments and layout are lost)
        again = await run_tests(
            box, normal, src.tests, kind=src.kind, env=src.env, timeout_s=timeout_s, memory_mb=memory_mb
        )
        if not again.passed:
            out.notes.append(
                "skipped: the tests fail the solution once it is normalised (ast.unparse), so they "
                f"depend on its layout, not only on its code ({_verdict_text(again)})"
            )
            return out
    for v in range(variants):
        tried: list[str] = []
        inapplicable = False
        for attempt in range(attempts):
            try:
                made = corrupt(
                    src.solution,
                    families,
                    max_corruptions=max_corruptions,
                    functions=functions,
                    chooser=Chooser(seed, f"{src.task_id}#{v}.{attempt}"),
                )
            except CorruptionError as exc:
                tried.append(str(exc))
                inapplicable = True
                break  # which families apply does not depend on the draw
            try:
                fixed = invert(made.source, made.corruptions)
            except InverseError as exc:
                tried.append(f"attempt {attempt}: the inverse failed: {exc}")
                continue
            if fixed != normal:
                tried.append(f"attempt {attempt}: the inverse does not give the solution back")
                continue
            if any(k.corrupted_solution == made.source for k in out.kept):
                tried.append(f"attempt {attempt}: the same program as an earlier variant")
                continue
            run = await run_tests(
                box, made.source, src.tests, kind=src.kind, env=src.env, timeout_s=timeout_s, memory_mb=memory_mb
            )
            if run.sandbox_error:
                tried.append(f"attempt {attempt}: sandbox error: {run.sandbox_error}")
                continue
            if run.passed:
                tried.append(
                    f"attempt {attempt}: the tests still pass with "
                    + ", ".join(f"{c.family} (line {c.line})" for c in made.corruptions)
                )
                continue
            task_id = src.task_id if variants == 1 else f"{src.task_id}#v{v}"
            out.kept.append(
                Task(
                    task_id=task_id,
                    corrupted_solution=made.source,
                    canonical_solution=src.solution,
                    test_code=src.tests,
                    prompt=src.prompt,
                    mutation_types=[c.family for c in made.corruptions],
                    test_kind=src.kind,
                    env=src.env,
                    source=src.task_id,
                    seed=seed,
                    corruptions=made.corruptions,
                    gold_patch=gold_patch(made.source, fixed),
                )
            )
            break
        else:
            out.notes.append(f"variant {v}: no corruption kept after {attempts} attempts: " + "; ".join(tried))
            continue
        if inapplicable:  # no other variant will differ
            out.notes.append(f"skipped: {tried[-1]}")
            break
    return out


async def make_suite(
    box: Any,
    srcs: Sequence[Source],
    families: Sequence[Family],
    *,
    max_corruptions: int = 2,
    seed: int = 0,
    variants: int = 1,
    attempts: int = 3,
    max_tasks: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int | None = None,
    functions: Literal["first", "all"] = "first",
    concurrency: int = 4,
    load_errors: Sequence[str] = (),
    done: Sequence[Outcome] = (),
    on_outcome: Callable[[Outcome], None] | None = None,
) -> MadeSuite:
    """Tasks in source order, the first `max_tasks` when given. `done`: the outcomes of the first
    sources, made by an earlier run (resumed): not made again. `on_outcome` sees each further outcome
    in source order as soon as it and those before it are made (its `kept` cut to `max_tasks`), so a
    caller can write the suite as it grows. Each source's corruptions depend only on the seed and its
    id, so skipping the sources done gives what an uninterrupted run gives."""
    outcomes: list[Outcome] = list(done)
    kept = sum(len(o.kept) for o in outcomes)
    todo = iter(srcs[len(outcomes) :])
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(src: Source) -> Outcome:
        async with gate:
            return await make_one(
                box,
                src,
                families,
                max_corruptions=max_corruptions,
                seed=seed,
                variants=variants,
                attempts=attempts,
                timeout_s=timeout_s,
                memory_mb=memory_mb,
                functions=functions,
            )

    # a window of sources in flight beyond the running ones, so a slow source holds up the writing only
    window: deque[asyncio.Task[Outcome]] = deque()

    def refill() -> None:
        while len(window) < 4 * max(1, concurrency):
            src = next(todo, None)
            if src is None:
                return
            window.append(asyncio.ensure_future(one(src)))

    try:
        while max_tasks is None or kept < max_tasks:
            refill()
            if not window:
                break
            outcome = await window.popleft()
            if max_tasks is not None:
                outcome.kept = outcome.kept[: max_tasks - kept]
            kept += len(outcome.kept)
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
    finally:
        for pending in window:
            pending.cancel()
        await asyncio.gather(*window, return_exceptions=True)
    tasks = [t for o in outcomes for t in o.kept]
    return MadeSuite(tasks, outcomes, list(load_errors))


def encode(tasks: Sequence[Task]) -> bytes:
    return b"".join(msgspec.json.encode(t) + b"\n" for t in tasks)


# ------------------------------------------------------------------ command line


def _identity(args: argparse.Namespace, families: Sequence[Family], srcs: Sequence[Source]) -> dict[str, Any]:
    """Everything that changes which tasks a run keeps (not --workers: concurrency changes no verdict)."""
    # a directory is named by its content (the digest), so `--from ./src` resumes `--from src`
    return {
        "from": "directory" if Path(args.source).is_dir() else args.source,
        "families": [f.name for f in families],
        "max_corruptions": args.max_corruptions,
        "functions": args.functions,
        "seed": args.seed,
        "variants": args.variants,
        "attempts": args.attempts,
        "max_tasks": args.max_tasks,
        "timeout_s": DEFAULT_TIMEOUT_S if args.timeout is None else args.timeout,
        "memory_mb": args.memory,
        "sources": len(srcs),
        "sources_sha256": sources_digest(
            [(s.task_id, s.solution, s.tests, s.kind, s.env or "", s.prompt) for s in srcs]
        ),
    }


def command(args: argparse.Namespace) -> int:
    """`bench make-suite` with its parsed arguments (`make_suite_cli.py`): its exit status."""
    if args.timeout is None:
        args.timeout = DEFAULT_TIMEOUT_S

    def fail(msg: str) -> int:
        print(f"edit-fidelity bench make-suite: {msg}", file=sys.stderr)
        return 2

    try:
        families = select(args.families)
    except ValueError as exc:
        return fail(str(exc))
    if args.max_corruptions < 1 or args.variants < 1 or args.attempts < 1:
        return fail("--max-corruptions, --variants and --attempts must be >= 1")
    if args.max_tasks is not None and args.max_tasks < 1 or args.limit is not None and args.limit < 1:
        return fail("--max-tasks and --limit must be >= 1")
    if not args.timeout > 0 or args.memory < 1 or args.workers is not None and args.workers < 1:
        return fail("--timeout must be > 0 seconds, --memory and --workers >= 1")
    if args.env is not None and args.env not in envs.SUITES:
        return fail(f"--env {args.env!r}: no such sandbox environment; known: {', '.join(envs.SUITES)}")
    out: Path = args.out
    state = progress_path(out)
    if out.is_dir():
        return fail(f"--out {out}: is a directory; name the suite file (e.g. {out / 'suite.jsonl'})")
    if state.exists() and not args.resume:
        return fail(
            f"{out} is an unfinished run ({state.name} beside it): pass --resume to continue it, "
            "or remove both to start again"
        )
    if args.resume and out.exists() and not state.exists():
        print(f"make-suite: {out} is complete (no {state.name}): nothing to resume", file=sys.stderr)
        return 0
    try:
        srcs, errors = sources(args.source, args.data, env=args.env, limit=args.limit)
    except DataError as exc:
        return fail(str(exc))
    if not srcs:
        return fail(
            f"--from {args.source}: no source task to make tasks from"
            + (f" ({errors[0]}{f'; and {len(errors) - 1} more' if len(errors) > 1 else ''})" if errors else "")
        )
    identity = _identity(args, families, srcs)
    try:
        writer = SuiteWriter.resume(out, identity) if state.exists() else SuiteWriter.start(out, identity)
    except DataError as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"--out {out}: {exc.strerror or exc}")
    try:
        done = _outcomes(srcs, writer)
    except DataError as exc:
        writer.close()
        return fail(f"{exc}; remove {out} and {state.name} to start again")
    if done:
        print(
            f"make-suite: resuming {out}: {len(done)} of {len(srcs)} source tasks already done "
            f"({len(writer.tasks)} tasks kept)",
            file=sys.stderr,
        )
    show = Progress(len(srcs), already=len(done), kept=len(writer.tasks))

    def record(o: Outcome) -> None:
        writer.add(o.source.task_id, o.kept, o.notes)
        show.update(len(o.kept))

    box = Sandbox(workers=args.workers)
    try:
        made = asyncio.run(
            make_suite(
                box,
                srcs,
                families,
                max_corruptions=args.max_corruptions,
                seed=args.seed,
                variants=args.variants,
                attempts=args.attempts,
                max_tasks=args.max_tasks,
                timeout_s=args.timeout,
                memory_mb=args.memory,
                functions=args.functions,
                concurrency=box.workers * 2,
                load_errors=errors,
                done=done,
                on_outcome=record,
            )
        )
    except KeyboardInterrupt:
        show.close()
        writer.close()
        print(
            f"make-suite: interrupted; {show.done} of {len(srcs)} source tasks are kept in {out}: "
            "continue with the same arguments and --resume",
            file=sys.stderr,
        )
        return 130
    finally:
        box.close()
    show.close()
    writer.finish()
    for line in made.problems():
        print(f"make-suite: {line}", file=sys.stderr)
    n_corr = sum(len(t.corruptions) for t in made.tasks)
    used = sum(1 for o in made.outcomes if o.kept)
    print(
        f"make-suite: {len(made.tasks)} tasks ({n_corr} corruptions) from {used} of the {len(made.outcomes)} source "
        f"tasks tried ({len(srcs)} given) -> {out}",
        file=sys.stderr,
    )
    return 0 if made.tasks else 1


def _outcomes(srcs: Sequence[Source], writer: Any) -> list[Outcome]:
    """The outcomes an earlier run recorded: they cover the first sources, in order."""
    by_id = {t.task_id: t for t in writer.tasks}
    done: list[Outcome] = []
    for src, rec in zip(srcs, writer.done, strict=False):
        if rec.source != src.task_id:
            raise DataError(f"{writer.state}: lists {rec.source} where the sources have {src.task_id}")
        done.append(Outcome(src, kept=[by_id[i] for i in rec.kept], notes=list(rec.notes)))
    return done
