"""The necessity study on a labelled corpus: reference-free excess (ddmin over change units, the tests
run in the sandbox) against the gold-based excess, per candidate.

    python -m benchmark.studies.necessity.overedits CORPUS.jsonl [--max-runs 32] [--limit N] [--workers 2]

Prints the Spearman correlation of the two excesses (no_comments variant) and how often the units the
tests need are exactly the gold fix's.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from benchmark.build.overedits.corpus import Candidate, load_corpus
from benchmark.run.reference_free import VARIANT, reference_free_metrics
from benchmark.run.testrun import run_tests
from benchmark.studies.necessity.figures import spearman
from sandbox import Sandbox
from server.fidelity import distances


async def study(cands: list[Candidate], max_runs: int, workers: int, timeout_s: float) -> list[tuple[float, float]]:
    box = Sandbox(workers=workers)
    gate = asyncio.Semaphore(workers)
    try:

        async def one(c: Candidate) -> tuple[float, float] | None:
            async def passes(text: str) -> bool | None:
                async with gate:
                    run = await run_tests(box, text, c.tests, kind=c.test_kind, env=c.env, timeout_s=timeout_s)  # type: ignore[arg-type]
                return None if run.sandbox_error else run.passed

            m = await reference_free_metrics(
                c.original, c.candidate, passes, max_runs=max_runs, parallel=2, full_passed=c.tests_passed
            )
            if m["excess_ref_free"] is None:
                return None
            gold = distances(c.original, c.gold)[VARIANT].normalized
            full = distances(c.original, c.candidate)[VARIANT].normalized
            return m["excess_ref_free"], full - gold

        done = await asyncio.gather(*(one(c) for c in cands))
    finally:
        box.close()
    return [d for d in done if d is not None]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmark.studies.necessity.overedits",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--max-runs", type=int, default=32)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    if (cands := load_corpus(args.corpus)) is None:
        return 2
    cands = cands[: args.limit] if args.limit else cands
    pairs = asyncio.run(study(cands, args.max_runs, args.workers, args.timeout))
    ref, gold = [p[0] for p in pairs], [p[1] for p in pairs]
    rho = spearman(ref, gold)
    exact = sum(1 for r, g in pairs if abs(r - g) < 1e-9)
    print(
        f"{len(pairs)} of {len(cands)} candidates analysed; Spearman(reference-free, gold-based excess) = "
        f"{'-' if rho is None else f'{rho:.3f}'}; equal excess: {exact}/{len(pairs)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
