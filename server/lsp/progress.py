"""Work-done progress for long commands: client token when given, else a server-created one.

A progress the user cancels in the editor (window/workDoneProgress/cancel) cancels the command's
task, like `$/cancelRequest` does.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from lsprotocol import types

from server.lsp.server import EditFidelityServer

logger = logging.getLogger(__name__)
T = TypeVar("T")
WorkDoneToken = types.ProgressToken | None  # the client's work-done progress token, when it sent one


class WorkProgress:
    def __init__(self, ls: EditFidelityServer, token: WorkDoneToken, title: str) -> None:
        self.ls = ls
        self.token = token
        self.title = title
        self.shown: types.ProgressToken | None = None  # the token of the progress begun and not ended

    @property
    def active(self) -> bool:
        return self.shown is not None

    async def start(self, message: str | None = None) -> None:
        ls = self.ls
        token = self.token
        if token is None:
            caps = ls.client_capabilities
            if not (caps and caps.window and caps.window.work_done_progress):
                return
            token = f"edit-fidelity/{uuid.uuid4().hex}"
            try:
                await asyncio.wait_for(ls.work_done_progress.create_async(token), timeout=5.0)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - no progress is better than no edit
                logger.info("client refused a progress token: %s", exc)
                return
            self.token = token
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(title=self.title, cancellable=True, message=message, percentage=0),
        )
        self.shown = token
        fut = ls.work_done_progress.tokens.get(token)
        if fut is not None and task is not None:

            def _cancelled(f: Any) -> None:
                if f.cancelled() and not task.done():
                    loop.call_soon_threadsafe(task.cancel)

            fut.add_done_callback(_cancelled)

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.shown is not None:
            self.ls.work_done_progress.report(
                self.shown, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )

    def end(self, message: str | None = None) -> None:
        token, self.shown = self.shown, None
        if token is not None:
            self.ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            self.ls.work_done_progress.tokens.pop(token, None)


async def as_finished(
    progress: WorkProgress, tasks: Sequence[asyncio.Task[T]], describe: Callable[[T], str]
) -> list[T]:
    """The tasks' results in the order they finish, each reported as `describe(result) (n/total)`. If one
    fails or the command is cancelled, the others are cancelled and awaited and the progress ends as cancelled."""
    done: list[T] = []
    finished = False
    try:
        for fut in asyncio.as_completed(tasks):
            done.append(await fut)
            progress.report(f"{describe(done[-1])} ({len(done)}/{len(tasks)})", int(100 * len(done) / len(tasks)))
        finished = True
    finally:
        if not finished:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            progress.end("cancelled")
    return done
