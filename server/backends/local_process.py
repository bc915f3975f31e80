"""The embedded backend's worker process as the server sees it: its pipes, its jobs, its CPU time, its end."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from server.backends.local_protocol import Cancel, Generate, Ready, Shutdown, encode

J = TypeVar("J")
ProgressListener = Callable[[Any], None]


class WorkerProcess(Generic[J]):
    """One worker process, the tasks that read its pipes and the jobs sent to it (of any backend)."""

    def __init__(self, proc: asyncio.subprocess.Process, loop: asyncio.AbstractEventLoop) -> None:
        self.proc = proc
        self.ready: asyncio.Future[Ready] = loop.create_future()
        self.ready.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self.tasks: list[asyncio.Task] = []
        self.jobs: dict[int, J] = {}  # sent to this worker and not finished, whichever backend sent them
        self.loading_listener: ProgressListener | None = None

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def send(self, request: Generate | Cancel | Shutdown) -> None:
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.write(encode(request) + b"\n")

    def kill(self) -> None:
        if self.alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def cpu_seconds(self) -> float | None:
        """CPU time the worker process (all its threads) has used, or None where /proc cannot say."""
        try:
            with open(f"/proc/{self.proc.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            return None
        # utime and stime are fields 14 and 15 of stat(5); fields[0] here is field 3 (state)
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def tail(self) -> str:
        lines = [ln for ln in self.stderr_tail if ln.strip()]
        return " | ".join(lines[-3:])[-400:]


async def stop_worker(worker: WorkerProcess[Any]) -> None:
    """Ask the worker to exit, then kill it after a short wait."""
    if worker.alive:
        worker.send(Shutdown())
        with contextlib.suppress(Exception):
            if worker.proc.stdin is not None:
                worker.proc.stdin.close()
        try:
            await asyncio.wait_for(worker.proc.wait(), 3.0)
        except TimeoutError:
            worker.kill()
            await worker.proc.wait()
    for task in worker.tasks:
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(task, 2.0)
