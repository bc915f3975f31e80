"""Memory soak of the language server: open / edit / requestEdit / close cycles through LSP.

    .venv/bin/python -m tools.bench.bench_soak [--cycles 2000] [--lines 40] [--every 100] [--warmup N]
                                          [--same-document] [--cache-mb MB] [--server-root DIR]
    .venv/bin/python -m tools.bench.bench_soak --check-change [--cycles 240] [--lines 1201]
                                          [--insert statement|broken] [--bound-mb 40]

Each cycle opens a new document (its text differs from every other cycle's: a worst case for the
analysis caches), makes one small incremental edit, asks a scripted OpenAI-compatible backend on
127.0.0.1 for an edit (answered at once) and closes the document. With `--same-document` one
document stays open and each cycle replaces its text (a long session on one file: nothing is
released on close, only the caches' byte cap bounds them). The server's resident set size
(/proc/PID/status) is printed every `--every` cycles, with its least-squares slope after the warm-up
in KB per cycle; target: < 5 KB per cycle (the server levels off). `--server-root` runs the server
from another checkout (for example `git archive` of an older commit) to compare before and after
with the same client and backend.

`--check-change`: one larger document (a ~20 KB, 1,201-line module, most of it one class) opened,
one line inserted (a different one each cycle: a statement, or with `--insert broken` a line that
breaks the parse), `editFidelity.checkChange` against the snapshot, closed. Prints RSS after the first
cycle, at cycle 100 and at the end, and what serverStats still shows cached once it is closed; exits 1
when RSS rises more than `--bound-mb` (40) above its level after the first cycle, or when anything of
the closed documents is still cached.
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

from tools.bench.bench_exit import settle
from tools.bench.bench_lsp import make_file
from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code

TARGET_KB_PER_CYCLE = 5.0
# kept on purpose when every document is closed (bounded, small; see server.lsp.memory)
KEPT_MEMOS = frozenset({"sonarScores"})


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


def large_module(lines: int) -> str:
    """A module of `lines` lines, ~15 bytes each: a few imports and one class (one top-level chunk)."""
    out = ["import os\nimport sys\n\n\nclass Store:\n"]
    n, i = 5, 0
    while n < lines - 2:
        out.append(
            f"    def m{i}(self, a):\n        x = a + {i}\n        if x > 3:\n            return x\n        return 0\n\n"
        )
        n, i = n + 6, i + 1
    text = "".join(out)
    kept = text.splitlines(keepends=True)[: lines - 2]
    return "".join(kept) + "\n" + "END = 1\n"


def _insertion(text: str, cycle: int, broken: bool) -> tuple[int, str]:
    """(line, text) of the cycle's inserted line: inside a method body, at a line that moves."""
    lines = text.splitlines(keepends=True)
    at = 7 + (cycle * 37) % (len(lines) - 12)
    while not lines[at].startswith("        if "):  # before a method's `if`: any statement fits there
        at += 1
    if broken:  # a column-0 statement inside the class: the methods below no longer parse
        return at, f"inserted_{cycle} = ({cycle}\n"
    return at, f"        y_{cycle} = x * {cycle}\n"


def cached_after_close(st: dict) -> dict[str, int]:
    """Bytes and entries that the caches still hold for closed documents (the memos kept on purpose aside)."""
    caches = {k: v for k, v in st["caches"].items() if k not in KEPT_MEMOS}
    return {
        "bytes": sum(c["bytes"] for c in caches.values()),
        "entries": sum(c["entries"] for c in caches.values()),
        "owners": sum(c["owners"] for c in caches.values()),
    }


