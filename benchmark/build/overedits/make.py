"""`python -m benchmark.build.overedits make`: write the labelled over-edit corpus (see the package docstring)."""

from __future__ import annotations

import argparse
import ast
import asyncio
import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import msgspec

from benchmark.arg_types import number_arg
from benchmark.build.corruptions.choice import Chooser
from benchmark.build.overedits import lang_make, lang_sources
from benchmark.build.overedits.corpus import Candidate, Change, new_spans
from benchmark.build.overedits.transforms import KINDS, TRANSFORMS, Replacement, stack_changes
from benchmark.run.testrun import TestKind, run_tests
from benchmark.suites import canitedit, overedit
from sandbox import Sandbox
from server.fidelity import apply_text_edits, measure
from server.fidelity.text import pyast


class Pair(msgspec.Struct, frozen=True):
    task_id: str
    original: str
    gold: str
    tests: str
    test_kind: str
    env: str | None
    instruction: str | None = None


def load_pairs(spec: str, data: str | None, limit: int | None) -> list[Pair]:
    if spec == "canitedit":
        return [
            Pair(p.full_name, p.before, p.after, p.tests, "script", "canitedit", p.instruction_descriptive)
            for p in canitedit.load(data, limit)
        ]
    tasks, errors = overedit.load(spec if spec.endswith(".jsonl") else data, limit)
    if errors and not tasks:
        raise SystemExit(f"error: {errors[0]}")
    return [
        Pair(
            t.task_id,
            t.corrupted_solution,
            t.canonical_solution,
            t.test_code,
            t.kind,
            t.env or overedit.ENV,
            t.instruction("generic"),
        )
        for t in tasks
    ]


def _entry(tree: ast.Module, original: str, gold: str) -> tuple[str | None, tuple[int, int]]:
    """The function the fix is in (its name and original lines), else the first function."""
    report = measure(original, gold)
    lines = [h.start_line for h in report.hunks]
    funcs = [n for n in pyast.parse(original).body if isinstance(n, ast.FunctionDef)]
    for f in funcs:
        start = min([f.lineno, *(d.lineno for d in f.decorator_list)])
        if lines and all(start <= ln <= (f.end_lineno or f.lineno) for ln in lines):
            # a fix that inserts lines above the function (a new helper) reaches the line above it
            above = start > 1 and any(
                e.range.start == e.range.end
                and (e.range.start.line, e.range.start.character) == (start - 1, 0)
                and e.new_text.endswith("\n")
                for e in report.edits
            )
            return f.name, (start - above, (f.end_lineno or f.lineno) + 1)
    touched = [
        f
        for f in funcs
        if any(
            min([f.lineno, *(d.lineno for d in f.decorator_list)]) <= ln <= (f.end_lineno or f.lineno) for ln in lines
        )
    ]
    if touched or funcs:  # the fix spans several statements: the whole file is the target
        return (touched or funcs)[0].name, (1, original.count("\n") + 2)
    return None, (1, original.count("\n") + 2)


def minimal_gold(original: str, gold: str) -> tuple[str, list[tuple[int, int]]]:
    """The gold fix without the layout the data adds (its corrupted programs went through `ast.unparse`,
    so quotes, comments and blank lines differ from the solution's): the original with only the gold's
    change units that change the syntax tree, and their intervals in that text."""
    report = measure(original, gold)
    base = ast.dump(pyast.parse(original))
    needed = [h for h in report.hunks if ast.dump(pyast.parse(apply_text_edits(original, h.edits))) != base]
    edits = [e for h in needed for e in h.edits]
    text = apply_text_edits(original, edits)
    return text, new_spans(original, edits, edits)


_CONFLICTS = frozenset(("comment_removed", "lazy_placeholder"))


def candidates_for(pair: Pair, source: str, seed: int, per_task: int) -> list[Candidate]:
    try:
        tree = pyast.parse(pair.gold)
        pyast.parse(pair.original)
    except SyntaxError:
        return []
    try:
        gold, fix = minimal_gold(pair.original, pair.gold)
    except SyntaxError:  # a gold unit that does not stand alone
        return []
    entry, target = _entry(tree, pair.original, gold)
    if entry is None:
        return []
    if any(h.unrequested for h in measure(pair.original, gold, target=range(*target)).hunks):
        return []  # the gold edit itself is more than a plain logic change (an instructed rename, a new parameter)
    out: list[Candidate] = []
    whole_file = target[0] == 1 and target[1] >= pair.original.count("\n") + 2
    families = [f for f in sorted(TRANSFORMS) if not (whole_file and f == "outside_target")]

    def propose(family: str, text: str, ch: Chooser) -> list[Replacement] | None:
        try:
            return TRANSFORMS[family](text, pyast.parse(text), entry, ch)
        except (SyntaxError, ValueError, IndexError):
            return None

    for n in range(per_task):
        ch = Chooser(seed, f"{source}/{pair.task_id}/{n}")
        text, fix_spans, changes = stack_changes(
            gold, fix, families, ch, propose, _parses, [_CONFLICTS], touching_fix=False
        )
        if not changes:
            continue
        out.append(
            Candidate(
                id=f"{pair.task_id}#{n}",
                task_id=pair.task_id,
                source=source,
                original=pair.original,
                gold=gold,
                candidate=text,
                tests=pair.tests,
                test_kind=pair.test_kind,
                env=pair.env,
                target=target,
                entry=entry,
                fix_spans=fix_spans,
                instruction=pair.instruction,
                changes=[Change(f, list(KINDS[f]), list(s)) for f, s in changes],
            )
        )
    return out


