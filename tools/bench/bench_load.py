"""The main job on a busy machine: the same replays idle and beside a CPU hog must give the same verdicts.

    EDIT_FIDELITY_DATA=../shared/data .venv/bin/python -m tools.bench.bench_load [--hogs 6] [--limit N]
        [--out DIR] [--recorded RUN.tar.gz] [--skip-gold]

For the recorded run `make run` replays (its first `--limit` problems) and the CanItEdit gold run (every
problem: each passes, with its coverage) it runs `edit-fidelity bench run` twice into fresh run directories: once on the machine as it is,
once with `--hogs` busy processes started by this script beside it (stopped when the run ends, whatever
happens). It prints, per run, pass@1 and ExcessCode per instruction kind, the errors, the wall time and
the load average the loaded run saw, and whether the two `summary.json` are byte-identical; it exits 1
when they are not, or when either run ended in an error.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmark.datadir import data_dir

MAKE_RUN = "qwen2.5-coder-7b-instruct-baseline-canitedit-20260410T235720Z-slot1-548423436.tar.gz"


def _burn() -> None:  # pragma: no cover - a hog process
    while True:
        pass


class Hogs:
    """`count` processes that each keep one core busy, for the length of a `with` block."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.procs: list[multiprocessing.process.BaseProcess] = []

    def __enter__(self) -> Hogs:
        ctx = multiprocessing.get_context("spawn")
        self.procs = [ctx.Process(target=_burn, daemon=True) for _ in range(self.count)]
        for p in self.procs:
            p.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.join(5)


def bench_run(out: Path, backend: str, limit: int | None, data: Path) -> tuple[int, float, str]:
    """`edit-fidelity bench run` into a fresh `out`: exit code, wall seconds, its last stderr line."""
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, "-m", "server.cli", "bench", "run", "--suite", "canitedit", "--backend", backend]
    argv += ["--out", str(out), "--data", str(data), "--quiet"]
    argv += ["--limit", str(limit)] if limit else []
    t0 = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return done.returncode, time.monotonic() - t0, lines[-1] if lines else ""


def figures(summary: dict) -> str:
    parts = []
    for cond, body in sorted((summary.get("conditions") or {}).items()):
        p, e = body.get("pass@1"), body.get("excess_code")
        parts.append(f"{cond} {p if p is None else f'{p:.1f}'} / {e if e is None else f'{e:.2f}'}")
    errors = sum((summary.get("errors") or {}).values())
    return f"{'; '.join(parts)}; errors {errors}; flaky {sum(len(v) for v in (summary.get('flaky') or {}).values())}"


def compare(name: str, backend: str, limit: int | None, args: argparse.Namespace, data: Path) -> bool:
    results = {}
    for mode in ("idle", "loaded"):
        out = args.out / f"{name}-{mode}"
        with Hogs(args.hogs if mode == "loaded" else 0):
            before = os.getloadavg()[0]
            code, wall, last = bench_run(out, backend, limit, data)
            load = f", load average {before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
        summary_path = out / "summary.json"
        raw = summary_path.read_bytes() if summary_path.exists() else b""
        results[mode] = (code, raw)
        shown = figures(json.loads(raw)) if raw else f"no summary ({last})"
        print(f"{name} {mode:6s}: exit {code}, {wall:7.1f} s wall{load}: {shown}", flush=True)
    same = results["idle"][1] == results["loaded"][1] and bool(results["idle"][1])
    ok = same and results["idle"][0] == 0 and results["loaded"][0] == 0
    print(f"{name}: summary.json {'byte-identical' if same else 'DIFFERS'} idle vs {args.hogs} hogs", flush=True)
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hogs", type=int, default=6, help="busy processes beside the loaded run (default 6)")
    ap.add_argument("--limit", type=int, help="the recorded run's first N problems only (default: all)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/edit-fidelity-bench-load"))
    ap.add_argument("--recorded", type=Path, help=f"the recorded run (default: {MAKE_RUN}, what `make run` replays)")
    ap.add_argument("--skip-gold", action="store_true", help="leave out the gold run")
    ap.add_argument("--data")
    args = ap.parse_args(argv)
    if args.hogs < 1 or args.limit is not None and args.limit < 1:
        ap.error("--hogs and --limit must be >= 1")
    data = data_dir(args.data)
    recorded = args.recorded or data / "canitedit_runs" / MAKE_RUN
    if not recorded.exists():
        print(f"bench_load: no recorded run at {recorded}: pass --recorded or --data", file=sys.stderr)
        return 2
    print(f"{os.cpu_count()} CPUs; {args.hogs} hog processes beside each loaded run", flush=True)
    ok = compare("recorded", f"recorded:{recorded}", args.limit, args, data)
    if not args.skip_gold:  # every problem: the gold run is short
        ok = compare("gold", "gold", None, args, data) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
