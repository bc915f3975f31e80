"""The public entry point: a thread-safe pool of worker slots over the best isolation level here.

`Sandbox.run` is synchronous and may be called from many threads at once (each call borrows one
slot: its own uid, hence its own process limit); `Sandbox.arun` is the asyncio form, running on the
sandbox's own thread pool so it never starves the event loop's default executor. A run starved of
CPU at the wall-clock ceiling is run again alone: no other run of this Sandbox goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import msgspec

from sandbox import languages
from sandbox.config import Limits
from sandbox.docker_backend import DockerBackend
from sandbox.local import LocalBackend
from sandbox.request import STARVED, Request, check_path, error_result
from sandbox.result import LEVELS, ExecResult, Level
from sandbox.uids import UidLease

REQUIRE_ISOLATION_ENV = "EDIT_FIDELITY_REQUIRE_ISOLATION"
LEVEL_ENV = "EDIT_FIDELITY_SANDBOX_LEVEL"


class Backend(Protocol):
    level: Level
    isolated: bool

    def execute(self, req: Request, uid: int) -> ExecResult: ...


class IsolationUnavailable(RuntimeError):
    """No level that was asked for works here; the message says why (one line)."""


def detect(levels: tuple[Level, ...] = LEVELS) -> dict[Level, str | None]:
    """Each level mapped to None when it works here, else the reason it does not."""
    found: dict[Level, str | None] = {}
    for level in levels:
        if level == "docker":
            found[level] = DockerBackend.available()
        else:
            found[level] = LocalBackend(level).probe()
    return found


class Gate:
    """A writer-preferring readers-writer lock over a Sandbox's slots: ordinary runs share it, a
    re-run of a starved program holds it alone. A waiting writer blocks new readers, so a steady
    stream of ordinary runs cannot keep a re-run waiting for ever; writers queue among themselves."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writer or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
                self._cond.notify_all()  # readers held back by a writer that gave up waiting
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


def _make_backend(level: Level, slots: int, limits: Limits) -> Backend:
    if level == "docker":
        return DockerBackend(slots, limits)
    return LocalBackend(level)


