"""Where benchmark data lives: `--data DIR`, else EDIT_FIDELITY_DATA, else the per-user cache."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from server.errors import UserError


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "edit-fidelity" / "data"


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit)
    configured = os.environ.get("EDIT_FIDELITY_DATA")
    return Path(configured) if configured else default_cache_dir()


class DataError(UserError):
    """Benchmark data that is missing or unreadable. A plain exception (not SystemExit), so a run's
    `except Exception` keeps it to the sample or task it concerns; the CLI reports it as one line."""


def require(path: Path, what: str) -> Path:
    if not path.exists():
        raise DataError(
            f"{what} not found at {path}: pass --data DIR or set EDIT_FIDELITY_DATA to the benchmark data directory"
        )
    return path


def run_script(main: Callable[[], int | None]) -> int:
    """`sys.exit(run_script(main))` for a `python -m benchmark.X` script: a DataError (or any UserError)
    ends it with its one line and status 2, as `edit-fidelity` reports it, instead of a traceback."""
    try:
        return int(main() or 0)
    except UserError as exc:
        print(f"{Path(sys.argv[0]).stem}: error: {exc}", file=sys.stderr)
        return 2
