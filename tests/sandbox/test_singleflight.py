"""The one single-flight/memo helper: shared computations, what is kept, LRU bound, cancellation, errors."""

from __future__ import annotations

import asyncio

import pytest

from sandbox.singleflight import SingleFlight


class Counted:
    """An awaitable computation that counts its starts and finishes when `release` is set."""

    def __init__(self) -> None:
        self.starts = 0
        self.release = asyncio.Event()

    async def __call__(self, value: str) -> str:
        self.starts += 1
        await self.release.wait()
        return value


async def test_concurrent_callers_share_one_computation_and_nothing_is_kept_by_default() -> None:
    flight: SingleFlight[str, str] = SingleFlight()
    make = Counted()
    callers = [asyncio.create_task(flight.run("k", lambda: make("v"))) for _ in range(5)]
    await asyncio.sleep(0)
    assert "k" in flight  # in flight
    make.release.set()
    assert await asyncio.gather(*callers) == ["v"] * 5
    assert make.starts == 1 and "k" not in flight and len(flight) == 0
    assert await flight.run("k", lambda: make("w")) == "w" and make.starts == 2  # not kept: computed again


async def test_kept_values_answer_later_callers_least_recently_used_dropped() -> None:
    flight: SingleFlight[str, str] = SingleFlight(keep=lambda v: v != "bad", max_entries=2)
    make = Counted()
    make.release.set()
    for key in ("a", "b", "bad"):
        assert await flight.run(key, lambda key=key: make(key)) == key
    assert make.starts == 3 and len(flight) == 2 and "bad" not in flight  # the refused value is not kept
    await flight.run("a", lambda: make("a"))  # a hit: "a" becomes the most recent
    await flight.run("c", lambda: make("c"))  # evicts "b"
    assert make.starts == 4 and "a" in flight and "b" not in flight and "c" in flight
    flight.forget("a")
    assert await flight.run("a", lambda: make("a2")) == "a2" and make.starts == 5


async def test_a_cancelled_caller_does_not_cancel_the_computation_for_the_others() -> None:
    flight: SingleFlight[str, str] = SingleFlight(keep=True)
    make = Counted()
    first = asyncio.create_task(flight.run("k", lambda: make("v")))
    second = asyncio.create_task(flight.run("k", lambda: make("v")))
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    make.release.set()
    assert await second == "v" and make.starts == 1 and "k" in flight


async def test_an_exception_reaches_every_caller_and_is_not_kept() -> None:
    flight: SingleFlight[str, str] = SingleFlight(keep=True)
    gate = asyncio.Event()
    starts = 0

    async def failing() -> str:
        nonlocal starts
        starts += 1
        await gate.wait()
        raise RuntimeError("sandbox hiccup")

    callers = [asyncio.create_task(flight.run("k", failing)) for _ in range(3)]
    await asyncio.sleep(0)
    gate.set()
    results = await asyncio.gather(*callers, return_exceptions=True)
    assert [str(r) for r in results] == ["sandbox hiccup"] * 3 and starts == 1
    assert "k" not in flight
    with pytest.raises(RuntimeError):
        await flight.run("k", failing)
    assert starts == 2
