"""Size and load time of a run's HTML report in headless Chromium (issue 20: the 4,200-sample `make run`
report must open and become interactive in under 2 s and stay under 15 MB).

    .venv/bin/python -m tools.bench.bench_report RUN_DIR [--synthetic 4200] [--repeat 3]

`--synthetic N` builds N records by repeating the run's own records with new sample numbers (each copy's
completion one comment line longer, so no diff is shared; change units where the records have none), for
when a run of that size is not at hand; the report says so.
Times: build (Python), and from Chromium's navigation start to the browser script's end (the page is
interactive then: table rendered, filters live), read from the `data-interactive-ms` the page writes,
plus opening one sample (`?sample=`, its details JSON parsed on first use)."""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from benchmark.report.browser import sample_id
from benchmark.report.summary import report
from benchmark.run.records import SampleRecord, UnitView
from benchmark.run.store import RESULTS, read_config, read_records
from tools import headless


def synthetic(records: list[SampleRecord], n: int) -> list[SampleRecord]:
    """n records cycling through the run's own, each a new sample number of its task and condition."""
    out: list[SampleRecord] = []
    per_key: dict[tuple[str, str], int] = {}
    i = 0
    while len(out) < n:
        r = records[i % len(records)]
        i += 1
        key = (r.task_id, r.condition)
        sample = per_key.get(key, 0)
        per_key[key] = sample + 1
        units = r.units
        if units is None and r.hunks:  # older records: units of the right count, so the detail view has work
            units = [
                UnitView(
                    lines=(1, 1, 1, 1),
                    kinds=["logic" if j >= r.flagged_hunks else "rename"],
                    flagged=j < r.flagged_hunks,
                    message="synthetic unit",
                )
                for j in range(r.hunks)
            ]
        # each copy's completion differs (a trailing comment), so no diff is shared: a conservative size
        copy = (i - 1) // len(records)
        completion = r.completion if r.completion is None or not copy else f"{r.completion}\n# synthetic copy {copy}\n"
        out.append(msgspec.structs.replace(r, sample=sample, units=units, completion=completion))
    return out


def measure(page: Path, sample: str, repeat: int) -> dict[str, float]:
    loads, opens, walls = [], [], []
    for _ in range(repeat):
        t = time.perf_counter()
        # a sort over every row and one sample opened: the work a reader does first
        dom = headless.dump_dom(page, timeout=120, virtual=False, sample=sample, sort="excess")
        walls.append(time.perf_counter() - t)
        ready = re.search(r'data-interactive-ms="([\d.]+)"', dom)
        opened = re.search(r'data-open-ms="([\d.]+)"', dom)
        if ready is None or opened is None:
            raise SystemExit("the page did not become interactive (no data-interactive-ms / data-open-ms)")
        loads.append(float(ready.group(1)))
        opens.append(float(opened.group(1)))
    return {
        "interactive_ms": statistics.median(loads),
        "interactive_ms_max": max(loads),
        "open_sample_ms": statistics.median(opens),
        "chromium_wall_s": statistics.median(walls),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench_report", description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--synthetic", type=int, metavar="N", help="N records made from the run's (see above)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, metavar="FILE", help="keep the page here")
    args = ap.parse_args(argv)
    if headless.chromium() is None:
        print("bench_report: chromium is not installed (scripts/setup installs the Debian package)", file=sys.stderr)
        return 2
    if not (args.run_dir / RESULTS).exists():
        print(f"bench_report: {args.run_dir} has no {RESULTS}: give a run directory", file=sys.stderr)
        return 2
    from benchmark.report.html import render

    records = read_records(args.run_dir / RESULTS)
    origin = f"{len(records)} records of {args.run_dir}"
    if args.synthetic:
        records = synthetic(records, args.synthetic)
        origin = f"{len(records)} synthetic records repeated from {origin}"
    with tempfile.TemporaryDirectory() as tmp:
        # the summary over the records measured (so the page's tables match its samples)
        run = Path(tmp) / "run"
        run.mkdir()
        (run / "config.json").write_bytes((args.run_dir / "config.json").read_bytes())
        (run / RESULTS).write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in records))
        t = time.perf_counter()
        summary = report(run)
        html = render(summary, records, run, read_config(run))
        build_s = time.perf_counter() - t
        page = args.keep or Path(tmp) / "report.html"
        page.write_text(html)
        size = page.stat().st_size
        timings = measure(page, sample_id(records[len(records) // 2]), args.repeat)
    print(f"report of {origin}")
    print(f"  file size        {size / 1e6:.2f} MB ({size} bytes)")
    print(f"  build (Python)   {build_s:.2f} s")
    print(
        f"  interactive      {timings['interactive_ms']:.0f} ms median, {timings['interactive_ms_max']:.0f} ms max "
        f"(navigation start to the browser script's end, table sorted by token excess; {args.repeat} loads)"
    )
    print(f"  open one sample  {timings['open_sample_ms']:.0f} ms (details parsed on first use)")
    print(f"  chromium process {timings['chromium_wall_s']:.2f} s wall per load (start-up included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
