"""The `local` backend end to end: a tiny random chat model made here, loaded through `local:PATH` by
the real worker process. Assertions are on behaviour (token counts, progress, timing, errors), never
on the random model's text."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
import pytest_asyncio

pytest.importorskip("torch")
pytest.importorskip("transformers")

from server.backends import BackendError
from server.backends.local_backend import (
    LocalBackend,
    LocalProgress,
    local_backend_config,
)
from server.backends.prompts import build_messages
from tools.doubles.local_tiny import build_tiny_model

pytestmark = pytest.mark.asyncio(loop_scope="module")

CODE = "def mean(values):\n    return sum(values) / len(values)\n"
MESSAGES = build_messages("guard against an empty list", CODE)
LONG = 3000  # tokens: far more than a test waits for (~5-20 s on this machine)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


def make(path, **fields) -> LocalBackend:
    cfg = local_backend_config(f"local:{path}", **{"max_tokens": 16, "timeout_s": 30.0, **fields})
    # one thread: on a shared 2-core machine two OpenMP threads spin against each other
    return LocalBackend(cfg, threads=1, progress_interval_s=0.0)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def backend(tiny_model):
    b = make(tiny_model, max_concurrency=2)
    loading: list[LocalProgress] = []
    ready = await b.start(loading.append)
    assert ready.path == str(tiny_model) and ready.context == 4096
    assert [p.phase for p in loading] == ["loading"]
    yield b
    await b.aclose()


async def test_generates_up_to_the_token_limit_with_progress(backend):
    events: list[LocalProgress] = []
    done = await backend.complete(MESSAGES, on_progress=events.append, max_tokens=12)
    assert done.finish_reason == "length" and done.completion_tokens == 12
    assert done.prompt_tokens and done.prompt_tokens > 20
    assert done.text.strip() and done.attempts == 1 and done.latency_ms > 0
    counts = [e.tokens for e in events]
    assert all(e.phase == "generating" for e in events)
    assert counts[0] == 0 and counts == sorted(counts) and counts[-1] == 12
    assert all(e.max_tokens == 12 for e in events)
    stats = backend.last_stats
    assert stats is not None and stats.ttft_ms is not None and 0 < stats.ttft_ms <= stats.gen_ms


async def test_greedy_decoding_is_deterministic_and_the_limit_is_per_request(backend):
    a = await backend.complete(MESSAGES, max_tokens=5)
    b = await backend.complete(MESSAGES, max_tokens=5)
    assert a.text == b.text and a.completion_tokens == 5
    c = await backend.complete(MESSAGES)  # the configured limit
    assert c.completion_tokens == 16


async def test_the_event_loop_keeps_running_during_generation(backend):
    lags: list[float] = []

    async def ticker():
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append(time.perf_counter() - t - 0.01)

    tick = asyncio.create_task(ticker())
    try:
        await backend.complete(MESSAGES, max_tokens=300)
    finally:
        tick.cancel()
    assert len(lags) >= 5 and max(lags) < 0.25


async def test_cancellation_stops_generation(backend):
    events: list[LocalProgress] = []
    task = asyncio.create_task(backend.complete(MESSAGES, on_progress=events.append, max_tokens=LONG))
    await wait_for(lambda: any(e.tokens >= 3 for e in events), 20)
    pid = backend._worker.proc.pid
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the next request runs only once the worker has stopped the cancelled one
    t = time.perf_counter()
    quick = await backend.complete(MESSAGES, max_tokens=3)
    assert quick.completion_tokens == 3 and time.perf_counter() - t < 5
    assert backend.last_cancelled is not None and backend.last_cancelled.finish_reason == "cancelled"
    assert 3 <= backend.last_cancelled.completion_tokens < LONG
    assert backend._worker.proc.pid == pid and backend.restarts == 0  # stopped by the flag, not killed


async def test_full_queue_is_refused_at_once(backend):
    first_events: list[LocalProgress] = []
    second_events: list[LocalProgress] = []
    first = asyncio.create_task(backend.complete(MESSAGES, on_progress=first_events.append, max_tokens=LONG))
    await wait_for(lambda: first_events, 10)
    second = asyncio.create_task(backend.complete(MESSAGES, on_progress=second_events.append, max_tokens=2))
    await wait_for(lambda: second_events, 5)
    assert second_events[0].phase == "queued"
    with pytest.raises(BackendError) as err:
        await backend.complete(MESSAGES, max_tokens=2)
    assert err.value.kind == "rate_limited" and "queue is full" in err.value.message
    first.cancel()
    done = await asyncio.wait_for(second, 10)  # the queued one runs once the first is cancelled
    assert done.completion_tokens == 2 and backend.queue_length == 0
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_generation_past_its_deadline_is_a_timeout(backend):
    with pytest.raises(BackendError) as err:
        await backend.complete(MESSAGES, max_tokens=LONG, timeout_s=0.3)
    assert err.value.kind == "timeout" and "0.3 s" in err.value.message
    assert backend.last_stats is not None and backend.last_stats.finish_reason == "timeout"
    assert (await backend.complete(MESSAGES, max_tokens=2)).completion_tokens == 2


async def test_answer_without_code_has_no_code_for_the_caller(backend):
    done = await backend.complete(MESSAGES, max_tokens=8)
    # random tokens: the server turns `code is None` into a no_code error proposal
    from server.backends.extract import parses

    assert done.code is None or parses(done.code)


async def test_a_dead_worker_fails_its_request_and_is_restarted(backend):
    events: list[LocalProgress] = []
    task = asyncio.create_task(backend.complete(MESSAGES, on_progress=events.append, max_tokens=LONG))
    await wait_for(lambda: any(e.tokens >= 1 for e in events), 20)
    os.kill(backend._worker.proc.pid, signal.SIGKILL)
    with pytest.raises(BackendError) as err:
        await asyncio.wait_for(task, 10)
    assert err.value.kind == "connection" and "worker exited" in err.value.message
    restarts = backend.restarts
    again = await backend.complete(MESSAGES, max_tokens=2)
    assert again.completion_tokens == 2 and backend.restarts == restarts + 1


async def test_the_cancel_grace_is_counted_in_the_workers_cpu_time(backend):
    """The grace that decides a worker is stuck is its own CPU time, which grows while it generates
    and not while it is stopped (a loaded machine slows both the worker and its confirmation)."""
    events: list[LocalProgress] = []
    task = asyncio.create_task(backend.complete(MESSAGES, on_progress=events.append, max_tokens=LONG))
    await wait_for(lambda: any(e.tokens >= 1 for e in events), 20)
    worker = backend._worker
    first = worker.cpu_seconds()
    assert first is not None and first > 0
    await wait_for(lambda: (worker.cpu_seconds() or 0) > first, 20)
    os.kill(worker.proc.pid, signal.SIGSTOP)
    try:
        await wait_for(lambda: all_stopped(worker.proc.pid), 30)  # delivery is asynchronous
        stopped = worker.cpu_seconds()
        await asyncio.sleep(0.5)  # a stopped process cannot run, however loaded the machine
        assert worker.cpu_seconds() == stopped
    finally:
        os.kill(worker.proc.pid, signal.SIGCONT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_for(lambda: not worker.jobs, 30)  # confirmed, or killed
    assert worker.alive and backend._worker is worker  # it confirmed the cancel: kept


async def test_a_worker_that_ignores_cancel_is_killed_and_replaced(backend):
    """A stopped worker computes nothing and never confirms: it is given up on after the wall limit
    (one that computes without confirming is given up on after `cancel_grace_s` of its CPU time)."""
    events: list[LocalProgress] = []
    task = asyncio.create_task(backend.complete(MESSAGES, on_progress=events.append, max_tokens=LONG))
    await wait_for(lambda: any(e.tokens >= 1 for e in events), 20)
    stuck = backend._worker.proc
    os.kill(stuck.pid, signal.SIGSTOP)  # it can no longer see the cancel flag
    backend.cancel_wall_limit_s, restarts = 0.3, backend.restarts
    try:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(stuck.wait(), 60)  # a safety net: the limit is 0.3 s
    finally:
        backend.cancel_wall_limit_s = 120.0
    assert stuck.returncode == -signal.SIGKILL
    assert (await backend.complete(MESSAGES, max_tokens=2)).completion_tokens == 2
    assert backend.restarts == restarts + 1


async def test_end_of_turn_stops_and_an_empty_answer_is_an_error(tmp_path):
    b = make(build_tiny_model(tmp_path / "stopper", stop_at_once=True))
    try:
        with pytest.raises(BackendError) as err:
            await b.complete(MESSAGES)
        assert err.value.kind == "empty"
        assert b.last_stats is not None and b.last_stats.finish_reason == "stop"
    finally:
        await b.aclose()


async def test_hub_model_is_downloaded_once_with_progress_then_served_offline(tiny_model, tmp_path, monkeypatch):
    from tools.doubles.hub import FakeHub

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    files = {p.name: p.read_bytes() for p in Path(tiny_model).iterdir() if p.is_file()}
    with FakeHub("acme/tiny-coder", files) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        b = make("acme/tiny-coder")
        events: list[LocalProgress] = []
        try:
            ready = await b.start(events.append)
            assert (await b.complete(MESSAGES, max_tokens=2)).completion_tokens == 2
        finally:
            await b.aclose()
    assert str(tmp_path / "hf") in ready.path and any("/resolve/" in r.path for r in hub.requests)
    phases = [e.phase for e in events]
    assert phases[0] == "downloading" and phases[-1] == "loading"
    sized = [e for e in events if e.total_bytes]
    assert sized and sized[-1].done_bytes == sized[-1].total_bytes > 100_000
    # the hub is gone: offline mode loads the cached copy
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    b = LocalBackend(local_backend_config("local:acme/tiny-coder"), offline=True, threads=1)
    try:
        assert (await b.start()).path == ready.path
    finally:
        await b.aclose()


async def test_offline_without_a_cached_model_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never reach for the network from a test
    b = LocalBackend(local_backend_config("local:acme/not-cached"), offline=True, threads=1)
    try:
        with pytest.raises(BackendError) as err:
            await b.complete(MESSAGES)
        assert err.value.kind == "model_unavailable"
        assert "acme/not-cached" in err.value.message and "offline" in err.value.message
    finally:
        await b.aclose()


async def test_missing_dependency_in_the_worker_says_what_to_install(tiny_model, tmp_path, monkeypatch):
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "torch.py").write_text("raise ImportError('No module named torch (hidden by the test)')\n")
    monkeypatch.setenv("PYTHONPATH", str(shadow))
    b = make(tiny_model)
    try:
        with pytest.raises(BackendError) as err:
            await b.complete(MESSAGES)
        assert err.value.kind == "missing_dependency" and "pip install 'edit-fidelity[local]'" in err.value.message
    finally:
        await b.aclose()


def all_stopped(pid: int) -> bool:
    """Every thread of the process is stopped by a signal (state T in /proc)."""
    tasks = Path(f"/proc/{pid}/task")
    states = [(t / "stat").read_text().rsplit(")", 1)[1].split()[0] for t in tasks.iterdir()]
    return bool(states) and all(state == "T" for state in states)


async def wait_for(predicate, timeout: float):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)
