"""`bench make-suite`'s output as it is made: each source task's kept tasks appended (and fsynced) in
source order, then a line in `OUT.progress` saying that source is done, so a killed run keeps its work
and `--resume` continues it to the same bytes an uninterrupted run writes. The progress file starts
with the run's identity (every argument that changes a task, and a digest of the sources); a resume
with another identity is refused. It is removed once the run ends: a finished suite is `OUT` alone.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import msgspec

from benchmark.datadir import DataError
from benchmark.suites.overedit import Task

FORMAT = 1


class Header(msgspec.Struct, kw_only=True):
    make_suite: int = FORMAT
    identity: dict[str, Any]


class SourceDone(msgspec.Struct, kw_only=True):
    source: str
    kept: list[str]  # the task ids written to OUT for it, in order
    notes: list[str] = []


def progress_path(out: Path) -> Path:
    return out.with_name(out.name + ".progress")


def sources_digest(items: Sequence[tuple[str, ...]]) -> str:
    h = hashlib.sha256()
    for fields in items:
        for f in fields:
            h.update(f.encode("utf-8", "surrogateescape") + b"\0")
        h.update(b"\1")
    return h.hexdigest()


def _fsync(fh: IO[bytes]) -> None:
    fh.flush()
    os.fsync(fh.fileno())


class SuiteWriter:
    """Open with `start` (a fresh run) or `resume`; `add` per source in order; `finish` at the end."""

    def __init__(self, out: Path, done: list[SourceDone], tasks: list[Task]) -> None:
        self.out, self.state = out, progress_path(out)
        self.done, self.tasks = done, tasks  # what earlier runs made
        self._out: IO[bytes] = open(out, "ab")  # noqa: SIM115 - open until `finish`
        self._state: IO[bytes] = open(self.state, "ab")  # noqa: SIM115

    @classmethod
    def start(cls, out: Path, identity: dict[str, Any]) -> SuiteWriter:
        out.parent.mkdir(parents=True, exist_ok=True)
        state = progress_path(out)
        state.write_bytes(msgspec.json.encode(Header(identity=identity)) + b"\n")
        out.write_bytes(b"")
        return cls(out, [], [])

    @classmethod
    def resume(cls, out: Path, identity: dict[str, Any]) -> SuiteWriter:
        """Continue the run in `out`; DataError when its progress file is another run's or damaged."""
        state = progress_path(out)
        again = f"remove {out} and {state.name} to start again"
        lines = state.read_bytes().split(b"\n")
        try:
            header = msgspec.json.decode(lines[0], type=Header)
        except msgspec.DecodeError:
            raise DataError(f"{state}: not a make-suite progress file; {again}") from None
        if header.make_suite != FORMAT or header.identity != identity:
            changed = sorted(k for k in {*header.identity, *identity} if header.identity.get(k) != identity.get(k))
            raise DataError(
                f"--resume: {out} was made with other settings ({', '.join(changed) or 'format'} "
                f"differ); give the same arguments, another --out, or {again}"
            )
        done: list[SourceDone] = []
        for line in lines[1:-1]:  # the last element is b"" or a torn line
            try:
                done.append(msgspec.json.decode(line, type=SourceDone))
            except msgspec.DecodeError:
                raise DataError(f"{state}: a damaged line; {again}") from None
        # OUT holds the tasks of the sources done, then maybe some of a source that was not: cut those
        want = [t for d in done for t in d.kept]
        data = out.read_bytes() if out.exists() else b""
        rows = data.split(b"\n")
        if len(rows) - 1 < len(want):
            raise DataError(f"{out} has {len(rows) - 1} tasks, its progress file lists {len(want)}; {again}")
        tasks: list[Task] = []
        for raw, task_id in zip(rows, want, strict=False):
            try:
                task = msgspec.json.decode(raw, type=Task)
            except msgspec.DecodeError:
                raise DataError(f"{out}: a damaged task line; {again}") from None
            if task.task_id != task_id:
                raise DataError(
                    f"{out} does not match its progress file (task {task.task_id}, expected {task_id}); {again}"
                )
            tasks.append(task)
        keep = sum(len(r) + 1 for r in rows[: len(want)])
        if keep != len(data):
            with open(out, "r+b") as fh:
                fh.truncate(keep)
                os.fsync(fh.fileno())
        state.write_bytes(b"".join(line + b"\n" for line in lines[: 1 + len(done)]))  # drop a torn line
        return cls(out, done, tasks)

    def add(self, source: str, tasks: Sequence[Task], notes: Sequence[str]) -> None:
        """One source done: its tasks first, then the line saying so (a kill between them is cut on resume)."""
        if tasks:
            self._out.write(b"".join(msgspec.json.encode(t) + b"\n" for t in tasks))
            _fsync(self._out)
        self._state.write(
            msgspec.json.encode(SourceDone(source=source, kept=[t.task_id for t in tasks], notes=list(notes))) + b"\n"
        )
        _fsync(self._state)

    def close(self) -> None:
        self._out.close()
        self._state.close()

    def finish(self) -> None:
        self.close()
        self.state.unlink(missing_ok=True)


class Progress:
    """Source tasks done, tasks kept, elapsed and ETA on stderr: redrawn in place on a terminal, else a
    plain line every `every_s` seconds (CI logs, `2> log`)."""

    def __init__(
        self, total: int, *, already: int = 0, kept: int = 0, every_s: float = 5.0, stream: IO[str] | None = None
    ) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.total, self.already, self.done, self.kept = total, already, already, kept
        self.every_s, self.t0, self.last = every_s, time.monotonic(), float("-inf")
        self.shown = already  # `done` when a line was last printed

    def line(self) -> str:
        elapsed = time.monotonic() - self.t0
        fresh = self.done - self.already
        left = self.total - self.done
        eta = f"ETA {_clock(elapsed / fresh * left)}" if fresh and left else "ETA -"
        return (
            f"make-suite: {self.done}/{self.total} source tasks, {self.kept} tasks kept, "
            f"{_clock(elapsed)} elapsed, {eta}"
        )

    def update(self, kept: int) -> None:
        self.done += 1
        self.kept += kept
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()
        elif now - self.last >= self.every_s:
            self.last, self.shown = now, self.done
            print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
        elif self.done != self.shown:
            print(self.line(), file=self.stream, flush=True)


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
