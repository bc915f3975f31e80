"""Unrequested changes per model: recorded CanItEdit runs judged by the real server (issue 28 item 5).

    python -m benchmark.studies.overedits.models [ARCHIVES...] [--data DIR] [--against RUN] [--concurrency N]
                                         [--servers N] [--format text|markdown|json] [--server-log FILE]
                                         [--quiet]

ARCHIVES: recorded CanItEdit runs (the MultiPL-E tar.gz format, `benchmark.suites.canitedit.archive`); default
every archive in DATA/canitedit_runs and DATA/canitedit_runs_more (`--data DIR`, else EDIT_FIDELITY_DATA,
else the per-user cache). Each run's completions whose recorded evaluator verdict is OK go through the real
language server exactly as a replay sends them (`benchmark.studies.overedits.replay`, as `benchmark.studies.overedits.real`
does for the labelled entries): the problem's `before` is a document, `editFidelity.requestEdit` carries the
instruction of the completion's kind and the gold `after`, and the scripted endpoint answers the recorded
completion. A unit is unrequested when the proposal flags it (`flaggedHunks`; each of `flaggedStatements`, an
unrequested statement inside a unit that holds a requested change, is a unit of its own) and counts at
warning severity when its `hunkSeverities` entry is error or warning; its kinds are `hunkUnrequested` (a
unit flagged for two kinds counts under both).

No sandbox runs here: "passing" is the run's recorded verdict (MultiPL-E status OK), not a verdict of ours.

Per run and instruction kind it prints: the passing completions, how many distinct ones were judged, the
share with at least one unrequested unit at warning severity, and such units per completion, in all and by
kind. Identical completions of one problem and kind within a run are judged once and weighted by their count,
so every figure is per passing sample, as `bench report` counts them (an identical text in another run reuses
that judgment too: the server's answer depends on the problem, kind and text only).

Runs pass different problems, so `--against RUN` also sets every run beside RUN on the problems both pass
(per instruction kind; each problem weighs the same: the mean over those problems of each problem's share
of warned passing completions and of its units per completion).

Exit status: 0; 1 when the server failed on some completion (left out of the figures, counted in `failed`);
2 for unusable input (a missing or unreadable archive, no data directory: one line).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec

from benchmark.datadir import DataError, data_dir, require, run_script
from benchmark.run.engine import flag_counts, flag_kinds
from benchmark.run.recorded import Recorded
from benchmark.run.session import ServerError
from benchmark.studies.overedits.replay import replaying
from benchmark.suites.canitedit.archive import load_archive
from benchmark.suites.canitedit.problems import FILE, Problem, load

FOLDERS = ("canitedit_runs", "canitedit_runs_more")
KINDS = ("descriptive", "lazy")
NO_SANDBOX = 'no sandbox: "passing" is the recorded evaluator verdict (status OK) of each run'
_STAMP = re.compile(r"-canitedit(?:-.*)?$")


class Judgment(msgspec.Struct, frozen=True):
    """What the server said of one distinct completion: units at warning severity, in all and per kind."""

    warning: int = 0
    kinds: dict[str, int] = {}
    error: str | None = None


class Row(msgspec.Struct, frozen=True):
    """One run and instruction kind. `passing`: samples with a recorded OK verdict; `distinct`: of them
    different texts (judged once each); `failed`: samples the server failed on, left out; `warned`: share
    of the judged samples with >= 1 unrequested unit at warning severity; `units`: such units per judged
    sample; `by_kind`: per kind (every kind seen in any row, 0.0 where none)."""

    run: str
    kind: str
    passing: int
    distinct: int
    failed: int
    warned: float | None
    units: float | None
    by_kind: dict[str, float]


class Matched(msgspec.Struct, frozen=True):
    """A run beside the `--against` run on the problems both pass in one instruction kind (`problems`: the
    problems where each has >= 1 judged passing completion): per problem the share of its passing
    completions with a warning-severity unrequested unit (`warned`) and such units per completion
    (`units`), then the mean over the problems, so that a run passing more of a problem's samples does not
    weigh it more."""

    run: str
    kind: str
    problems: int
    base_warned: float | None
    run_warned: float | None
    base_units: float | None
    run_units: float | None
    # a 95% interval of run_warned - base_warned: the problems resampled with replacement (BOOTSTRAP times,
    # a fixed seed: the same interval every time)
    warned_diff_low: float | None = None
    warned_diff_high: float | None = None


BOOTSTRAP = 2000


def interval(diffs: Sequence[float]) -> tuple[float | None, float | None]:
    """The 2.5th and 97.5th percentiles of the mean of `diffs` resampled (seeded: deterministic)."""
    if len(diffs) < 2:
        return None, None
    rng = random.Random(0)
    means = sorted(sum(rng.choices(diffs, k=len(diffs))) / len(diffs) for _ in range(BOOTSTRAP))
    return means[int(0.025 * BOOTSTRAP)], means[int(0.975 * BOOTSTRAP) - 1]


class ModelsReport(msgspec.Struct, frozen=True):
    archives: list[str]
    note: str
    kinds: list[str]
    rows: list[Row]
    errors: list[str] = []  # the first server failures, one line each
    against: str | None = None
    matched: list[Matched] = []


Key = tuple[str, str, str]  # (problem, instruction kind, completion text)


def run_label(path: Path) -> str:
    """A run as the table names it: its archive's name up to "-canitedit" (the model and its variant)."""
    name = path.name.removesuffix(".tar.gz").removesuffix(".tgz")
    return _STAMP.sub("", name) or name


