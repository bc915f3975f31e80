"""Memory soak of the language server: open / edit / requestEdit / close cycles through LSP.

    .venv/bin/python -m tools.bench.bench_soak [--cycles 2000] [--lines 40] [--every 100] [--warmup N]
                                          [--same-document] [--cache-mb MB] [--server-root DIR]

Each cycle opens a new document (its text differs from every other cycle's: a worst case for the
analysis caches), makes one small incremental edit, asks a scripted OpenAI-compatible backend on
127.0.0.1 for an edit (answered at once) and closes the document. With `--same-document` one
document stays open and each cycle replaces its text (a long session on one file: nothing is
released on close, only the caches' byte cap bounds them). The server's resident set size
(/proc/PID/status) is printed every `--every` cycles, with its least-squares slope after the warm-up
in KB per cycle; target: < 5 KB per cycle (the server levels off). `--server-root` runs the server
from another checkout (for example `git archive` of an older commit) to compare before and after
with the same client and backend.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from tools.bench.bench_lsp import make_file
from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code

TARGET_KB_PER_CYCLE = 5.0


def _answer(req: dict) -> str:
    """The assistant's edit: the first filter fixed, one constant changed."""
    code = user_code(req)
    return fenced(
        code.replace("if item < limit and", "if item <= limit and", 1).replace("total > 100", "total > 99", 1)
    )


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


async def start(root: Path, options: dict, cache_mb: float | None) -> LanguageClient:
    client = LanguageClient("soak", "1")
    for method in (types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, types.WINDOW_SHOW_MESSAGE, types.WINDOW_LOG_MESSAGE):
        client.feature(method)(lambda params: None)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1"}
    if cache_mb is not None:
        env["EDIT_FIDELITY_CACHE_MB"] = str(cache_mb)
    await client.start_io(sys.executable, "-m", "server.lsp", cwd=str(root), env=env)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(apply_edit=True)),
            initialization_options=options,
        )
    )
    client.initialized(types.InitializedParams())
    return client


async def stop(client: LanguageClient) -> None:
    try:
        await asyncio.wait_for(client.shutdown_async(None), 10)
        client.exit(None)
    finally:
        await client.stop()


async def stats(client: LanguageClient) -> dict | None:
    """The server's own account (servers without `editFidelity.serverStats` give None)."""
    try:
        return await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="editFidelity.serverStats", arguments=[{}])
        )
    except Exception:  # noqa: BLE001 - an older server: RSS only
        return None


def slope(points: list[tuple[int, int]]) -> float:
    """Least-squares slope of (cycle, KB) points."""
    n = len(points)
    if n < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / var if var else float("nan")


async def soak(args: argparse.Namespace) -> dict:
    base = make_file(args.lines)
    with ScriptedServer({"soak": [Step(content=_answer)]}) as srv:
        backend = {"name": "scripted", "baseUrl": srv.base_url, "model": "soak", "timeoutS": 30}
        client = await start(
            args.server_root, {"editFidelity": {"backends": [backend], "observeChanges": False}}, args.cache_mb
        )
        pid = client._server.pid  # type: ignore[union-attr]  # the subprocess pygls started
        samples: list[tuple[int, int]] = []
        errors = 0
        started = time.perf_counter()
        print(f"{'cycle':>6} {'RSS MB':>8} {'cache MB (est.)':>16} {'proposals':>10} {'s':>7}", flush=True)
        for cycle in range(args.cycles + 1):
            if cycle % args.every == 0:
                kb = rss_kb(pid)
                samples.append((cycle, kb))
                st = await stats(client)
                cache = f"{sum(c['bytes'] for c in st['caches'].values()) / 2**20:16.1f}" if st else f"{'-':>16}"
                held = f"{st['proposals']:10d}" if st else f"{'-':>10}"
                print(f"{cycle:6d} {kb / 1024:8.1f} {cache} {held} {time.perf_counter() - started:7.1f}", flush=True)
            if cycle == args.cycles:
                break
            text = base.replace("limit=0)", f"limit={cycle})", 1)  # every cycle's text is new
            if args.same_document:
                uri, version = "file:///soak/session.py", cycle + 1
                if cycle == 0:
                    client.text_document_did_open(
                        types.DidOpenTextDocumentParams(
                            types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
                        )
                    )
                else:
                    client.text_document_did_change(
                        types.DidChangeTextDocumentParams(
                            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                        )
                    )
            else:
                uri, version = f"file:///soak/doc_{cycle}.py", 2
                client.text_document_did_open(
                    types.DidOpenTextDocumentParams(
                        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
                    )
                )
                client.text_document_did_change(
                    types.DidChangeTextDocumentParams(
                        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                        content_changes=[
                            types.TextDocumentContentChangePartial(
                                range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
                                text=f"CYCLE = {cycle}\n",
                            )
                        ],
                    )
                )
            result = await client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="editFidelity.requestEdit",
                    arguments=[{"uri": uri, "version": version, "instruction": "fix"}],
                )
            )
            proposals = result["proposals"] if isinstance(result, dict) else []
            errors += not proposals or proposals[0]["status"] != "ok"
            if not args.same_document:
                client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
        await stop(client)
    warm = [p for p in samples if p[0] >= args.warmup]
    return {"samples": samples, "slope": slope(warm), "errors": errors, "wall_s": time.perf_counter() - started}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cycles", type=int, default=2000)
    p.add_argument("--lines", type=int, default=40, help="lines of each document (1201: the large-file case)")
    p.add_argument("--every", type=int, default=100, help="print RSS every N cycles")
    p.add_argument("--warmup", type=int, default=None, help="cycles before the slope is fitted (default: a quarter)")
    p.add_argument(
        "--same-document",
        action="store_true",
        help="one document kept open, its text replaced each cycle (only the byte cap bounds the caches)",
    )
    p.add_argument("--cache-mb", type=float, default=None, help="EDIT_FIDELITY_CACHE_MB for the server")
    p.add_argument(
        "--server-root",
        type=Path,
        default=Path(__file__).resolve().parents[2],
        help="the checkout whose server runs (default: this one)",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when the slope misses the target")
    args = p.parse_args(argv)
    if args.cycles < 1 or args.every < 1 or args.lines < 1:
        p.error("--cycles, --every and --lines must be at least 1")
    if not (args.server_root / "server" / "lsp" / "__main__.py").is_file():
        p.error(f"--server-root {args.server_root}: no server/lsp/__main__.py there (give a checkout of this project)")
    if not Path("/proc/self/status").exists():
        p.error("the soak reads RSS from /proc: Linux only")
    args.warmup = args.cycles // 4 if args.warmup is None else args.warmup
    r = asyncio.run(soak(args))
    first, last = r["samples"][0][1], r["samples"][-1][1]
    ok = r["slope"] < TARGET_KB_PER_CYCLE and r["errors"] == 0
    print(
        f"{args.cycles} cycles of a {args.lines}-line document in {r['wall_s']:.0f} s ({r['errors']} failed requests); "
        f"RSS {first / 1024:.1f} -> {last / 1024:.1f} MB ({(last - first) / args.cycles:.1f} KB per cycle overall)"
    )
    print(
        f"slope after {args.warmup} cycles of warm-up: {r['slope']:.2f} KB per cycle "
        f"(target < {TARGET_KB_PER_CYCLE:g})  {'OK' if ok else 'MISSED'}"
    )
    return 1 if args.strict and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
