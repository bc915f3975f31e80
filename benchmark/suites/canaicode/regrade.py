"""Re-grade published can-ai-code eval files with our checker and the sandbox, row by row, and print the
figures: `python -m benchmark.suites.canaicode.regrade [EVAL.ndjson ...] [--data DIR] [--workers N]`.

Without files: every file in `canaicode/results_sample`. Per file: rows whose points, status and every
check's value equal the stored ones, the points per language against the stored ones, the overall score
against `results_summary_all_eval_files.csv`, and the time. Exit status 1 when anything differs.
(The same replay through the language server: `edit-fidelity bench run --suite canaicode
--backend recorded:EVAL.ndjson --out DIR`.)
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from benchmark.suites.canaicode.checks import LIST_PADDING
from benchmark.suites.canaicode.evaluate import evaluate
from benchmark.suites.canaicode.interview import InterviewQuestion, load_interview
from benchmark.suites.canaicode.recorded import interview_of
from benchmark.suites.canaicode.suite import known_names, questions_root

if TYPE_CHECKING:
    from sandbox import Sandbox  # loaded when a regrade runs


def published_scores(root: Path) -> dict[str, float]:
    """Overall score per eval file name, as the published summary lists it."""
    path = root / "results_summary_all_eval_files.csv"
    if not path.exists():
        return {}
    with path.open(newline="") as fh:
        return {Path(r["file"]).name: float(r["score"]) for r in csv.DictReader(fh)}


async def regrade_file(path: Path, root: Path, box: Sandbox, padding: str) -> dict:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    interview = interview_of(path, {r["name"] for r in rows}, known_names(root))
    questions: dict[str, InterviewQuestion] = {q.name: q for q in load_interview(root, interview)}
    t0 = time.perf_counter()
    evs = await asyncio.gather(
        *(
            evaluate(questions[r["name"]], r["language"], r["code"], box, padding=padding)  # type: ignore[arg-type]
            for r in rows
        )
    )
    wall = time.perf_counter() - t0
    out: dict = {
        "file": path.name,
        "interview": interview,
        "rows": len(rows),
        "same_points": 0,
        "same_status": 0,
        "same_values": 0,
        "points": {},
        "stored": {},
        "total": {},
        "differences": [],
        "calls": 0,
        "wall_s": wall,
    }
    for r, ev in zip(rows, evs, strict=True):
        lang = r["language"]
        out["points"][lang] = out["points"].get(lang, 0) + ev.points
        out["stored"][lang] = out["stored"].get(lang, 0) + r["passed"]
        out["total"][lang] = out["total"].get(lang, 0) + ev.total
        out["calls"] += ev.calls
        values_same = [c.got for c in ev.checks] == [c["got"] for c in r["checks"]]
        out["same_points"] += ev.points == r["passed"]
        out["same_status"] += ev.status == r["status"]
        out["same_values"] += values_same
        if ev.points != r["passed"] or ev.status != r["status"] or not values_same:
            out["differences"].append(
                {
                    "name": r["name"],
                    "language": lang,
                    "points": ev.points,
                    "stored": r["passed"],
                    "status": ev.status,
                    "stored_status": r["status"],
                }
            )
    return out


async def main_async(args: argparse.Namespace) -> int:
    from sandbox import Sandbox

    root = questions_root(args.data)
    files = [Path(f) for f in args.files] or sorted((root / "results_sample").glob("*.ndjson"))
    scores = published_scores(root)
    box = Sandbox(workers=args.workers)
    bad = 0
    try:
        t0 = time.perf_counter()
        results = [await regrade_file(f, root, box, args.padding) for f in files]
        wall = time.perf_counter() - t0
    finally:
        box.close()
    print(f"sandbox {box.level}, {box.workers} workers, list padding {args.padding!r}")
    head = f"{'file':<88} {'rows':>4} {'=pts':>4} {'=st':>4} {'=val':>4} {'python':>9} {'javascript':>11} {'score':>7} {'pub':>7} {'calls':>5} {'s':>5}"
    print(head)
    print("-" * len(head))
    for r in results:
        py = f"{r['points'].get('python', 0)}/{r['stored'].get('python', 0)}"
        js = f"{r['points'].get('javascript', 0)}/{r['stored'].get('javascript', 0)}"
        total = sum(r["total"].values())
        score = sum(r["points"].values()) / total if total else 0.0
        pub = scores.get(r["file"])
        same_score = pub is None or round(score, 4) == pub
        bad += bool(r["differences"]) or not same_score
        print(
            f"{r['file'][:88]:<88} {r['rows']:>4} {r['same_points']:>4} {r['same_status']:>4} {r['same_values']:>4} "
            f"{py:>9} {js:>11} {score:>7.4f} {'-' if pub is None else f'{pub:.4f}':>7} {r['calls']:>5} {r['wall_s']:>5.1f}"
        )
        for d in r["differences"]:
            print(f"    differs: {d}")
    rows = sum(r["rows"] for r in results)
    print(
        f"{len(results)} files, {rows} rows, {sum(r['same_points'] for r in results)} with the stored points, "
        f"{sum(r['calls'] for r in results)} sandboxed calls in {wall:.1f} s "
        f"(python/javascript columns: ours/stored points)"
    )
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmark.suites.canaicode.regrade", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("files", nargs="*", help="eval .ndjson files (default: canaicode/results_sample/*)")
    parser.add_argument("--data", help="benchmark data directory (default: EDIT_FIDELITY_DATA)")
    parser.add_argument("--workers", type=int, default=2, help="sandbox slots (default 2)")
    parser.add_argument("--padding", default="better", choices=LIST_PADDING, help="list off-by-one leniency")
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    from benchmark.datadir import run_script

    sys.exit(run_script(main))
