"""Getting benchmark data onto a machine that has none: plain HTTPS downloads and Hugging Face dataset
splits (through the hub's datasets-server `rows` API, which answers JSON: no parquet reader needed).

Files land atomically (a temporary file renamed into place), so an interrupted download never leaves a
half file that looks complete; a SHA-256, when known, is checked before the rename.
`EDIT_FIDELITY_HF_ROWS_URL` points the split downloads at a mirror (tests use a local server).

`PinnedFiles`: a suite's files from a GitHub repository, each pinned to a commit and its SHA-256, fetched
from the raw-file layout (`BASE/COMMIT/PATH`, BASE replaceable by a mirror through the suite's
environment variable); files already present with the right SHA-256 are kept.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from benchmark.datadir import DataError, data_dir

ROWS_URL = "https://datasets-server.huggingface.co/rows"
ROWS_ENV = "EDIT_FIDELITY_HF_ROWS_URL"
PAGE = 100  # the rows API's largest page


def _get(url: str, timeout_s: float) -> bytes:
    req = urllib.request.Request(url, headers={"user-agent": "edit-fidelity"})  # noqa: S310 - as below
    with urllib.request.urlopen(req, timeout=timeout_s) as resp:  # noqa: S310 - https URLs of known hosts or a user's mirror
        return resp.read()


def write_atomic(dest: Path, data: bytes, *, sha256: str | None = None, what: str = "download") -> Path:
    if sha256 is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != sha256:
            raise DataError(f"{what}: got content with SHA-256 {digest}, expected {sha256}; not used")
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dest


def fetch(url: str, dest: Path, *, sha256: str | None = None, what: str = "download", timeout_s: float = 60.0) -> Path:
    """Download `url` to `dest` (atomically; checked against `sha256` when given)."""
    try:
        data = _get(url, timeout_s)
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:  # incl. a cut-off body
        raise DataError(
            f"{what}: download from {url} failed ({exc}); pass --data DIR or set EDIT_FIDELITY_DATA "
            "to a directory that has the data"
        ) from None
    return write_atomic(dest, data, sha256=sha256, what=what)


def hf_rows(
    dataset: str,
    split: str,
    *,
    config: str = "default",
    timeout_s: float = 60.0,
    on_page: Callable[[int, int], None] | None = None,
) -> list[dict]:
    """Every row of a Hugging Face dataset split, in order (`on_page(done, total)` after each page)."""
    base = os.environ.get(ROWS_ENV) or ROWS_URL
    rows: list[dict] = []
    total: int | None = None
    while total is None or len(rows) < total:
        query = urllib.parse.urlencode(
            {"dataset": dataset, "config": config, "split": split, "offset": len(rows), "length": PAGE}
        )
        url = f"{base}?{query}"
        try:
            page = json.loads(_get(url, timeout_s))
            batch = [r["row"] for r in page["rows"]]
            total = int(page["num_rows_total"])
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError, KeyError, TypeError) as exc:
            raise DataError(
                f"{dataset} ({split}): download from {base} failed at row {len(rows)} ({exc}); "
                "pass --data DIR or set EDIT_FIDELITY_DATA to a directory that has the data"
            ) from None
        if not batch:
            break
        rows.extend(batch)
        if on_page is not None:
            on_page(len(rows), total)
    if total is not None and len(rows) != total:
        raise DataError(f"{dataset} ({split}): the server listed {total} rows but sent {len(rows)}")
    return rows


def write_jsonl(dest: Path, rows: list[dict], *, what: str) -> Path:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return write_atomic(dest, text.encode(), what=what)


# ---------------------------------------------------------------------------------------------------
# Files pinned to commits of a GitHub repository


class Pinned(NamedTuple):
    dest: str  # relative to the suite's folder of the data directory
    commit: str
    path: str  # in the upstream repository at `commit`
    sha256: str
    required: bool = True  # an optional file that fails is logged and skipped


def _has(path: Path, sha256: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except OSError:
        return False


@dataclass(frozen=True)
class PinnedFiles:
    """A suite's pinned files: `download` fetches them into DATA/`folder`, `ensure` on first use."""

    label: str  # names the suite in messages ("BICS", "can-ai-code")
    folder: str  # under the data directory
    raw_url: str  # https://raw.githubusercontent.com/OWNER/REPO
    url_env: str  # a mirror of `raw_url`, serving BASE/COMMIT/PATH
    files: tuple[Pinned, ...]

    def missing(self, data: str | Path | None = None) -> list[str]:
        """The required files of DATA/folder that are absent (existence only: cheap enough for every load)."""
        root = data_dir(data) / self.folder
        return [f.dest for f in self.files if f.required and not (root / f.dest).is_file()]

    def download(self, data: str | Path | None = None, *, log: Callable[[str], None] | None = None) -> Path:
        """Every pinned file into DATA/folder (those already there with the right content are kept); returns
        DATA/folder. A required file that fails ends the download (DataError); an optional one is logged."""
        root = data_dir(data) / self.folder
        base = (os.environ.get(self.url_env) or self.raw_url).rstrip("/")
        for i, f in enumerate(self.files, 1):
            dest = root / f.dest
            if _has(dest, f.sha256):
                continue
            url, what = f"{base}/{f.commit}/{f.path}", f"{self.label} {f.dest}"
            try:
                fetch(url, dest, sha256=f.sha256, what=what)
            except (DataError, http.client.HTTPException) as err:  # HTTPException: a body cut short (IncompleteRead)
                exc = err if isinstance(err, DataError) else DataError(f"{what}: download from {url} failed ({err!r})")
                if f.required:
                    raise DataError(f"{exc} (a mirror of {self.raw_url} can be set with {self.url_env})") from None
                if log is not None:
                    log(f"{self.label}: skipped the optional {f.dest}: {exc}")
                continue
            if log is not None:
                log(f"{self.label}: {i}/{len(self.files)} {f.dest}")
        return root

    def ensure(self, data: str | Path | None = None) -> None:
        """First use without a configured data directory: fill the per-user cache (a no-op when complete)."""
        if data or os.environ.get("EDIT_FIDELITY_DATA") or not self.missing():
            return
        import sys

        self.download(log=lambda msg: print(msg, file=sys.stderr))
