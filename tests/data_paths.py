"""Where the benchmark data lives for the tests (EDIT_FIDELITY_DATA, else ../shared/data); a plain
module, so test files import it by a name no other conftest.py shadows."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def data_dir() -> Path | None:
    configured = os.environ.get("EDIT_FIDELITY_DATA")
    candidates = [Path(configured)] if configured else [REPO.parent / "shared" / "data"]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return None