# ------------------------------------------------------------------ tests (optional, cached)


def _key(c: Candidate) -> str:
    return hashlib.sha256(json.dumps([c.candidate, c.tests, c.test_kind, c.env]).encode()).hexdigest()


async def _run_all(cands: list[Candidate], cache_path: Path, workers: int, timeout_s: float) -> list[Candidate]:
    cache: dict[str, bool] = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    box = Sandbox(workers=workers)
    gate = asyncio.Semaphore(workers * 2)
    try:

        async def one(c: Candidate) -> Candidate:
            key = _key(c)
            if key not in cache:
                async with gate:
                    kind = cast(TestKind, c.test_kind)  # what the Python corpus records: unittest | script
                    run = await run_tests(box, c.candidate, c.tests, kind=kind, env=c.env, timeout_s=timeout_s)
                if run.sandbox_error:
                    raise SystemExit(f"error: the sandbox could not run the tests: {run.sandbox_error}")
                cache[key] = run.passed
            return msgspec.structs.replace(c, tests_passed=cache[key])

        done = await asyncio.gather(*(one(c) for c in cands))
    finally:
        box.close()
        cache_path.write_text(json.dumps(cache))
    return list(done)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark.build.overedits make", description=__doc__)
    parser.add_argument(
        "--from",
        dest="source",
        default="overedit",
        help="overedit | canitedit | FILE.jsonl (a made suite) | "
        "codeeditorbench-cpp | codeeditorbench-java | canaicode-js | canaicode-ts (lang_make.py)",
    )
    parser.add_argument("--data", help="benchmark data directory (default: EDIT_FIDELITY_DATA)")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--limit", type=number_arg(int, 1))
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--per-task", type=number_arg(int, 1), default=2)
    parser.add_argument(
        "--tests",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="run every candidate's tests in the sandbox and keep the passing ones",
    )
    parser.add_argument("--workers", type=number_arg(int, 1), default=2)
    parser.add_argument("--timeout", type=number_arg(float, 0, open_low=True), default=60.0)
    args = parser.parse_args(argv)
    if not args.out.parent.is_dir():
        print(
            f"error: --out {args.out}: no folder {args.out.parent}; create it or choose another path", file=sys.stderr
        )
        return 2
    if any(s in lang_sources.SOURCES for s in args.source.split(",")):  # JS, TS, Java, C++ (tree-sitter)
        return lang_make.main(args)
    if args.source not in ("overedit", "canitedit") and not args.source.endswith(".jsonl"):
        print(
            f"error: unknown source {args.source!r}: use overedit, canitedit, a made suite FILE.jsonl or one of "
            f"{', '.join(lang_sources.SOURCES)}",
            file=sys.stderr,
        )
        return 2
    try:
        pairs = load_pairs(args.source, args.data, args.limit)
    except Exception as exc:  # noqa: BLE001 - a data problem is one line, not a traceback
        print(f"error: cannot load {args.source!r}: {exc}", file=sys.stderr)
        return 2
    source = Path(args.source).stem if args.source.endswith(".jsonl") else args.source
    cands = [c for p in pairs for c in candidates_for(p, source, args.seed, args.per_task)]
    used = len({c.task_id for c in cands})
    print(
        f"{used} of {len(pairs)} tasks give candidates (the others: a gold edit the core flags on its own, "
        "code that does not parse, no function)",
        file=sys.stderr,
    )
    if args.tests:
        cands = asyncio.run(_run_all(cands, args.out.with_suffix(".testcache.json"), args.workers, args.timeout))
        kept = [c for c in cands if c.tests_passed]
        print(f"{len(kept)} of {len(cands)} candidates pass their tests", file=sys.stderr)
        cands = kept
    args.out.write_bytes(b"".join(msgspec.json.encode(c) + b"\n" for c in cands))
    print(f"wrote {len(cands)} candidates from {len(pairs)} tasks to {args.out}", file=sys.stderr)
    return 0


def _parses(text: str) -> bool:
    try:
        pyast.parse(text)
    except SyntaxError:
        return False
    return True
