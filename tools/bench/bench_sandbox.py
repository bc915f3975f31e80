"""Sandbox throughput: executions per second per isolation level, next to bare subprocess.run.

    python -m tools.bench.bench_sandbox [--runs 200] [--levels bwrap,unshare,none] [--no-canitedit]

Two workloads, each measured bare (`subprocess.run([python, file])`, output captured) and through
`sandbox.Sandbox` at every level that works here, in the same process and run:
- trivial: `print(1)`, sequentially with bare and every level interleaved run by run (latency:
  median ms per execution, and the overhead over bare), then from one thread per core (throughput:
  executions per second, best of 3 alternating rounds, so load from other processes shows less);
- canitedit: the 105 gold programs (`after + tests`, 15 s limit) from one thread per core.
Targets (issue 4): bwrap overhead <= 10 ms per execution; >= 40 trivial executions/s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sandbox import LEVELS, Sandbox, config, detect, envs

TRIVIAL = "print(1)\n"
CORES = os.cpu_count() or 1


def _data_dir() -> Path:
    explicit = os.environ.get("EDIT_FIDELITY_DATA")
    return Path(explicit) if explicit else Path(__file__).resolve().parents[3] / "shared" / "data"


def _timed(fn: Callable[[int], bool], n: int, threads: int) -> tuple[float, int]:
    """Wall seconds for n calls of fn spread over `threads` threads, and how many returned True."""
    started = time.perf_counter()
    if threads == 1:
        ok = sum(fn(i) for i in range(n))
    else:
        with ThreadPoolExecutor(threads) as pool:
            ok = sum(pool.map(fn, range(n)))
    return time.perf_counter() - started, ok


def _bare(python: str, path: Path, timeout: float) -> Callable[[int], bool]:
    def call(_: int) -> bool:
        try:
            return (
                subprocess.run([python, str(path)], capture_output=True, timeout=timeout, check=False).returncode == 0
            )
        except subprocess.TimeoutExpired:
            return False

    return call


def bench_trivial(levels: list[str], runs: int, rounds: int = 3) -> list[dict]:
    """Latency: bare and every level interleaved run by run, so a busy machine slows them alike;
    medians. Throughput: one thread per core, variants alternated over `rounds`; best round."""
    python = config.base_python()
    boxes: dict[str, Sandbox] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for level in levels:
            boxes[level] = Sandbox(level, workers=CORES)  # type: ignore[arg-type]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "trivial.py"
            path.write_text(TRIVIAL)
            calls: dict[str, Callable[[int], bool]] = {"bare": _bare(python, path, 10)}
            for level, box in boxes.items():

                def run_one(_i: int, box: Sandbox = box) -> bool:
                    return box.run({"trivial.py": TRIVIAL}, timeout_s=10).status == "ok"

                calls[level] = run_one
            for call in calls.values():  # warm page cache, lib dir, slot tmpfs mounts
                _timed(call, 5, 1)
            latency: dict[str, list[float]] = {name: [] for name in calls}
            ok = dict.fromkeys(calls, 0)
            for i in range(runs):
                for name, call in calls.items():
                    started = time.perf_counter()
                    ok[name] += call(i)
                    latency[name].append(time.perf_counter() - started)
            best = dict.fromkeys(calls, 0.0)
            for _ in range(rounds):
                for name, call in calls.items():
                    wall, good = _timed(call, runs, CORES)
                    ok[name] += good
                    best[name] = max(best[name], runs / wall)
    finally:
        for box in boxes.values():
            box.close()
    base_ms = statistics.median(latency["bare"]) * 1000
    rows = []
    for name in calls:
        ms = statistics.median(latency[name]) * 1000
        rows.append(
            {
                "workload": "trivial",
                "level": name,
                "ms_per_exec": ms,
                "overhead_ms": ms - base_ms,
                "mean_ms": statistics.fmean(latency[name]) * 1000,
                "exec_per_s": best[name],
                "ok": ok[name],
                "n": runs * (1 + rounds),
            }
        )
    return rows


def bench_canitedit(levels: list[str]) -> list[dict]:
    problems_file = _data_dir() / "canitedit" / "canitedit_test.jsonl"
    problems = [json.loads(line) for line in problems_file.read_text().splitlines()]
    programs = [p["after"] + "\n" + p["tests"] for p in problems]
    envs.prepare("canitedit", log=lambda msg: print(msg, file=sys.stderr))
    python = envs.python_for("canitedit")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, program in enumerate(programs):
            paths.append(Path(tmp) / f"p{i}.py")
            paths[-1].write_text(program)

        def bare_one(i: int) -> bool:
            return _bare(python, paths[i], 15.0)(i)

        wall, ok = _timed(bare_one, len(paths), CORES)
        rows.append(
            {
                "workload": "canitedit",
                "level": "bare",
                "wall_s": wall,
                "exec_per_s": len(paths) / wall,
                "ok": ok,
                "n": len(paths),
            }
        )
    for level in levels:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            box = Sandbox(level, workers=CORES)  # type: ignore[arg-type]
        try:

            def call(i: int, box: Sandbox = box) -> bool:
                return (
                    box.run({"prog.py": programs[i]}, suite="canitedit", timeout_s=15.0, memory_mb=4096).status == "ok"
                )

            wall, ok = _timed(call, len(programs), CORES)
        finally:
            box.close()
        rows.append(
            {
                "workload": "canitedit",
                "level": level,
                "wall_s": wall,
                "exec_per_s": len(programs) / wall,
                "ok": ok,
                "n": len(programs),
                "overhead_s": wall - rows[0]["wall_s"],
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200, help="trivial executions per measurement")
    parser.add_argument("--levels", help="comma-separated levels (default: every local level that works)")
    parser.add_argument("--no-canitedit", action="store_true", help="skip the CanItEdit gold workload")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    args = parser.parse_args(argv)
    if args.levels:
        levels = args.levels.split(",")
    else:
        found = detect(LEVELS)
        levels = [lvl for lvl in LEVELS if found[lvl] is None]
        for lvl in LEVELS:
            if found[lvl] is not None:
                print(f"# level {lvl} skipped: {found[lvl]}")
    load = os.getloadavg()[0]
    print(
        f"# {CORES} cores, load average {load:.1f}, base interpreter {config.base_python()}, levels {', '.join(levels)}"
    )
    rows = bench_trivial(levels, args.runs)
    print(f"\ntrivial program ({args.runs} interleaved sequential runs, then 3 x {args.runs} on {CORES} threads)")
    print(f"{'level':8} {'median ms':>9} {'mean ms':>8} {'overhead':>9} {'exec/s':>8} {'ok':>10}")
    for r in rows:
        print(
            f"{r['level']:8} {r['ms_per_exec']:9.2f} {r['mean_ms']:8.2f} {r['overhead_ms']:+8.2f}ms"
            f" {r['exec_per_s']:8.1f} {r['ok']:>5}/{r['n']}"
        )
    if not args.no_canitedit:
        crow = bench_canitedit(levels)
        rows += crow
        print(f"\nCanItEdit gold programs (105 x after+tests, {CORES} threads)")
        print(f"{'level':8} {'wall s':>8} {'exec/s':>8} {'ok':>8}")
        for r in crow:
            print(f"{r['level']:8} {r['wall_s']:8.1f} {r['exec_per_s']:8.2f} {r['ok']:>4}/{r['n']}")
    bwrap = next((r for r in rows if r["workload"] == "trivial" and r["level"] == "bwrap"), None)
    if bwrap:
        print(
            f"\ntargets: bwrap overhead {bwrap['overhead_ms']:.1f} ms (<= 10: "
            f"{'met' if bwrap['overhead_ms'] <= 10 else 'MISSED'}); bwrap trivial {bwrap['exec_per_s']:.0f}/s "
            f"(>= 40: {'met' if bwrap['exec_per_s'] >= 40 else 'MISSED'})"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
