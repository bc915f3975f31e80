"""`python -m benchmark.suites.codeeditorbench`: download, and the acceptance check of the judge on the data."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from benchmark.datadir import DataError
from benchmark.suites.codeeditorbench.check import check_tasks
from benchmark.suites.codeeditorbench.download import download
from benchmark.suites.codeeditorbench.scores import OPT_REPEATS
from benchmark.suites.codeeditorbench.tasks import SETS, LoadIssue, load

DESCRIPTION = "Suite `codeeditorbench` (SPEC 3.7): debug, translate, polish and switch tasks judged as programs."


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark.suites.codeeditorbench", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    dl = sub.add_parser("download", help="fetch the full data set from the Hugging Face hub")
    dl.add_argument("--data", help="data directory (default: EDIT_FIDELITY_DATA, else the per-user cache)")
    dl.add_argument("--set", choices=[*SETS, "all"], default="primary")
    dl.add_argument("--endpoint", help="hub endpoint (default: HF_ENDPOINT, else https://huggingface.co)")
    dl.add_argument("--revision", default="main")
    dl.add_argument("--force", action="store_true", help="download files that are already there again")
    ck = sub.add_parser("check", help="judge every task's reference (and debug's incorrect solution)")
    ck.add_argument("--data")
    ck.add_argument("--limit", type=int, help="the first N tasks of each kind")
    ck.add_argument("--workers", type=int, default=2)
    ck.add_argument("--repeats", type=int, default=OPT_REPEATS)
    ck.add_argument("--json", action="store_true", help="one JSON line per task")
    args = parser.parse_args(argv)
    if args.command == "download":
        sets = SETS if args.set == "all" else (args.set,)
        _, errors = download(
            args.data,
            sets=sets,
            endpoint=args.endpoint,
            revision=args.revision,
            force=args.force,
            on_file=lambda name, state: print(f"{name}: {state}", file=sys.stderr),
        )
        if errors:
            print(f"error: {len(errors)} file(s) not downloaded (see above); run again to retry", file=sys.stderr)
        return 1 if errors else 0
    issues: list[LoadIssue] = []
    try:
        tasks = load(args.data, args.limit, issues)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for issue in issues:
        print(f"unreadable record {issue.file}:{issue.line}: {issue.error}", file=sys.stderr)
    t0 = time.perf_counter()

    def emit(row: dict[str, Any]) -> None:
        if args.json:
            print(json.dumps(row), flush=True)
            return
        extra = ""
        if "incorrect" in row:
            ok = "ok" if row["incorrect"] in row["expected_rejection"] else "UNEXPECTED"
            extra = f"  incorrect -> {row['incorrect']} ({ok}: expected {'/'.join(row['expected_rejection'])})"
        if row.get("T_cpu_s") is not None:
            extra += (
                f"  OptScore {row['opt_score']:.3f} (margin mode {row['opt_score_margin']:.3f}; "
                f"T {row['T_cpu_s']:.4f}s t {row['t_cpu_s']:.4f}s M {row['M_mb']:.1f} m {row['m_mb']:.1f} MiB)"
            )
        elif row.get("opt_error"):
            extra += f"  OptScore not measured: {row['opt_error']}"
        print(
            f"{row['task']:<16} {row['language']:<6} {row['shape']:<8} tests {row['tests']:>2} "
            f"({', '.join(f'{k} {v}' for k, v in row['expected_from'].items())}) reference {row['gold']}{extra} "
            f"[{row['seconds']} s]",
            flush=True,
        )
        for issue in row["issues"]:
            print(f"    note: {issue}", flush=True)
        if row["gold"] != "accepted":
            print(f"    reference: {row['gold_detail']}", flush=True)

    rows = asyncio.run(check_tasks(tasks, workers=args.workers, repeats=args.repeats, emit=emit))
    accepted = sum(r["gold"] == "accepted" for r in rows)
    debug = [r for r in rows if "incorrect" in r]
    rejected_right = sum(r["incorrect"] in r["expected_rejection"] for r in debug)
    print(
        f"\nreferences accepted {accepted}/{len(rows)}; incorrect debug solutions rejected with the predicted "
        f"verdict class {rejected_right}/{len(debug)}; {time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return 0