async def soak_check_change(args: argparse.Namespace) -> dict:
    base = large_module(args.lines)
    client = await start(args.server_root, {"editFidelity": {"observeChanges": False}}, args.cache_mb)
    pid = client._server.pid  # type: ignore[union-attr]  # the subprocess pygls started
    await settle(client, unknown_s=5.0)  # the backends' client imported in the background: not growth
    samples: list[tuple[int, int]] = []
    flagged = 0
    started = time.perf_counter()
    marks = {1, 100, args.cycles} | set(range(args.every, args.cycles + 1, args.every))
    print(
        f"document: {len(base.encode()) / 1024:.1f} KB, {base.count(chr(10))} lines; "
        f"idle server RSS {rss_kb(pid) / 1024:.1f} MB",
        flush=True,
    )
    print(f"{'cycle':>6} {'RSS MB':>8} {'cached KB':>10} {'entries':>8} {'s':>7}", flush=True)
    uri = "file:///soak/large_module.py"
    for cycle in range(1, args.cycles + 1):
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=base))
        )
        line, inserted = _insertion(base, cycle, args.insert == "broken")
        at = types.Position(line, 0)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangePartial(range=types.Range(at, at), text=inserted)],
            )
        )
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="editFidelity.checkChange", arguments=[{"uri": uri, "baseline": "snapshot", "version": 2}]
            )
        )
        flagged += isinstance(result, dict) and bool(result["report"]["hunks"])
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
        if cycle in marks:
            st = await stats(client)  # answered after the didClose: it has been handled
            assert st is not None, "the server has no editFidelity.serverStats"
            kb = rss_kb(pid)
            samples.append((cycle, kb))
            left = cached_after_close(st)
            print(
                f"{cycle:6d} {kb / 1024:8.1f} {left['bytes'] / 1024:10.1f} {left['entries']:8d} "
                f"{time.perf_counter() - started:7.1f}",
                flush=True,
            )
    final = await stats(client)
    assert final is not None
    await stop(client)
    return {
        "samples": samples,
        "left": cached_after_close(final),
        "caches": final["caches"],
        "changed": flagged,
        "wall_s": time.perf_counter() - started,
    }


def main_check_change(args: argparse.Namespace) -> int:
    r = asyncio.run(soak_check_change(args))
    by_cycle = dict(r["samples"])
    first = by_cycle[1]
    peak = max(kb for _, kb in r["samples"])
    at100 = f"{by_cycle[100] / 1024:.1f} MB" if 100 in by_cycle else "-"
    left = r["left"]
    print(
        f"{args.cycles} checkChange cycles ({args.insert} insert, {r['changed']} with hunks) in {r['wall_s']:.0f} s: "
        f"RSS after cycle 1 {first / 1024:.1f} MB, at cycle 100 {at100}, at the end "
        f"{r['samples'][-1][1] / 1024:.1f} MB (peak +{(peak - first) / 1024:.1f} MB, bound +{args.bound_mb:g} MB)"
    )
    kept = {k: r["caches"][k]["bytes"] for k in KEPT_MEMOS if k in r["caches"]}
    print(
        f"after closing: {left['bytes']} cached bytes, {left['entries']} entries, {left['owners']} owners "
        f"for closed documents (kept on purpose: {kept})"
    )
    ok_rss = peak - first <= args.bound_mb * 1024
    ok_left = left == {"bytes": 0, "entries": 0, "owners": 0}
    print(
        "OK"
        if ok_rss and ok_left
        else "MISSED: "
        + ", ".join(w for w, bad in (("RSS bound", not ok_rss), ("cached after close", not ok_left)) if bad)
    )
    return 0 if ok_rss and ok_left else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cycles", type=int, help="default 2000 (240 with --check-change)")
    p.add_argument("--lines", type=int, help="lines of each document (default 40; 1201 with --check-change)")
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
    p.add_argument(
        "--check-change",
        action="store_true",
        help="the larger-document pattern: open, insert a line, checkChange vs snapshot, close (defaults: "
        "--cycles 240 --lines 1201); exits 1 past --bound-mb or with anything cached after closing",
    )
    p.add_argument("--insert", choices=["statement", "broken"], default="statement", help="--check-change's line")
    p.add_argument("--bound-mb", type=float, default=40.0, help="--check-change: allowed RSS rise after cycle 1")
    p.set_defaults(cycles=None, lines=None)
    args = p.parse_args(argv)
    args.cycles = args.cycles if args.cycles is not None else (240 if args.check_change else 2000)
    args.lines = args.lines if args.lines is not None else (1201 if args.check_change else 40)
    if args.cycles < 1 or args.every < 1 or args.lines < 1:
        p.error("--cycles, --every and --lines must be at least 1")
    if not (args.server_root / "server" / "lsp" / "__main__.py").is_file():
        p.error(f"--server-root {args.server_root}: no server/lsp/__main__.py there (give a checkout of this project)")
    if not Path("/proc/self/status").exists():
        p.error("the soak reads RSS from /proc: Linux only")
    if args.check_change:
        if args.lines < 20:
            p.error("--check-change needs --lines of at least 20")
        return main_check_change(args)
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
