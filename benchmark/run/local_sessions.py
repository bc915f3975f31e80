"""Where the engine's requests go: the `Asker` interface and the language server on this machine.

`LocalSessions` runs one `python -m server.lsp` subprocess, as an editor does, and keeps one running for
the run's length: a server that exits or stops answering (`ServerGone`) costs the requests it had in
flight (each an error record of its sample, retried at the end of the run) and is started again at once,
so the run goes on by itself. Only a server that cannot be had at all ends the run (`ServerUnavailable`):
one that does not start, or that dies again every time before answering anything.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Protocol

from benchmark.run.session import ServerError, ServerGone, ServerSession, ServerUnavailable
from benchmark.suite import Answer, Suite, Task
from server.protocol.names import Command

logger = logging.getLogger(__name__)

# restarts in a row with no request answered between them: past this the server is not coming back
MAX_RESTARTS_IN_A_ROW = 5


class Asker(Protocol):
    """Where the engine's requests go: one language-server session here (`LocalSessions`), or the
    sessions of a Ray cluster (`benchmark.run.cluster.sessions`); either runs the suite's own `ask`."""

    async def ask(
        self, task: Task, condition: str, backend: str, *, name: str, style: str | None, n: int
    ) -> Answer | list[Answer]: ...


# (the server's `backends` settings, the run's log path) -> the sessions for the run's length
Sessions = Callable[[list[dict], Path], AbstractAsyncContextManager[Asker]]


class LocalSessions:
    """One `python -m server.lsp` subprocess on this machine, restarted when it dies."""

    def __init__(
        self,
        suite: Suite,
        command: list[str] | None = None,
        *,
        on_restart: Callable[[str], None] | None = None,
    ) -> None:
        self.suite = suite
        self.command = command
        self.on_restart = on_restart  # told each restart's cause (the run's progress line, a test)
        self.session: ServerSession | None = None
        self.restarts = 0
        self._in_a_row = 0
        self._backends: list[dict] = []
        self._log: Path | None = None
        self._lock = asyncio.Lock()
        self._fatal: ServerUnavailable | None = None  # why no server can be had, once a restart failed

    def __call__(self, backends: list[dict], log: Path) -> AbstractAsyncContextManager[Asker]:
        return self._open(backends, log)

    @asynccontextmanager
    async def _open(self, backends: list[dict], log: Path) -> AsyncIterator[Asker]:
        self._backends, self._log = backends, log
        self.session = await self._start()
        try:
            yield self
        finally:
            if self.session is not None:
                await self.session.__aexit__(None, None, None)
                self.session = None

    async def _start(self) -> ServerSession:
        session = ServerSession(self._backends, log_file=self._log, command=self.command)
        try:
            await session.__aenter__()
        except ServerError as exc:
            raise ServerUnavailable(f"the language server does not start: {exc}") from None
        # a backend entry the server rejects (an unknown embedded model, a bad URL) fails every sample the
        # same way: the run ends here in the server's own words rather than as one error per sample
        try:
            listed = await session.execute(Command.LIST_BACKENDS, {})
        except ServerError as exc:
            await session.__aexit__(None, None, None)
            raise ServerUnavailable(f"the language server does not answer: {exc}") from None
        if listed.get("problems"):
            await session.__aexit__(None, None, None)
            raise ServerUnavailable(f"the language server rejects the run's backends: {'; '.join(listed['problems'])}")
        return session

    async def ask(
        self, task: Task, condition: str, backend: str, *, name: str, style: str | None, n: int
    ) -> Answer | list[Answer]:
        session = await self._live()
        try:
            got = await self.suite.solver.ask(session, task, condition, backend, style=style, n=n, name=name)
        except ServerGone as exc:
            await self._restart(session, str(exc))
            raise
        self._in_a_row = 0
        return got

    async def _live(self) -> ServerSession:
        async with self._lock:  # a restart in progress finishes before the next request goes out
            if self.session is None:
                raise self._fatal or ServerUnavailable("the language server is not running")
            return self.session

    async def _restart(self, dead: ServerSession, cause: str) -> None:
        """Replace `dead` by a new server, once however many of its requests failed with it."""
        async with self._lock:
            if self.session is not dead:
                return  # another request already replaced it
            self.session = None
            await dead.__aexit__(None, None, None)
            self._in_a_row += 1
            if self._in_a_row > MAX_RESTARTS_IN_A_ROW:
                self._fatal = ServerUnavailable(
                    f"the language server died {self._in_a_row} times in a row without answering a request "
                    f"(last: {cause})"
                )
                raise self._fatal
            self.restarts += 1
            logger.warning("language server restarted (%d): %s", self.restarts, cause)
            if self.on_restart is not None:
                self.on_restart(cause)
            try:
                self.session = await self._start()
            except ServerUnavailable as exc:
                self._fatal = exc
                raise
