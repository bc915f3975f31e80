"""Download of the full data set from the Hugging Face hub."""

from __future__ import annotations

import hashlib
import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmark.datadir import data_dir
from benchmark.suites.codeeditorbench.tasks import HUB_REPO, SETS, SUBDIR, data_files


class DownloadError(Exception):
    pass


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def hub_url(filename: str, *, endpoint: str | None = None, revision: str = "main") -> str:
    return f"{endpoint or hub_endpoint()}/datasets/{HUB_REPO}/resolve/{revision}/{filename}"


def download_file(url: str, dest: Path, *, token: str | None = None, chunk: int = 1 << 20,
                  on_progress: Callable[[int, int | None], None] | None = None) -> Path:
    """Stream `url` to `dest` through `dest.part` (resumed with a Range request when one is there),
    checking the hub's sha256 (`X-Linked-Etag`/`ETag`) when it sends one; atomic rename at the end."""
    part = dest.with_name(dest.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": "edit-fidelity"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if have:
        headers["Range"] = f"bytes={have}-"
    req = urllib.request.Request(url, headers=headers)
    try:
        resp = urllib.request.urlopen(req, timeout=60)  # https, or the endpoint the user configured
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # the part is already complete
            part.unlink()
            return download_file(url, dest, token=token, chunk=chunk, on_progress=on_progress)
        raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise DownloadError(f"{url}: {getattr(exc, 'reason', exc)}") from None
    with resp:
        resumed = resp.status == 206
        digest = hashlib.sha256()
        if resumed:
            with part.open("rb") as fh:
                for block in iter(lambda: fh.read(chunk), b""):
                    digest.update(block)
        else:
            have = 0
        length = resp.headers.get("Content-Length")
        total = have + int(length) if length and length.isdigit() else None
        etag = (resp.headers.get("X-Linked-Etag") or resp.headers.get("ETag") or "").strip('W/"')
        dest.parent.mkdir(parents=True, exist_ok=True)
        with part.open("ab" if resumed else "wb") as out:
            while True:
                try:
                    block = resp.read(chunk)
                except OSError as exc:
                    raise DownloadError(f"{url}: connection lost after {have} bytes ({exc}); run again to resume") \
                        from None
                if not block:
                    break
                out.write(block)
                digest.update(block)
                have += len(block)
                if on_progress:
                    on_progress(have, total)
    if total is not None and have != total:
        raise DownloadError(f"{url}: {have} of {total} bytes arrived; run again to resume")
    if re.fullmatch(r"[0-9a-f]{64}", etag) and digest.hexdigest() != etag:
        part.unlink()
        raise DownloadError(f"{url}: sha256 {digest.hexdigest()} differs from the hub's {etag}; the partial file was removed")
    part.replace(dest)
    return dest


def download(data: str | Path | None = None, *, sets: Sequence[str] = ("primary",), endpoint: str | None = None,
             revision: str = "main", force: bool = False, token: str | None = None,
             on_file: Callable[[str, str], None] | None = None) -> tuple[list[Path], list[str]]:
    """Fetch the full jsonl files into DATA/codeeditorbench; (files there, errors per file). One file
    failing does not stop the others."""
    root = data_dir(data) / SUBDIR
    token = token or os.environ.get("HF_TOKEN")
    done, errors = [], []
    for set_name in sets:
        if set_name not in SETS:
            errors.append(f"unknown set {set_name!r}; known: {', '.join(SETS)}")
            continue
        for path in data_files(root.parent, set_name).values():
            if path.exists() and not force:
                done.append(path)
                if on_file:
                    on_file(path.name, "present")
                continue
            try:
                done.append(download_file(hub_url(path.name, endpoint=endpoint, revision=revision), path, token=token))
                if on_file:
                    on_file(path.name, "downloaded")
            except DownloadError as exc:
                errors.append(str(exc))
                if on_file:
                    on_file(path.name, f"failed: {exc}")
    return done, errors
