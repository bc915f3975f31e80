"""How long the language server takes to end after `exit`, as an editor restarting it waits for it.

    .venv/bin/python -m tools.bench.bench_exit [--runs 10] [--hogs 6] [--settle 2] [--inflight-lines 8000]
                                          [--server-root DIR] [--target-ms 300]

Each run starts the real server (`python -m server.lsp`, stdio) with pygls' LanguageClient, initializes it
with the default settings (as an editor without configuration: the default backend, whose client the
server imports in a worker thread), waits `--settle` seconds, sends `shutdown`, then `exit`, and times
`exit` -> the process's end (seen on its pidfd). Four conditions: idle; with a computation in flight (a
`checkChange` of an `--inflight-lines` document against a baseline that differs on every line: seconds
of work in the compute pool, cancelled by `shutdown` but still running in its thread); and both again
under a CPU hog (`--hogs` busy processes this script starts and stops). Prints median and max per
condition, and the exit codes (0 after shutdown). Exits 1 when a median misses `--target-ms` or an exit
code is not 0. `--server-root` runs the server of another checkout (e.g. `git archive` of an older commit).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import select
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from tools.bench.bench_lsp import make_file

WAIT_S = 60.0  # a process not gone by then is killed and counted as this long


async def _start(root: Path) -> LanguageClient:
    client = LanguageClient("bench-exit", "1")
    for method in (types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, types.WINDOW_SHOW_MESSAGE, types.WINDOW_LOG_MESSAGE):
        client.feature(method)(lambda params: None)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1"}
    await client.start_io(sys.executable, "-m", "server.lsp", cwd=str(root), env=env)
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    client.initialized(types.InitializedParams())
    return client


async def _stats(client: LanguageClient) -> dict:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="editFidelity.serverStats", arguments=[{}])
    )
    return result if isinstance(result, dict) else {}


async def settle(client: LanguageClient, timeout_s: float = 60.0, unknown_s: float = 0.0) -> None:
    """Until the server computes nothing (an older server without the counter: `unknown_s` seconds)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        counters = (await _stats(client)).get("counters", {})
        if "computeRunning" not in counters:
            await asyncio.sleep(unknown_s)
            return
        if not counters["computeRunning"]:
            return
        await asyncio.sleep(0.05)


def slow_change(lines: int) -> tuple[str, str]:
    """A document and a baseline that differ on nearly every line: a long measurement."""
    text = make_file(lines)
    return text, text.replace("item", "elem").replace("result", "out")


async def start_inflight(client: LanguageClient, text: str, baseline: str) -> asyncio.Future:
    """A checkChange whose measurement is running in the server's compute pool when this returns."""
    await settle(client)  # what the server computes anyway (the backends' client import) is done
    uri = "file:///bench/exit_inflight.py"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    pending = asyncio.ensure_future(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="editFidelity.checkChange", arguments=[{"uri": uri, "baseline": {"text": baseline}}]
            )
        )
    )
    for _ in range(200):  # until the server says it computes (an older server: a second's grace)
        counters = (await _stats(client)).get("counters", {})
        if "computeRunning" not in counters:
            await asyncio.sleep(1.0)
            break
        if counters["computeRunning"]:
            break
        await asyncio.sleep(0.02)
    return pending


class EndWatch:
    """When the process ended, seen by a thread polling its pidfd (Linux): one wake-up after the end,
    not the two of asyncio's child watcher and event loop, which a loaded machine delays by ~100 ms."""

    def __init__(self, pid: int) -> None:
        self.ended: float | None = None
        self._thread: threading.Thread | None = None
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # not Linux 5.3+: the client's own wait times it
            return
        self._thread = threading.Thread(target=self._watch, args=(fd,), daemon=True)
        self._thread.start()

    def _watch(self, fd: int) -> None:
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if poller.poll(WAIT_S * 1000):
                self.ended = time.perf_counter()
        finally:
            os.close(fd)

    def at(self, fallback: float) -> float:
        if self._thread is not None:
            self._thread.join(5.0)  # it saw the end before the client did: let it report
        return self.ended if self.ended is not None else fallback


async def one_run(root: Path, settle_s: float, inflight: tuple[str, str] | None) -> tuple[float, int | None]:
    """Seconds from sending `exit` to the process's end, and its exit code."""
    client = await _start(root)
    proc = client._server
    assert proc is not None
    pending = None
    try:
        await _stats(client)  # initialized has been handled
        await asyncio.sleep(settle_s)
        if inflight is not None:
            pending = await start_inflight(client, *inflight)
        await asyncio.wait_for(client.shutdown_async(None), 30)
        ended = EndWatch(proc.pid)
        started = time.perf_counter()
        client.exit(None)
        try:
            code = await asyncio.wait_for(proc.wait(), WAIT_S)
        except TimeoutError:  # still there: counted as the wait, its status unknown (None)
            return WAIT_S, None
        return ended.at(time.perf_counter()) - started, code
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        if proc.returncode is None:
            proc.kill()
        with contextlib.suppress(Exception):
            await client.stop()


def start_hogs(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for h in hogs:
        h.kill()
    for h in hogs:
        h.wait()


async def bench(args: argparse.Namespace) -> list[tuple[str, list[float], list[int | None]]]:
    inflight = slow_change(args.inflight_lines)
    rows: list[tuple[str, list[float], list[int | None]]] = []
    for loaded in (False, True):
        hogs = start_hogs(args.hogs) if loaded else []
        try:
            for name, doc in (("idle", None), ("computation in flight", inflight)):
                label = f"{name}{f', {args.hogs} CPU hogs' if loaded else ''}"
                times: list[float] = []
                codes: list[int | None] = []
                for _ in range(args.runs):
                    dt, code = await one_run(args.server_root, args.settle, doc)
                    times.append(dt)
                    codes.append(code)
                rows.append((label, times, codes))
                waited = sum(t >= WAIT_S for t in times)
                print(
                    f"{label:>36}: median {statistics.median(times) * 1000:7.0f} ms, "
                    f"max {max(times) * 1000:7.0f} ms, exit codes {sorted(set(codes), key=str)}"
                    + (f" ({waited} still running after {WAIT_S:g} s, killed)" if waited else ""),
                    flush=True,
                )
        finally:
            stop_hogs(hogs)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10, help="runs per condition")
    p.add_argument("--hogs", type=int, default=6, help="busy processes for the loaded conditions")
    p.add_argument("--settle", type=float, default=2.0, help="seconds between initialized and shutdown")
    p.add_argument("--inflight-lines", type=int, default=8000, help="lines of the in-flight computation's document")
    p.add_argument("--target-ms", type=float, default=300.0)
    p.add_argument(
        "--server-root",
        type=Path,
        default=Path(__file__).resolve().parents[2],
        help="the checkout whose server runs (default: this one)",
    )
    args = p.parse_args(argv)
    if args.runs < 1 or args.hogs < 0 or args.settle < 0 or args.inflight_lines < 100:
        p.error("--runs >= 1, --hogs >= 0, --settle >= 0, --inflight-lines >= 100")
    if not (args.server_root / "server" / "lsp" / "__main__.py").is_file():
        p.error(f"--server-root {args.server_root}: no server/lsp/__main__.py there")
    rows = asyncio.run(bench(args))
    ok = all(statistics.median(t) * 1000 <= args.target_ms and set(c) == {0} for _, t, c in rows)
    print(f"exit -> process end, target {args.target_ms:g} ms (median): {'OK' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
