"""The published BICS results: `bics/stats/MODEL/result_TIMESTAMP.csv`, one row per trial.

Columns: target_length, target_depth, iter_no, bug_line_number, bug_type, pred_bug_line_number,
pred_bug_type, result (True/False in any case). Where a folder holds several result files the latest
one counts, as in the upstream analysis notebooks. A row that cannot be read is reported and skipped;
each row's stored `result` is also checked against our own scoring of its answer, and disagreements
are listed.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import msgspec

from benchmark.datadir import default_cache_dir
from benchmark.suites.bics.scoring import Trial, is_correct, summarise

COLUMNS = (
    "target_length",
    "target_depth",
    "iter_no",
    "bug_line_number",
    "bug_type",
    "pred_bug_line_number",
    "pred_bug_type",
    "result",
)


class PublishedError(ValueError):
    pass


class PublishedRun(msgspec.Struct, kw_only=True):
    model: str
    file: str
    trials: list[Trial]
    problems: list[str] = []  # unreadable rows, ignored files
    disagreements: list[str] = []  # rows whose stored result differs from our scoring of the answer


def _bool(raw: str) -> bool:
    v = raw.strip().lower()
    if v in ("true", "1"):
        return True
    if v in ("false", "0"):
        return False
    raise ValueError(f"result {raw!r} is not True/False")


def _int(raw: str, what: str) -> int:
    try:
        f = float(raw)
    except ValueError:
        raise ValueError(f"{what} {raw!r} is not a number") from None
    if f != int(f):
        raise ValueError(f"{what} {raw!r} is not an integer")
    return int(f)


def read_run(path: Path, model: str | None = None) -> PublishedRun:
    run = PublishedRun(model=model or path.parent.name, file=str(path), trials=[])
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise PublishedError(f"{path}: missing columns {', '.join(missing)}")
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise PublishedError(f"{path}: {exc}") from None
    for i, row in enumerate(rows, start=2):  # line 1 is the header
        try:
            length = _int(row["target_length"], "target_length")
            depth = float(row["target_depth"])
            label = _int(row["bug_line_number"], "bug_line_number")
            pred = _int(row["pred_bug_line_number"], "pred_bug_line_number")
            stored = _bool(row["result"])
            trial = _int(row["iter_no"], "iter_no")
        except (ValueError, TypeError, KeyError) as exc:
            run.problems.append(f"{path.name} row {i}: {exc}")
            continue
        bug_type, pred_type = (row["bug_type"] or "").strip(), row["pred_bug_type"] or ""
        ours = is_correct(label, bug_type, pred, pred_type)
        if ours != stored:
            run.disagreements.append(
                f"{path.name} row {i}: stored {stored}, answer {pred}, {pred_type!r} for {label}, {bug_type}"
            )
        run.trials.append(
            Trial(
                length=length,
                depth=depth,
                trial=trial,
                label_line=label,
                bug_type=bug_type,
                pred_line=pred,
                pred_type=pred_type,
                parseable=True,
                correct=stored,
            )
        )
    return run


def read_stats(stats_dir: str | Path) -> list[PublishedRun]:
    """Every model folder of a stats directory, in name order (the per-user cache's is downloaded on first use)."""
    root = Path(stats_dir)
    if not os.environ.get("EDIT_FIDELITY_DATA") and root.absolute() == (default_cache_dir() / "bics/stats").absolute():
        from benchmark.suites.bics.download import ensure

        ensure()
    if not root.is_dir():
        raise PublishedError(f"{root}: not a directory (expected bics/stats with one folder per model)")
    runs = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(folder.glob("result_*.csv")) or sorted(folder.glob("*.csv"))
        if not files:
            continue
        try:
            run = read_run(files[-1], folder.name)  # the timestamped name sorts by time
        except PublishedError as exc:
            runs.append(PublishedRun(model=folder.name, file=str(files[-1]), trials=[], problems=[str(exc)]))
            continue
        run.problems += [f"{f.name}: ignored, an older result file" for f in files[:-1]]
        runs.append(run)
    if not runs:
        raise PublishedError(f"{root}: no model folder with a result CSV")
    return runs


def summary(run: PublishedRun) -> dict:
    """The published run in the shape of our runs' summaries (accuracy among parseable answers)."""
    s = summarise(run.trials)
    return {
        "model": run.model,
        "file": run.file,
        "source": "published",
        **s,
        "problems": run.problems,
        "disagreements": run.disagreements,
    }