def default_archives(data: Path) -> list[Path]:
    found = sorted(p for folder in FOLDERS for p in (data / folder).glob("*.tar.gz"))
    if not found:
        raise DataError(
            f"no recorded CanItEdit runs (*.tar.gz) in {' or '.join(str(data / f) for f in FOLDERS)}: pass "
            "ARCHIVES, --data DIR or set EDIT_FIDELITY_DATA to the benchmark data directory"
        )
    return found


def load_run(path: Path) -> Recorded:
    if not path.is_file():
        raise DataError(f"{path}: no such archive: pass a recorded CanItEdit run (.tar.gz)")
    return load_archive(path)


def passing(run: Recorded, problems: dict[str, Problem]) -> Counter[Key]:
    """The run's completions with a recorded OK verdict, counted per (problem, kind, text)."""
    out: Counter[Key] = Counter()
    for key, texts in sorted(run.completions.items()):
        problem, _, kind = key.rpartition("/")
        if problem not in problems or kind not in KINDS:
            continue
        verdicts = run.verdicts.get(key) or []
        for i, text in enumerate(texts):
            if i < len(verdicts) and verdicts[i] and text.strip():
                out[(problem, kind, text)] += 1
    return out


async def judge_all(
    keys: Sequence[Key],
    problems: dict[str, Problem],
    *,
    concurrency: int,
    servers: int,
    log_file: Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[Key, Judgment]:
    """Each distinct completion through the real server (`replaying`): its judgment."""
    done: dict[Key, Judgment] = {}
    async with replaying(concurrency, servers=servers, log_file=log_file) as replay:

        async def one(key: Key) -> None:
            problem, kind, text = key
            p = problems[problem]
            async with replay.turn() as turn:
                try:
                    proposal = await turn.propose(
                        p.before, p.instruction(kind), text, name=f"{problem}_{kind}", gold=p.after
                    )
                except ServerError as exc:
                    done[key] = Judgment(error=f"{problem} {kind}: {exc}")
                    return
            if proposal.status != "ok":
                done[key] = Judgment(error=f"{problem} {kind}: {proposal.error_kind}: {proposal.error}")
            else:
                _, warning, _ = flag_counts(proposal)
                done[key] = Judgment(warning=warning or 0, kinds=flag_kinds(proposal) or {})
            if progress is not None:
                progress(len(done))

        await asyncio.gather(*(one(k) for k in keys))
    return done


def rows_of(label: str, counts: Counter[Key], judged: dict[Key, Judgment]) -> list[Row]:
    out = []
    for kind in KINDS:
        mine = {k: n for k, n in counts.items() if k[1] == kind}
        ok = {k: n for k, n in mine.items() if judged[k].error is None}
        total = sum(ok.values())
        per: Counter[str] = Counter()
        for k, n in ok.items():
            for name, units in judged[k].kinds.items():
                per[name] += units * n
        out.append(
            Row(
                run=label,
                kind=kind,
                passing=sum(mine.values()),
                distinct=len(mine),
                failed=sum(n for k, n in mine.items() if judged[k].error is not None),
                warned=sum(n for k, n in ok.items() if judged[k].warning) / total if total else None,
                units=sum(judged[k].warning * n for k, n in ok.items()) / total if total else None,
                by_kind={name: per[name] / total for name in sorted(per)} if total else {},
            )
        )
    return out


def labels_of(archives: Sequence[Path]) -> list[str]:
    labels: list[str] = []
    for path in archives:
        label = run_label(path)
        while label in labels:  # two archives of one model: keep both apart
            label += "'"
        labels.append(label)
    return labels


def per_problem(counts: Counter[Key], judged: dict[Key, Judgment], kind: str) -> dict[str, tuple[float, float]]:
    """Per problem of `kind` with a judged passing completion: (share warned, units per completion)."""
    groups: dict[str, list[tuple[Judgment, int]]] = {}
    for k, n in counts.items():
        if k[1] == kind and judged[k].error is None:
            groups.setdefault(k[0], []).append((judged[k], n))
    out = {}
    for problem, js in groups.items():
        total = sum(n for _, n in js)
        out[problem] = (sum(n for j, n in js if j.warning) / total, sum(j.warning * n for j, n in js) / total)
    return out


def matched(
    base: str, labels: Sequence[str], counts: Sequence[Counter[Key]], judged: dict[Key, Judgment]
) -> list[Matched]:
    """Every other run beside `base` on the problems both pass, per instruction kind."""
    own = dict(zip(labels, counts, strict=True))

    def mean(xs: list[float]) -> float | None:
        return sum(xs) / len(xs) if xs else None

    out = []
    for label in labels:
        if label == base:
            continue
        for kind in KINDS:
            a, b = per_problem(own[base], judged, kind), per_problem(own[label], judged, kind)
            common = sorted(set(a) & set(b))
            low, high = interval([b[p][0] - a[p][0] for p in common])
            out.append(
                Matched(
                    run=label,
                    kind=kind,
                    problems=len(common),
                    base_warned=mean([a[p][0] for p in common]),
                    run_warned=mean([b[p][0] for p in common]),
                    base_units=mean([a[p][1] for p in common]),
                    run_units=mean([b[p][1] for p in common]),
                    warned_diff_low=low,
                    warned_diff_high=high,
                )
            )
    return out


def build(
    archives: Sequence[Path],
    counts: Sequence[Counter[Key]],
    judged: dict[Key, Judgment],
    against: str | None = None,
) -> ModelsReport:
    labels = labels_of(archives)
    rows = [row for label, c in zip(labels, counts, strict=True) for row in rows_of(label, c, judged)]
    kinds = sorted({k for r in rows for k in r.by_kind})
    rows = [msgspec.structs.replace(r, by_kind={k: r.by_kind.get(k, 0.0) for k in kinds}) for r in rows]
    errors = sorted({j.error for j in judged.values() if j.error is not None})
    return ModelsReport(
        archives=[str(a) for a in archives],
        note=NO_SANDBOX,
        kinds=kinds,
        rows=rows,
        errors=errors[:20],
        against=against,
        matched=matched(against, labels, counts, judged) if against is not None else [],
    )


# ---- output -------------------------------------------------------------------------------------


def _cells(r: Row, kinds: Sequence[str]) -> list[str]:
    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}"

    warned = "-" if r.warned is None else f"{100 * r.warned:.1f}%"
    return [
        r.run,
        r.kind,
        str(r.passing),
        str(r.distinct),
        str(r.failed),
        warned,
        num(r.units),
        *(num(r.by_kind.get(k)) if r.units is not None else "-" for k in kinds),
    ]


