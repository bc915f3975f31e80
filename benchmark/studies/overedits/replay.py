"""Recorded completions answered to the real language server, as a replay sends them (shared by
`benchmark.studies.overedits.real`, the labelled real edits, and `benchmark.studies.overedits.models`, the recorded runs).

`python -m server.lsp` runs as an editor runs it (`benchmark.run.session`); each request is
`editFidelity.requestEdit` with the instruction and the gold, and the server asks a scripted
OpenAI-compatible endpoint on 127.0.0.1 (`benchmark.run.endpoint`, as `benchmark.run.answer_sources.Replay` serves recorded
runs) that answers the recorded completion. Each request in flight holds a slot of its own (a backend of the
server answered from its own page of the answer book), so two requests with the same document and instruction
never take each other's answer. With `servers` > 1 the slots are spread over that many servers (the judgment
runs on a server's event loop: one server uses one core).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from benchmark.run.answer_sources import Replay
from benchmark.run.session import ServerError, ServerSession
from server.errors import UserError
from server.protocol.commands import ProposalRecord


class ServerStartError(UserError):
    pass


class Turn:
    """One slot, held while its caller works on one completion: `propose` asks its server for it."""

    def __init__(self, replay: Replay, session: ServerSession, slot: str) -> None:
        self.replay, self.session, self.slot = replay, session, slot

    async def propose(
        self, before: str, instruction: str, answer: str, *, name: str, gold: str | None, uri: str | None = None
    ) -> ProposalRecord:
        """`editFidelity.requestEdit` on `before` (a fresh document, or the caller's `uri`), the endpoint
        answering `answer`: the proposal. ServerError when it fails."""
        handle = self.replay.book.put(self.slot, before, instruction, answer)
        try:
            return await self.session.request_edit(before, instruction, self.slot, name=name, gold=gold, uri=uri)
        finally:
            self.replay.book.drop(self.slot, handle)


class Replaying:
    def __init__(self, replay: Replay, sessions: Sequence[ServerSession], concurrency: int) -> None:
        self._turns: asyncio.Queue[Turn] = asyncio.Queue()
        for i in range(concurrency):
            self._turns.put_nowait(Turn(replay, sessions[i % len(sessions)], replay.slot(i)))

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[Turn]:
        """A slot for one completion's work (at most `concurrency` at a time), given back afterwards."""
        t = await self._turns.get()
        try:
            yield t
        finally:
            self._turns.put_nowait(t)


@asynccontextmanager
async def replaying(
    concurrency: int,
    *,
    servers: int = 1,
    log_file: Path | None = None,
    settings: dict[str, Any] | None = None,
    workspace_folders: Sequence[Path] = (),
) -> AsyncIterator[Replaying]:
    """The endpoint and `servers` language servers for `concurrency` requests in flight; ServerStartError
    (one line) when a server does not start."""
    replay = Replay(kind="recorded")
    with replay.serving(concurrency, concurrency, "") as backends:
        async with AsyncExitStack() as stack:
            sessions = []
            for _ in range(max(1, min(servers, concurrency))):
                session = ServerSession(
                    backends, log_file=log_file, settings=settings, workspace_folders=workspace_folders
                )
                try:
                    sessions.append(await stack.enter_async_context(session))
                except (ServerError, OSError) as exc:
                    raise ServerStartError(f"the language server did not start: {exc}") from exc
            yield Replaying(replay, sessions, concurrency)
