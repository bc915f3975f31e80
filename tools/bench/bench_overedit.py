"""Acceptance figures of the over-editing suite and the corruption generator, on the full data.

    python -m tools.bench.bench_overedit [--out DIR] [--limit N] [--workers N] [--skip-replay] [--skip-generated]

1. `gold` and `identity` replays of the 400 tasks through the real CLI, language server and sandbox
   (`bench run --suite overedit`): Pass@1 (all tasks and those whose environment is installed; the
   others listed with what they lack), excess ELev and added cognitive complexity (expected 0 for
   gold), the mean d(G, C) the run reports next to SPEC 3.1's 0.0128, and identity's Pass@1 (expected 0).
2. A 200-task suite generated from CanItEdit's `after` solutions (all 34 families, up to 2 corruptions
   in any function, up to 3 variants per problem): every kept task is run again to check that it fails its tests and that its
   gold patch (the inverse applied to the corrupted program) passes them.
Needs the sandbox environments `overedit` and `canitedit` (`scripts/setup-sandbox --suite overedit`).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmark.api import run
from benchmark.run.store import RESULTS, read_records
from server.errors import UserError

SPEC_GOLD = {
    "no_comments_mean": 0.0128,
    "no_comments_median": 0.0111,
    "no_comments_max": 0.0490,
    "body_no_comments_mean": 0.0172,
    "raw_mean": 0.0342,
    "no_comments_tokens_mean": 1.63,
}


def replay(backend: str, out: Path, limit: int | None, workers: int | None) -> tuple[dict, list, float]:
    started = time.perf_counter()
    try:
        done = run("overedit", backend, out, limit=limit, workers=workers)  # the library entry point
    except UserError as exc:
        raise SystemExit(f"bench run --backend {backend}: {exc}") from None
    took = time.perf_counter() - started
    if not done.complete:
        raise SystemExit(f"bench run --backend {backend}: {done.summary['scores']}")
    return done.summary, read_records(out / RESULTS), took


def replay_figures(out: Path, limit: int | None, workers: int | None) -> None:
    gold, gold_recs, t_gold = replay("gold", out / "gold", limit, workers)
    print(f"== gold replay: {len(gold_recs)} samples in {t_gold:.0f} s")
    for cond, m in gold["conditions"].items():
        d = gold["details"][cond]
        print(
            f"[{cond}] Pass@1 {m['pass@1']:.4f} over {m['n_tasks']} tasks; over the {m['n_tasks'] - m['n_env_missing']} "
            f"tasks whose environment is installed: {m['pass@1_installed']:.4f}"
        )
        print(
            f"[{cond}] excess ELev no_comments {m['excess_lev']}, body_no_comments {m['excess_lev_body']}; "
            f"added CC {m['added_cc']} (|.| {m['added_cc_abs']})"
        )
        if d["env_missing"]:
            print(
                f"[{cond}] environment lacks ({len(d['env_missing'])} tasks): "
                + ", ".join(f"{t} ({mod})" for t, mod in d["env_missing"].items())
            )
        for row in d["not_passing"]:
            print(
                f"[{cond}] NOT PASSING {row['task_id']}: {row['outcome']} {row['exec_status']} {row['error'][-200:]!r}"
            )
    passing = [r for r in gold_recs if r.passed]
    for key in ("excess_lev", "excess_lev_body", "added_cc"):
        vals = [r.metrics[key] for r in passing if r.metrics.get(key) is not None]
        print(
            f"gold, every passing sample: {key} in [{min(vals, default=None)}, {max(vals, default=None)}] "
            f"({len(vals)} values)"
        )
    g = gold["details"][next(iter(gold["details"]))]["gold_distance"]
    print(f"d(G, C) reported by the run over {g['n_tasks']} tasks (SPEC 3.1 in brackets):")
    for key, want in SPEC_GOLD.items():
        got = g.get(key)
        print(f"  {key:<26} {'-' if got is None else f'{got:.4f}'}  [{want}]")
    print(f"  no_comments tokens: {g['no_comments_tokens_min']} to {g['no_comments_tokens_max']}  [1 to 5]")

    ident, id_recs, t_id = replay("identity", out / "identity", limit, workers)
    print(f"== identity replay: {len(id_recs)} samples in {t_id:.0f} s")
    for cond, m in ident["conditions"].items():
        print(
            f"[{cond}] Pass@1 {m['pass@1']:.4f} (installed {m['pass@1_installed']:.4f}), outcomes "
            f"{ident['details'][cond]['outcomes']}"
        )
    walls = sorted(r.sandbox_ms for r in gold_recs if r.sandbox_ms)
    if walls:
        print(
            f"gold test run wall time per task: median {statistics.median(walls) / 1000:.2f} s, "
            f"max {walls[-1] / 1000:.1f} s"
        )


async def generated_figures(out: Path, workers: int | None, max_tasks: int = 200) -> None:
    from benchmark.build.corruptions import FAMILIES, invert
    from benchmark.build.make_suite import encode, make_suite, sources
    from benchmark.run.testrun import run_tests
    from sandbox import Sandbox

    srcs, errors = sources("canitedit")
    box = Sandbox(workers=workers)
    try:
        started = time.perf_counter()
        made = await make_suite(
            box,
            srcs,
            FAMILIES,
            max_corruptions=2,
            seed=0,
            variants=3,
            attempts=3,
            functions="all",
            max_tasks=max_tasks,
            timeout_s=30.0,
            concurrency=box.workers * 2,
            load_errors=errors,
        )
        took = time.perf_counter() - started
        path = out / "canitedit_minimal_fix.jsonl"
        path.write_bytes(encode(made.tasks))
        print(
            f"== generated from CanItEdit `after`: {len(made.tasks)} tasks "
            f"({sum(len(t.corruptions) for t in made.tasks)} corruptions) from {len(made.outcomes)} problems "
            f"in {took:.0f} s -> {path}"
        )
        fams = Counter(c.family for t in made.tasks for c in t.corruptions)
        print(
            f"corruptions per task: {dict(sorted(Counter(len(t.corruptions) for t in made.tasks).items()))}; "
            f"families used: {len(fams)} of 34: {dict(fams.most_common())}"
        )
        for line in made.problems():
            print(f"  {line[:240]}")
        sem = asyncio.Semaphore(box.workers * 2)

        async def check(task) -> tuple[bool, bool]:
            async with sem:
                bad = await run_tests(
                    box, task.corrupted_solution, task.test_code, kind=task.kind, env=task.env, timeout_s=30.0
                )
                good = await run_tests(
                    box,
                    invert(task.corrupted_solution, task.corruptions),
                    task.test_code,
                    kind=task.kind,
                    env=task.env,
                    timeout_s=30.0,
                )
                return bad.passed, good.passed

        started = time.perf_counter()
        checks = await asyncio.gather(*(check(t) for t in made.tasks))
        print(
            f"re-check in {time.perf_counter() - started:.0f} s: kept tasks failing their tests "
            f"{sum(not b for b, _ in checks)}/{len(checks)}; gold patches passing {sum(g for _, g in checks)}/{len(checks)}"
        )
    finally:
        box.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench.bench_overedit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="where the runs go (default: a new temporary directory)")
    parser.add_argument("--limit", type=int, help="only the first N of the 400 tasks")
    parser.add_argument("--workers", type=int, help="sandbox slots (default: CPU count)")
    parser.add_argument("--skip-replay", action="store_true")
    parser.add_argument("--skip-generated", action="store_true")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-overedit-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"runs in {out}")
    if not args.skip_replay:
        replay_figures(out, args.limit, args.workers)
    if not args.skip_generated:
        asyncio.run(generated_figures(out, args.workers))
    return 0


if __name__ == "__main__":
    from benchmark.datadir import run_script

    sys.exit(run_script(main))
