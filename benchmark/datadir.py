"""Where benchmark data lives: `--data DIR`, else EDIT_FIDELITY_DATA, else the per-user cache."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "edit-fidelity" / "data"


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit)
    configured = os.environ.get("EDIT_FIDELITY_DATA")
    return Path(configured) if configured else default_cache_dir()


class DataError(SystemExit):
    """Benchmark data that is missing or unreadable (a SystemExit, so scripts end with the message)."""


def require(path: Path, what: str) -> Path:
    if not path.exists():
        raise DataError(
            f"{what} not found at {path}: pass --data DIR or set EDIT_FIDELITY_DATA to the benchmark data directory"
        )
    return path