HEAD = ["run", "kind", "passing", "distinct", "failed", "warned", "units"]
LEGEND = (
    "passing: completions with a recorded OK verdict; distinct: different texts among them (each judged once, "
    "weighted by its count); failed: left out (the server failed on them); warned: share with >= 1 "
    "unrequested unit at warning severity; units: such units per completion, then per kind they are flagged "
    "for (a unit of two kinds counts under both; an unrequested statement inside a requested unit is a unit "
    "of its own)."
)


def render_text(r: ModelsReport) -> str:
    cells = [[*HEAD, *r.kinds], *(_cells(row, r.kinds) for row in r.rows)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
    lines = [
        "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in cells
    ]
    out = [f"recorded CanItEdit runs judged by the server ({len(r.archives)} runs; {r.note})", lines[0]]
    out += ["  ".join("-" * w for w in widths), *lines[1:], "", LEGEND]
    if r.against is not None:
        out += ["", *_matched_lines(r)]
    if r.errors:
        out += ["", "server failures (first ones):", *(f"  {e}" for e in r.errors)]
    return "\n".join(out) + "\n"


MATCHED_HEAD = ["run", "kind", "problems", "warned", "against: warned", "difference (95%)", "units", "against: units"]


def _matched_cells(m: Matched) -> list[str]:
    def share(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    def points(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:+.1f}"

    diff = (
        "-"
        if m.run_warned is None or m.base_warned is None
        else f"{points(m.run_warned - m.base_warned)} [{points(m.warned_diff_low)}, {points(m.warned_diff_high)}]"
    )
    return [
        m.run,
        m.kind,
        str(m.problems),
        share(m.run_warned),
        share(m.base_warned),
        diff,
        num(m.run_units),
        num(m.base_units),
    ]


def _matched_legend(r: ModelsReport) -> str:
    return (
        f"Each run against {r.against} on the problems both pass (problems: with >= 1 passing completion in "
        "each): per problem the share of its passing completions with >= 1 unrequested unit at warning "
        "severity and such units per completion, averaged over those problems (each problem weighs the same); "
        "difference: warned minus the other's, in percentage points, with a 95% bootstrap interval over the "
        f"problems ({BOOTSTRAP} resamples, fixed seed)."
    )


def _matched_lines(r: ModelsReport) -> list[str]:
    cells = [MATCHED_HEAD, *(_matched_cells(m) for m in r.matched)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(MATCHED_HEAD))]
    lines = [
        "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in cells
    ]
    return [f"against {r.against}:", lines[0], "  ".join("-" * w for w in widths), *lines[1:], _matched_legend(r)]


def _markdown(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i < 2 else "---:" for i in range(len(head))) + "|"]
    return out + ["| " + " | ".join(row) + " |" for row in rows]


