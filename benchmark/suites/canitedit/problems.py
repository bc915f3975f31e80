"""CanItEdit's problems (SPEC 3.3): the loader (the task type is `task.Problem`, named here too)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec

from benchmark.datadir import DataError, data_dir, require
from benchmark.suites.canitedit.task import CONDITIONS, FILE, HF_DATASET, NAME, Problem

__all__ = ["CONDITIONS", "FILE", "HF_DATASET", "NAME", "Problem", "load", "parse"]


def load(data: str | Path | None = None, limit: int | None = None) -> list[Problem]:
    """The problems from the data directory; with no directory configured (the per-user cache), the
    first use downloads them from the hub."""
    path = data_dir(data) / FILE
    if not path.exists() and data is None and not os.environ.get("EDIT_FIDELITY_DATA"):
        import sys

        from benchmark.suites.canitedit.download import download

        download(log=lambda msg: print(msg, file=sys.stderr))
    path = require(path, f"CanItEdit problems ({FILE}; `edit-fidelity bench download canitedit` fetches them)")
    problems = parse(path)
    problems.sort(key=lambda p: p.id)
    return problems[:limit] if limit else problems


def parse(path: Path) -> list[Problem]:
    """Every line a problem; a damaged file is refused whole (naming file:line), since a run on part of
    the problems would report figures that are not CanItEdit's."""
    fix = "fetch it again with `edit-fidelity bench download canitedit`"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start}); {fix}") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read CanItEdit problems: {exc.strerror or exc}") from None
    problems: list[Problem] = []
    bad: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            problems.append(msgspec.convert(json.loads(line), Problem))
        except (ValueError, msgspec.ValidationError) as exc:  # JSONDecodeError is a ValueError
            bad.append(f"{path}:{n}: not a CanItEdit problem ({' '.join(str(exc).split())[:200]})")
    if bad:
        more = f" (and {len(bad) - 1} more bad lines)" if len(bad) > 1 else ""
        raise DataError(f"{bad[0]}{more}; {fix}")
    if not problems:
        raise DataError(f"{path}: no CanItEdit problems in it; {fix}")
    return problems
