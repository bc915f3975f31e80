"""The results store: `RUN_DIR/config.json` and an append-only `RUN_DIR/results.jsonl`.

Each record is one line written with a single `write` on an O_APPEND descriptor and fsynced as soon
as it is complete, so a run killed at any moment (kill -9 included) loses at most the line being
written. Opening a run again drops a torn last line (a line without its newline), and loading keeps
the first record of each key, so `--resume` neither loses nor duplicates records.

Retryable records (a backend or sandbox failure: `retryable`) are the exception: `--resume` runs
their keys again, and a later record of the same key supersedes a retryable one when loading.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self

import msgspec

from benchmark.run.records import RecordDecoder, RunConfig, SampleRecord, encode_record
from server.errors import UserError

CONFIG = "config.json"
RESULTS = "results.jsonl"
SUMMARY = "summary.json"


class RunDirError(UserError):
    """A run directory that cannot be used as asked (exists without --resume, config mismatch...)."""


def read_config(run_dir: Path) -> RunConfig:
    path = run_dir / CONFIG
    if not path.exists():
        raise RunDirError(f"{run_dir} is not a run directory (no {CONFIG})")
    try:
        return msgspec.json.decode(path.read_bytes(), type=RunConfig)
    except (msgspec.DecodeError, OSError) as exc:
        raise RunDirError(
            f"{path} is damaged ({' '.join(str(exc).split())[:200]}): restore it, or start the run again in a new --out"
        ) from None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:16] + "..." + text[-8:]


def identity_mismatch(old: RunConfig, new: RunConfig) -> str | None:
    """What differs between the stored run and the one asked for, in one line; None when they match."""
    a, b = old.identity(), new.identity()
    diff = [f"{k} {_short(a[k])} there, {_short(b[k])} asked" for k in a if a[k] != b.get(k)]
    return "; ".join(diff) or None


def read_records(path: Path) -> list[SampleRecord]:
    """The complete records of a results file, first of each key kept; a torn last line is ignored."""
    if not path.exists():
        return []
    data = path.read_bytes()
    records: list[SampleRecord] = []
    seen: dict[tuple, int] = {}
    decoder = RecordDecoder()
    lines = data.split(b"\n")
    complete = lines[:-1]  # the last element is b"" or a torn line
    for n, line in enumerate(complete, 1):
        if not line.strip():
            continue
        try:
            rec = decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise RunDirError(f"{path}:{n}: not a result record: {exc}") from None
        at = seen.get(rec.key)
        if at is None:
            seen[rec.key] = len(records)
            records.append(rec)
        elif retryable(records[at]):  # a retry of a failed sample replaces it
            records[at] = rec
    return records


# backend failures that another attempt can cure (the server's errorKind values); a recorded run that
# lacks a sample or a task that cannot be asked (a suite's bad input) stays as it is
TRANSIENT_KINDS = frozenset(
    {
        "timeout",
        "connection",
        "http",
        "rate_limited",
        "bad_response",
        "internal",
        "missing_key",
        "unsupported",
        "too_large",
        None,
    }
)


def retryable(rec: SampleRecord) -> bool:
    """A failure of the machinery, not a verdict on the model: a backend that failed to answer, the
    language server that failed the request, or a sandbox that failed to run the program."""
    if rec.outcome == "pass" and rec.error is not None:  # passed, but a follow-up run (coverage) failed
        return True
    if rec.outcome in ("sandbox_error", "server_error"):
        return True
    return rec.outcome == "backend_error" and rec.error_kind in TRANSIENT_KINDS


class ResultsStore:
    def __init__(self, run_dir: Path, config: RunConfig, *, resume: bool, retry_errors: bool = True) -> None:
        self.run_dir = run_dir
        self.path = run_dir / RESULTS
        if run_dir.exists() and not run_dir.is_dir():
            raise RunDirError(f"--out {run_dir} is a file, not a run directory: choose another --out")
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunDirError(f"--out {run_dir}: cannot create it ({exc.strerror or exc})") from None
        cfg_path = run_dir / CONFIG
        if cfg_path.exists():
            if not resume:
                raise RunDirError(
                    f"{run_dir} already holds a run: pass --resume to continue it, or choose another --out"
                )
            old = read_config(run_dir)
            if not old.tasks_digest:  # written before the identity covered tasks, recorded bytes, sandbox
                old = msgspec.structs.replace(
                    old,
                    tasks_digest=config.tasks_digest,
                    planned=config.planned,
                    backend_digest=config.backend_digest,
                    sandbox=config.sandbox,
                )
                if identity_mismatch(old, config) is None:
                    _atomic_write(cfg_path, msgspec.json.format(msgspec.json.encode(old)) + b"\n")
            mismatch = identity_mismatch(old, config)
            if mismatch:
                raise RunDirError(
                    f"{run_dir} holds a different run ({mismatch}); --resume needs what decides its "
                    "verdicts unchanged: repeat its options, or choose another --out"
                )
            self.config = old
        else:
            if self.path.exists() and self.path.stat().st_size:
                raise RunDirError(f"{self.path} exists without {CONFIG}; refusing to mix runs")
            _atomic_write(cfg_path, msgspec.json.format(msgspec.json.encode(config)) + b"\n")
            self.config = config
        self._drop_torn_tail()
        self.records = read_records(self.path)
        self.done = {r.key for r in self.records if not (retry_errors and retryable(r))}
        self.retrying = sum(1 for r in self.records if r.key not in self.done)
        self._superseded = {r.key for r in self.records if r.key not in self.done}
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._encoder = msgspec.json.Encoder()

    def _drop_torn_tail(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb+") as fh:
            data = fh.read()
            if data and not data.endswith(b"\n"):
                fh.truncate(data.rfind(b"\n") + 1)

    def append(self, record: SampleRecord) -> None:
        if record.key in self.done:
            return
        line = encode_record(record, self._encoder) + b"\n"
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            written = os.write(self._fd, line)
            if written != len(line):  # a short write on a regular file: the disk is full
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
            os.fsync(self._fd)
        except OSError:
            with contextlib.suppress(OSError):  # no torn line left behind for the next reader
                os.ftruncate(self._fd, start)
            raise
        self.done.add(record.key)
        if record.key in self._superseded:  # a retry of a failed sample replaces it (as read_records does)
            self.records = [r for r in self.records if r.key != record.key]
            self._superseded.discard(record.key)
        self.records.append(record)

    def retry(self, keys: Iterable[tuple]) -> None:
        """Make failed samples (retryable records) due again, within the same run."""
        for key in keys:
            self.done.discard(key)
            self._superseded.add(key)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_summary(run_dir: Path, summary: Any) -> Path:
    """summary.json: a run's summary (a Struct, or its document), indented, one key a line."""
    path = run_dir / SUMMARY
    _atomic_write(path, msgspec.json.format(msgspec.json.encode(summary)) + b"\n")
    return path


def all_keys(records: Iterable[SampleRecord]) -> set[tuple]:
    return {r.key for r in records}