def render_markdown(r: ModelsReport) -> str:
    out = _markdown([*HEAD, *r.kinds], [_cells(row, r.kinds) for row in r.rows])
    out += ["", f"{LEGEND} {NO_SANDBOX[0].upper()}{NO_SANDBOX[1:]}."]
    if r.against is not None:
        out += ["", *_markdown(MATCHED_HEAD, [_matched_cells(m) for m in r.matched]), "", _matched_legend(r)]
    return "\n".join(out) + "\n"


# ---- command line -------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmark.studies.overedits.models", description=__doc__.splitlines()[0]
    )
    ap.add_argument(
        "archives",
        nargs="*",
        type=Path,
        help="recorded CanItEdit runs (.tar.gz; default: every one in DATA/canitedit_runs and DATA/canitedit_runs_more)",
    )
    ap.add_argument("--data", help="the benchmark data directory (default: EDIT_FIDELITY_DATA, else the cache)")
    ap.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    ap.add_argument("--concurrency", type=int, default=4, help="requests in flight (default 4)")
    ap.add_argument("--servers", type=int, default=2, help="language servers, one core each at most (default 2)")
    ap.add_argument("--server-log", type=Path, help="the language servers' log file (default: none)")
    ap.add_argument(
        "--against",
        metavar="RUN",
        help="also compare every run with RUN (a run's name as the table shows it) on the problems both pass",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)
    if args.concurrency < 1 or args.servers < 1:
        ap.error("--concurrency and --servers must be at least 1")
    data = data_dir(args.data)
    if args.data and not data.is_dir():
        raise DataError(f"{data}: no such data directory: pass --data DIR holding {FILE}")
    archives = list(args.archives) or default_archives(data)
    if args.against is not None and args.against not in labels_of(archives):
        raise DataError(f"--against {args.against}: no such run; the runs: {', '.join(labels_of(archives))}")
    runs = [load_run(a) for a in archives]
    problems = {p.task_id: p for p in load(require(data, "the benchmark data directory"))}
    counts = [passing(run, problems) for run in runs]
    keys = sorted({k for c in counts for k in c})
    started = time.monotonic()

    def progress(n: int) -> None:
        if not args.quiet and (n % 250 == 0 or n == len(keys)):
            print(f"judged {n}/{len(keys)} distinct completions ({time.monotonic() - started:.0f} s)", file=sys.stderr)

    judged = asyncio.run(
        judge_all(
            keys,
            problems,
            concurrency=args.concurrency,
            servers=args.servers,
            log_file=args.server_log,
            progress=progress,
        )
    )
    report = build(archives, counts, judged, args.against)
    if args.format == "json":
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(report).decode(), indent=1) + "\n")
    else:
        sys.stdout.write(render_markdown(report) if args.format == "markdown" else render_text(report))
    return 1 if any(r.failed for r in report.rows) else 0


if __name__ == "__main__":
    sys.exit(run_script(main))
