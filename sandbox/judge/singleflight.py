"""Single-flight: concurrent callers asking for the same key share one computation."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class SingleFlight(Generic[T]):
    """One computation per key at a time: concurrent callers of the same event loop that ask for a key
    being computed await that computation (its value or its exception). Nothing is kept once it is done:
    a cache is the caller's."""

    def __init__(self) -> None:
        self._pending: dict[str, asyncio.Future[T]] = {}

    async def run(self, key: str, make: Callable[[], Awaitable[T]]) -> T:
        loop = asyncio.get_running_loop()
        fut = self._pending.get(key)
        if fut is not None and fut.get_loop() is loop:
            return await asyncio.shield(fut)
        fut = loop.create_future()
        self._pending[key] = fut
        try:
            value = await make()
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # retrieved: waiters re-raise it, nobody logs it as lost
            raise
        finally:
            if self._pending.get(key) is fut:
                del self._pending[key]
        if not fut.done():
            fut.set_result(value)
        return value
