"""CanItEdit's test split from the Hugging Face hub into the data directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from benchmark.datadir import data_dir
from benchmark.suites.canitedit.task import FILE, HF_DATASET, Problem


def download(data: str | Path | None = None, *, log: Callable[[str], None] | None = None) -> Path:
    """The test split, sorted by id (as the data dir has it)."""
    from benchmark.download import hf_rows, write_jsonl

    def progress(done: int, total: int) -> None:
        if log is not None:
            log(f"CanItEdit: {done}/{total} problems")

    rows = sorted(hf_rows(HF_DATASET, "test", on_page=progress), key=lambda r: r["id"])
    for r in rows:
        msgspec.convert(r, Problem)  # refuse a split whose fields are not CanItEdit's before writing it
    return write_jsonl(data_dir(data) / FILE, rows, what="CanItEdit problems")
