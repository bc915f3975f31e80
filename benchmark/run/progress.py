"""Progress of `bench run` on stderr: a rich bar in a terminal; elsewhere (`2> log`, CI) a plain line every
few seconds, so a log shows how far a run is, what passes and what fails to run, before it ends."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import TaskID

    from benchmark.run.engine import Progress

INTERVAL_ENV = "EDIT_FIDELITY_PROGRESS_S"  # seconds between plain lines (default 10)


def _clock(s: float) -> str:
    s = int(s)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def line(p: Progress) -> str:
    elapsed = time.monotonic() - p.started
    eta = "-" if not p.done or p.done >= p.total else _clock(elapsed / p.done * (p.total - p.done))
    rate = f"{100 * p.passed / p.done:.1f}%" if p.done else "-"
    return (
        f"replay {p.done}/{p.total} done, {p.passed} passing ({rate}), {p.errors} error(s), "
        f"elapsed {_clock(elapsed)}, ETA {eta}"
    )


class PlainProgress:
    """One line per interval from a timer thread (a slow backend still shows the run is alive), and a
    last one at the end."""

    def __init__(self, stream: IO[str] | None = None, interval_s: float | None = None) -> None:
        self.stream = stream or sys.stderr
        self.interval_s = interval_s or float(os.environ.get(INTERVAL_ENV) or 10.0)
        self._state: Progress | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._printed: tuple[int, int, int] | None = None

    def __call__(self, p: Progress) -> None:
        self._state = p
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, daemon=True, name="bench-progress")
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._print()

    def _print(self, *, last: bool = False) -> None:
        p = self._state
        if p is None:
            return
        key = (p.done, p.total, p.errors)
        if last and key == self._printed:
            return  # the timer already said it
        self._printed = key
        print(line(p), file=self.stream, flush=True)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._print(last=True)


class RichProgress:
    """A rich progress bar on stderr: records done, pass rate and errors so far, ETA."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("pass {task.fields[rate]}"),
            TextColumn("errors {task.fields[errors]}"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.task: TaskID | None = None

    def __call__(self, p: Progress) -> None:
        if self.task is None:
            self.bar.start()
            self.task = self.bar.add_task("replay", total=p.total, rate="-", errors=0)
        self.bar.update(
            self.task, completed=p.done, total=p.total, errors=p.errors, rate=f"{100 * p.passed / max(p.done, 1):.1f}%"
        )

    def close(self) -> None:
        if self.task is not None:
            self.bar.stop()


def for_stderr() -> RichProgress | PlainProgress:
    return RichProgress() if sys.stderr.isatty() else PlainProgress()