class Sandbox:
    def __init__(
        self,
        level: Level | None = None,
        *,
        workers: int | None = None,
        require_isolation: bool | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.workers = workers or os.cpu_count() or 1
        if require_isolation is None:
            require_isolation = os.environ.get(REQUIRE_ISOLATION_ENV, "") not in ("", "0", "false")
        level = level or os.environ.get(LEVEL_ENV) or None  # type: ignore[assignment]
        self.skipped: dict[Level, str] = {}
        if level is None:
            level = self._choose()
        elif level not in LEVELS:
            raise ValueError(f"unknown isolation level {level!r}; known: {', '.join(LEVELS)}")
        elif level == "docker":
            # Asked for by name (argument or EDIT_FIDELITY_SANDBOX_LEVEL): fail now, in one line,
            # rather than return an `error` for every run.
            reason = DockerBackend.available()
            if reason is not None:
                raise IsolationUnavailable(f"docker level asked for but not usable: {reason}")
        if level == "none" and require_isolation:
            raise IsolationUnavailable(
                "isolation required but no level works here: " + "; ".join(f"{k}: {v}" for k, v in self.skipped.items())
            )
        self.level: Level = level
        self.backend = _make_backend(level, self.workers, self.limits)
        self._lease = UidLease(self.workers)
        self.uids = self._lease.uids
        self._slots: queue.SimpleQueue[int] = queue.SimpleQueue()
        for uid in self.uids:
            self._slots.put(uid)
        self._gate = Gate()
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()
        if level == "none":
            import warnings

            warnings.warn(
                "edit-fidelity sandbox: running WITHOUT isolation (level 'none'): only limits and timeouts apply",
                RuntimeWarning,
                stacklevel=2,
            )

    def _choose(self) -> Level:
        for level in LEVELS:
            reason = DockerBackend.available() if level == "docker" else LocalBackend(level).probe()
            if reason is None:
                return level
            self.skipped[level] = reason
        return "none"  # unreachable in practice: `none` only needs prlimit

    def run(
        self,
        files: dict[str, str | bytes],
        entry: str | None = None,
        *,
        language: str | None = None,
        command: list[str] | None = None,
        stdin: str | bytes | None = None,
        timeout_s: float | None = None,
        memory_mb: int | None = None,
        output_limit: int | None = None,
        coverage: bool = False,
        suite: str | None = None,
        wall_factor: float | None = None,
    ) -> ExecResult:
        """Run `entry` (default: the only file) from `files` in a fresh work dir; never raises for
        a bad program or request, returns status `error` for the latter. `timeout_s` is CPU
        seconds; the wall-clock ceiling is `wall_factor` (default the Limits') times that."""
        try:
            req = self._request(
                files, entry, language, command, stdin, timeout_s, memory_mb, output_limit, coverage, suite, wall_factor
            )
        except (ValueError, FileNotFoundError) as exc:
            return error_result(
                str(exc), level=self.level, isolated=self.backend.isolated, language=language or "python"
            )
        with self._gate.shared():
            first = self._execute(req)
        if not first.starved_runs:
            return first
        # Starved: the load, not the program, stopped it. Once more with the whole pool to itself.
        with self._gate.exclusive():
            again = self._execute(req)
        if not again.starved_runs:
            return msgspec.structs.replace(again, starved_runs=1)
        return msgspec.structs.replace(
            again,
            status="error",
            starved_runs=2,
            error=f"starved of CPU twice, not judged: run 1: {first.error.removeprefix(STARVED)}; "
            f"run 2 (alone): {again.error.removeprefix(STARVED)}",
        )

    def _execute(self, req: Request) -> ExecResult:
        slot = self._slots.get()
        try:
            return self.backend.execute(req, slot)
        finally:
            self._slots.put(slot)

    async def arun(self, files: dict[str, str | bytes], entry: str | None = None, **kwargs: object) -> ExecResult:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool(), lambda: self.run(files, entry, **kwargs))  # type: ignore[arg-type]

    def _pool(self) -> ThreadPoolExecutor:
        with self._executor_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="sandbox")
            return self._executor

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Idempotent: stops the thread pool, removes the docker level's containers, frees the uids."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        close = getattr(self.backend, "close", None)
        if close:
            close()
        self._lease.release()

    def _request(
        self,
        files: dict[str, str | bytes],
        entry: str | None,
        language: str | None,
        command: list[str] | None,
        stdin: str | bytes | None,
        timeout_s: float | None,
        memory_mb: int | None,
        output_limit: int | None,
        coverage: bool,
        suite: str | None,
        wall_factor: float | None = None,
    ) -> Request:
        if not files:
            raise ValueError("no files to run")
        encoded = {check_path(k): v.encode() if isinstance(v, str) else v for k, v in files.items()}
        if entry is None:
            if len(encoded) != 1:
                raise ValueError("several files: say which one is the entry")
            entry = next(iter(encoded))
        entry = check_path(entry)
        if entry not in encoded and not command:
            raise ValueError(f"entry {entry!r} is not among the files")
        lang = languages.resolve(language, entry)
        if not languages.available(lang):
            raise FileNotFoundError(f"{lang.name}: {lang.tool} is not installed here")
        base = self.limits
        limits = msgspec.structs.replace(
            base,
            timeout_s=base.timeout_s if timeout_s is None else float(timeout_s),
            memory_mb=base.memory_mb if memory_mb is None else int(memory_mb),
            output_limit=base.output_limit if output_limit is None else int(output_limit),
            wall_factor=base.wall_factor if wall_factor is None else float(wall_factor),
        )
        if limits.timeout_s <= 0 or limits.memory_mb <= 0 or limits.output_limit <= 0:
            raise ValueError("timeout, memory and output limit must be positive")
        if limits.wall_factor < 1:
            raise ValueError("wall_factor must be at least 1 (the ceiling is wall_factor x timeout_s)")
        data = stdin.encode() if isinstance(stdin, str) else stdin
        return Request(
            files=encoded,
            entry=entry,
            language=lang,
            limits=limits,
            command=command,
            stdin=data,
            coverage=coverage,
            suite=suite,
        )


_default: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    global _default
    with _default_lock:
        if _default is None:
            _default = Sandbox()
        return _default


def run(files: dict[str, str | bytes], entry: str | None = None, **kwargs: object) -> ExecResult:
    return default_sandbox().run(files, entry, **kwargs)  # type: ignore[arg-type]


async def arun(files: dict[str, str | bytes], entry: str | None = None, **kwargs: object) -> ExecResult:
    return await default_sandbox().arun(files, entry, **kwargs)
