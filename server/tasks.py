"""Background tasks held until they end.

The event loop keeps only weak references to tasks: one nobody holds can be collected mid-run, and
one nobody tracks outlives the shutdown that should end it. A `TaskSet` holds each task it starts,
forgets it when it is done, and cancels (or awaits) what is left at the end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class TaskSet:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._keep: set[asyncio.Task[Any]] = set()  # never cancelled: their result must be released

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str | None = None, cancel: bool = True) -> asyncio.Task[T]:
        """Start `coro` on the running loop and hold it until it is done. `cancel=False`: `cancel()`
        leaves it running (it makes something its done-callback must close)."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if not cancel:
            self._keep.add(task)
            task.add_done_callback(self._keep.discard)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    def cancel(self) -> None:
        for task in list(self._tasks - self._keep):
            task.cancel()

    async def wait(self) -> None:
        """Wait for every task still running (their errors are theirs to log)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
