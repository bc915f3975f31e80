"""`python -m benchmark.suites.bics check | published | generate`: the BICS figures on the full data.

- `check`: builds the paper's grid (6 lengths x 5 depths x 25 trials) for both bug sources and checks
  every haystack (label against the text and against the interpreter's SyntaxError line, exact token
  count, length within one snippet of the target); also how many clean snippets each inserter takes.
  Prints the figures and the time taken.
- `published [--stats DIR] [--format text|json|html] [RUN_DIR...]`: the published runs (and ours).
- `generate --out FILE.jsonl [--source S] [--grid SPEC]`: the haystacks themselves, one JSON per line.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import msgspec

from benchmark.datadir import data_dir
from benchmark.suites.bics import BUG_TYPES, haystack, snippets, verify
from benchmark.suites.bics.inserters import insert_bug
from benchmark.suites.bics.suite import GridSpecError, parse_grid, published_report


def _grid(spec: str | None) -> haystack.Grid:
    return parse_grid(spec) if spec else haystack.Grid()


def check(args: argparse.Namespace) -> int:
    table = snippets.load(args.data)
    print(f"snippet table: {table.rows} rows, {len(table.snippets)} clean snippets, {len(table.problems)} rejected")
    for p in table.problems[:10]:
        print(f"  {p}")
    t0 = time.perf_counter()
    rng = random.Random(0)
    taken = {b: sum(insert_bug(s.code, b, rng) is not None for s in table.snippets) for b in BUG_TYPES}
    print(f"\ninserters: clean snippets that take a verified bug ({time.perf_counter() - t0:.1f} s)")
    for b in BUG_TYPES:
        print(f"  {b:<24} {taken[b]:>5} / {len(table.snippets)}")
    grid = _grid(args.grid)
    failed = False
    for source in haystack.SOURCES:
        t0 = time.perf_counter()
        built = [
            haystack.build(table, length=L, depth=D, trial=t, seed=grid.seed, source=source, bug_types=grid.bug_types)
            for t in range(grid.trials)
            for L in grid.lengths
            for D in grid.depths
        ]
        t_build = time.perf_counter() - t0
        t0 = time.perf_counter()
        checks = [verify.check(table, h) for h in built]
        t_check = time.perf_counter() - t0
        n: Counter[str] = Counter()
        raised: Counter[str] = Counter()
        agree: Counter[str] = Counter()
        gaps: dict[int, list[int]] = defaultdict(list)
        for h, c in zip(built, checks, strict=True):
            n[h.bug_type] += 1
            gaps[h.target_length].append(h.tokens - h.target_length)
            if c.interpreter_line is not None:
                raised[h.bug_type] += 1
                agree[h.bug_type] += c.interpreter_line == h.label_line
        text_ok = sum(c.label_by_text == h.label_line for h, c in zip(built, checks, strict=True))
        tokens_ok = sum(c.tokens_exact for c in checks)
        within = sum(c.within_one_snippet for c in checks)
        print(
            f"\nsource {source}: {len(built)} haystacks built in {t_build:.1f} s "
            f"({len(built) / t_build:.0f}/s), checked in {t_check:.1f} s"
        )
        print(f"  label = the one line that differs from the clean haystack: {text_ok}/{len(built)}")
        print(f"  token count exact (incremental = whole text): {tokens_ok}/{len(built)}")
        print(f"  length within one snippet of the target: {within}/{len(built)}")
        print(f"  {'bug type':<24} {'haystacks':>9} {'SyntaxError':>11} {'at label':>9} {'rate':>7}")
        for b in BUG_TYPES:
            rate = agree[b] / raised[b] if raised[b] else None
            print(
                f"  {b:<24} {n[b]:>9} {raised[b]:>11} {agree[b]:>9} {'-' if rate is None else f'{100 * rate:.1f}%':>7}"
            )
            failed |= rate is not None and rate < 0.96
        print(f"  {'target':>8} {'mean tokens - target':>21} {'min':>6} {'max':>6}")
        for L in sorted(gaps):
            g = gaps[L]
            print(f"  {L:>8} {sum(g) / len(g):>21.1f} {min(g):>6} {max(g):>6}")
        failed |= text_ok != len(built) or tokens_ok != len(built) or within != len(built)
    return 1 if failed else 0


def published(args: argparse.Namespace) -> int:
    stats = args.stats or data_dir(args.data) / "bics" / "stats"
    print(published_report(stats, args.format, args.runs))
    return 0


def generate(args: argparse.Namespace) -> int:
    table = snippets.load(args.data)
    grid = _grid(args.grid)
    with open(args.out, "wb") as f:
        for t in range(grid.trials):
            for L in grid.lengths:
                for D in grid.depths:
                    h = haystack.build(
                        table, length=L, depth=D, trial=t, seed=grid.seed, source=args.source, bug_types=grid.bug_types
                    )
                    f.write(msgspec.json.encode(h) + b"\n")
    print(f"wrote {grid.trials * len(grid.lengths) * len(grid.depths)} haystacks to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark.suites.bics", description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="benchmark data directory (default: EDIT_FIDELITY_DATA)")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="generator figures on the full data")
    c.add_argument("--grid", help="e.g. 'lengths=500,1000;depths=0,0.5;trials=5;seed=1' (default: the paper's)")
    c.set_defaults(handler=check)
    p = sub.add_parser("published", help="the published runs' report (and our runs beside them)")
    p.add_argument("--stats", type=Path, help="default: DATA/bics/stats")
    p.add_argument("--format", default="text", choices=("text", "json", "html"))
    p.add_argument("runs", nargs="*", type=Path, metavar="RUN_DIR")
    p.set_defaults(handler=published)
    g = sub.add_parser("generate", help="write haystacks as JSON lines")
    g.add_argument("--out", required=True, type=Path)
    g.add_argument("--source", default="dataset", choices=haystack.SOURCES)
    g.add_argument("--grid")
    g.set_defaults(handler=generate)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (GridSpecError, haystack.HaystackError, ValueError) as exc:
        print(f"python -m benchmark.suites.bics: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    from benchmark.datadir import run_script

    sys.exit(run_script(main))
