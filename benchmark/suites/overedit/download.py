"""The paper's task file, fetched from its repository and checked against its SHA-256."""

from __future__ import annotations

import os
from pathlib import Path

SOURCE_URL = (
    "https://raw.githubusercontent.com/nreHieW/over-editing/main/data/questions/"
    "corrupted_solutions_manual_easy_400.jsonl"
)
SOURCE_SHA256 = "9f3003bcdff3167b7de84a87dc29986570d3898bd40014343790e958f8778ef7"
URL_ENV = "EDIT_FIDELITY_OVEREDIT_URL"  # a mirror of the file (same SHA-256)


def download(dest: Path, url: str | None = None, sha256: str = SOURCE_SHA256, timeout_s: float = 60.0) -> Path:
    """Fetch the task file into `dest` (atomically), refusing content whose SHA-256 is not `sha256`."""
    from benchmark.download import fetch

    return fetch(
        url or os.environ.get(URL_ENV) or SOURCE_URL, dest, sha256=sha256, what="overedit tasks", timeout_s=timeout_s
    )
