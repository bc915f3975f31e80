"""server.tasks.TaskSet: every background task held until done, cancelled (or awaited) at the end."""

from __future__ import annotations

import asyncio
import gc

from server.tasks import TaskSet


async def test_a_task_is_held_until_it_is_done_even_with_no_other_reference():
    tasks, finished = TaskSet(), asyncio.Event()

    async def work() -> None:
        await asyncio.sleep(0.01)
        finished.set()

    tasks.spawn(work(), name="work")  # the caller keeps nothing
    gc.collect()
    assert len(tasks) == 1
    await asyncio.wait_for(finished.wait(), 5)
    await asyncio.sleep(0)  # the done-callback runs on the next turn of the loop
    assert len(tasks) == 0


async def test_cancel_ends_the_running_tasks_but_not_those_spawned_with_cancel_false():
    tasks = TaskSet()
    gate = asyncio.Event()
    doomed = tasks.spawn(asyncio.sleep(60), name="doomed")
    kept = tasks.spawn(gate.wait(), name="kept", cancel=False)
    tasks.cancel()
    await asyncio.wait([doomed], timeout=5)
    await asyncio.sleep(0)  # its done-callback
    assert doomed.cancelled() and not kept.done() and len(tasks) == 1
    gate.set()
    await asyncio.wait_for(tasks.wait(), 5)
    assert kept.done() and not kept.cancelled() and len(tasks) == 0


async def test_wait_returns_when_every_task_ended_whatever_its_outcome():
    tasks = TaskSet()

    async def fails() -> None:
        raise ValueError("its own to log")

    tasks.spawn(fails(), name="fails")
    tasks.spawn(asyncio.sleep(0.01), name="sleeps")
    await asyncio.wait_for(tasks.wait(), 5)
    assert len(tasks) == 0
