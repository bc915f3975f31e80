"""Full replay of the recorded CanItEdit runs through the server and the sandbox (acceptance check).

    EDIT_FIDELITY_DATA=../shared/data .venv/bin/python -m tools.bench.bench_replay [--out DIR] [--limit N] [RUN.tar.gz ...]

For each recorded run (default: every archive in DATA/canitedit_runs) it calls `benchmark.api.run` (what
`edit-fidelity bench run --suite canitedit --backend recorded:RUN` calls) into a run directory (kept, so a
second invocation with the same --out resumes), then prints pass@1 and ExcessCode per instruction
kind next to SPEC 3.3's reference figures (pass@1 within 0.3, ExcessCode within 0.05), the agreement
with the stored verdicts (>= 99%) with every disagreement, and the time split.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from benchmark.api import run
from benchmark.datadir import data_dir
from benchmark.run.store import RESULTS, read_records
from benchmark.suites.canitedit.archive import load_archive

REFERENCE = {  # SPEC 3.3: (pass@1, ExcessCode)
    "codellama-7b": {"descriptive": (27.1, 0.72), "lazy": (18.0, 0.90)},
    "qwen2.5-coder-7b-instruct": {"descriptive": (49.9, 0.66), "lazy": (43.7, 0.46)},
}


def reference_for(name: str) -> dict | None:
    for key, ref in REFERENCE.items():
        if name.startswith(key):
            return ref
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", type=Path)
    ap.add_argument("--out", type=Path, default=Path("/tmp/edit-fidelity-bench-replay"))
    ap.add_argument("--limit", type=int)
    ap.add_argument(
        "--workers",
        type=int,
        default=2 * (os.cpu_count() or 1),
        help="sandbox slots (default: twice the CPUs: a 15 s timeout holds a slot, not a core)",
    )
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--data")
    args = ap.parse_args(argv)
    runs = args.runs or sorted((data_dir(args.data) / "canitedit_runs").glob("*.tar.gz"))
    if not runs:
        print("no recorded runs found", file=sys.stderr)
        return 2
    ok = True
    for run_path in runs:
        name = run_path.name.split("-baseline")[0] if "-baseline" in run_path.name else run_path.stem
        out = args.out / name
        t0 = time.perf_counter()
        done = run(  # the library entry point, as `bench run` calls it
            "canitedit",
            f"recorded:{run_path}",
            out,
            resume=out.exists(),
            limit=args.limit,
            workers=args.workers,
            concurrency=args.concurrency,
            data=args.data,
        )
        wall = time.perf_counter() - t0
        summary = done.summary
        records = read_records(out / RESULTS)
        ref = reference_for(run_path.name)
        print(
            f"\n{run_path.name}\n  {len(records)} completions in {wall:.0f} s wall "
            f"({'full' if not args.limit else f'first {args.limit} tasks'})"
        )
        server = sum(r.server_ms for r in records) / 1000
        sandbox = sum(r.sandbox_ms for r in records) / 1000
        scoring = sum(r.scoring_ms for r in records) / 1000
        print(
            f"  time split (summed per completion): server round trips {server:.1f} s, sandbox programs "
            f"{sandbox:.1f} s, scoring {scoring:.1f} s"
        )
        stored = load_archive(run_path)
        changed = [
            r
            for r in records
            if r.completion is not None
            and r.completion.rstrip("\n") != stored.get(r.task_id, r.condition)[r.sample].rstrip("\n")
        ]
        no_code = [r for r in records if r.completion is None]
        print(
            f"  completions through the server: {len(records) - len(changed) - len(no_code)} unchanged, "
            f"{len(changed)} changed by the server's extraction, {len(no_code)} without code "
            f"({', '.join(sorted({r.error_kind or '?' for r in no_code})) or '-'}); "
            f"{sum(r.reused_verdict for r in records)} verdicts reused for identical programs"
        )
        for cond, m in summary["conditions"].items():
            d = summary["details"][cond]
            line = (
                f"  {cond:<12} pass@1 {m['pass@1']:5.1f}  ExcessCode {m['excess_code']:.2f}  "
                f"agreement {100 * d.get('recorded_agreement', 0):.2f}% ({len(d.get('recorded_disagreements', []))} "
                f"disagreements)  ELev {d['excess_lev_mean'] or 0:+.4f}  addCC {d['added_cc_mean'] or 0:+.2f}"
            )
            if ref and not args.limit:
                rp, re_ = ref[cond]
                good = (
                    abs(m["pass@1"] - rp) <= 0.3
                    and abs(m["excess_code"] - re_) <= 0.05
                    and d.get("recorded_agreement", 0) >= 0.99
                )
                ok &= good
                line += f"   reference {rp} / {re_}  {'OK' if good else 'MISSED'}"
            print(line)
            for dis in d.get("recorded_disagreements", []):
                print(
                    f"      {dis['task']} #{dis['sample']}: recorded {'pass' if dis['recorded_pass'] else 'fail'}, "
                    f"ours {dis['outcome']} ({dis['exec_status']}): {dis['error'][-120:]!r}"
                )
    return 0 if ok else 1


if __name__ == "__main__":
    from benchmark.datadir import run_script

    sys.exit(run_script(main))
