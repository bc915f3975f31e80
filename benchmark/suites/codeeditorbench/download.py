"""Download of the full data set from the Hugging Face hub, through `huggingface_hub.hf_hub_download`
(atomic placement, a cut connection resumed with a Range request, HF_TOKEN and HF_ENDPOINT honoured).
The library does not check content against the hub's SHA-256, so this module does."""

from __future__ import annotations

import hashlib
import os
import re
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


def _one_line(url: str, exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if response is not None:
        return f"{url}: HTTP {response.status_code} {response.reason_phrase}"
    cause = exc.__cause__ or exc  # "cannot find the requested files" wraps the connection error
    return f"{url}: {str(cause).splitlines()[0] if str(cause) else type(cause).__name__}"


def download_file(
    filename: str,
    root: Path,
    *,
    endpoint: str | None = None,
    revision: str = "main",
    token: str | None = None,
    force: bool = False,
) -> Path:
    """The hub file `filename` of the data set into `root`. Content whose SHA-256 differs from the one the
    hub names (its LFS files' ETag) is removed and reported."""
    import httpx2  # huggingface_hub's HTTP client
    from huggingface_hub import get_hf_file_metadata, hf_hub_download

    endpoint = (endpoint or hub_endpoint()).rstrip("/")
    url = hub_url(filename, endpoint=endpoint, revision=revision)
    try:
        etag = get_hf_file_metadata(url, token=token, endpoint=endpoint).etag or ""
        path = Path(
            hf_hub_download(
                HUB_REPO,
                filename,
                repo_type="dataset",
                revision=revision,
                endpoint=endpoint,
                token=token,
                local_dir=root,
                force_download=force,
            )
        )
    except (httpx2.HTTPError, OSError, ValueError) as exc:  # the hub's HTTP errors, a lost connection, a bad file
        raise DownloadError(_one_line(url, exc)) from None
    if re.fullmatch(r"[0-9a-f]{64}", etag):
        digest = hashlib.file_digest(path.open("rb"), "sha256").hexdigest()
        if digest != etag:
            path.unlink()
            raise DownloadError(f"{url}: sha256 {digest} differs from the hub's {etag}; the file was removed")
    return path


def download(
    data: str | Path | None = None,
    *,
    sets: Sequence[str] = ("primary",),
    endpoint: str | None = None,
    revision: str = "main",
    force: bool = False,
    token: str | None = None,
    on_file: Callable[[str, str], None] | None = None,
) -> tuple[list[Path], list[str]]:
    """Fetch the full jsonl files into DATA/codeeditorbench; (files there, errors per file). One file
    failing does not stop the others."""
    root = data_dir(data) / SUBDIR
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
                done.append(
                    download_file(path.name, root, endpoint=endpoint, revision=revision, token=token, force=force)
                )
                if on_file:
                    on_file(path.name, "downloaded")
            except DownloadError as exc:
                errors.append(str(exc))
                if on_file:
                    on_file(path.name, f"failed: {exc}")
    return done, errors
