"""Single-flight with an optional memo: concurrent callers asking for the same key share one computation,
and the values it is told to keep answer later callers (least recently used dropped past `max_entries`).

The one such helper of the project: the judge's compiled builds, CodeEditorBench's per-task tests and the
replay engine's gold numbers and verdicts use it. It lives in `sandbox` because `sandbox` imports nothing
from the other packages, while `benchmark` may import `sandbox`. Dependency-free (asyncio only).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


def _always(_value: object) -> bool:
    return True


class SingleFlight(Generic[K, T]):
    """`await flight.run(key, make)`: the kept value of `key`, else the computation in flight for it (of this
    event loop), else a new one of `make()`. The computation runs as its own task, so a cancelled caller
    does not cancel it for the others; an exception reaches every caller and is never kept.

    `keep` (default: nothing is kept) says which values are remembered; `max_entries` bounds them (LRU)."""

    def __init__(self, *, keep: Callable[[T], bool] | bool = False, max_entries: int | None = None) -> None:
        self._keep: Callable[[T], bool] | None = _always if keep is True else keep or None
        self.max_entries = max_entries
        self._pending: dict[K, asyncio.Task[T]] = {}
        self._kept: OrderedDict[K, T] = OrderedDict()

    def __contains__(self, key: object) -> bool:
        """Kept, or in flight: a `run` of it now would not start a computation (in the same event loop)."""
        return key in self._kept or key in self._pending

    def __len__(self) -> int:
        return len(self._kept)

    def forget(self, key: K) -> None:
        """Drop the kept value of `key` (one computed in flight still lands)."""
        self._kept.pop(key, None)

    async def run(self, key: K, make: Callable[[], Awaitable[T]]) -> T:
        if key in self._kept:
            self._kept.move_to_end(key)
            return self._kept[key]
        loop = asyncio.get_running_loop()
        task = self._pending.get(key)
        if task is None or task.get_loop() is not loop:
            task = loop.create_task(self._compute(key, make))
            self._pending[key] = task
        return await asyncio.shield(task)

    async def _compute(self, key: K, make: Callable[[], Awaitable[T]]) -> T:
        try:
            value = await make()
        finally:
            if self._pending.get(key) is asyncio.current_task():
                del self._pending[key]
        if self._keep is not None and self._keep(value):
            self._kept[key] = value
            self._kept.move_to_end(key)
            while self.max_entries is not None and len(self._kept) > self.max_entries:
                self._kept.popitem(last=False)
        return value
