"""`exit` ends the server process at once, through the real server and a real LSP client: it does not
wait for a computation in flight (the compute pool's threads are not joined), and its status is 0
after `shutdown`, 1 without (the LSP spec). Facts, not timings: the bound is generous, the work in
flight far longer."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from lsp_helpers import SERVER_CMD, SERVER_ENV
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from tools.bench.bench_exit import slow_change, start_inflight

# a measurement of this many lines against a baseline differing on each takes ~45 s here (quadratic:
# 8,000 lines take ~12 s); the process must be gone long before
INFLIGHT_LINES = 16_000
BOUND_S = 5.0


async def _server() -> LanguageClient:
    client = LanguageClient("exit-test", "1")
    for method in (types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, types.WINDOW_SHOW_MESSAGE, types.WINDOW_LOG_MESSAGE):
        client.feature(method)(lambda params: None)
    await client.start_io(*SERVER_CMD, env=SERVER_ENV)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(), initialization_options={"editFidelity": {"observeChanges": False}}
        )
    )
    client.initialized(types.InitializedParams())
    return client


async def _ended(client: LanguageClient) -> tuple[int, float]:
    """Send `exit`; the process's status and the seconds until it ended."""
    proc = client._server
    assert proc is not None
    started = time.monotonic()
    client.exit(None)
    try:
        code = await asyncio.wait_for(proc.wait(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
    return code, time.monotonic() - started


async def _stats(client: LanguageClient) -> dict:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="editFidelity.serverStats", arguments=[{}])
    )


@pytest.mark.timeout(120)
async def test_exit_with_a_long_computation_in_flight_ends_the_process_without_waiting_for_it():
    client = await _server()
    pending = None
    try:
        pending = await start_inflight(client, *slow_change(INFLIGHT_LINES))
        stats = await _stats(client)
        assert stats["counters"]["computeRunning"] >= 1 and not pending.done()
        await asyncio.wait_for(client.shutdown_async(None), 30)
        code, took = await _ended(client)
        assert code == 0  # exit after shutdown
        assert took < BOUND_S, f"the process took {took:.1f} s to end after exit"
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        with contextlib.suppress(Exception):
            await client.stop()


async def test_exit_without_shutdown_ends_with_status_1():
    client = await _server()
    try:
        await _stats(client)
        code, took = await _ended(client)
        assert code == 1 and took < BOUND_S
    finally:
        with contextlib.suppress(Exception):
            await client.stop()


async def test_exit_after_shutdown_ends_with_status_0():
    client = await _server()
    try:
        await _stats(client)
        await asyncio.wait_for(client.shutdown_async(None), 30)
        code, took = await _ended(client)
        assert code == 0 and took < BOUND_S
    finally:
        with contextlib.suppress(Exception):
            await client.stop()
