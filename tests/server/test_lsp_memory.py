"""What the server holds for documents once they are closed, through the real server and a real LSP
client: nothing. A larger document (one class: one top-level chunk) is opened, edited by one line,
checked against its snapshot and closed, cycle after cycle; after each close serverStats shows no entry
and no byte for it in any cache or memo (the core's owned caches, the held syntax trees, the broken-text
pieces, the per-document state), and the entry count while it is open does not grow with the cycles.
Structural facts, not RSS (tools/bench/bench_soak.py --check-change measures that)."""

from __future__ import annotations

import asyncio

from lsp_helpers import execute, start_session
from lsprotocol import types

from tools.bench.bench_soak import KEPT_MEMOS, _insertion, large_module

CYCLES = 20
LINES = 400  # over the chunker's 150-line floor; one class, so every edit makes a new large chunk


def _closed_view(stats: dict) -> dict[str, tuple[int, int, int]]:
    return {k: (c["entries"], c["bytes"], c["owners"]) for k, c in stats["caches"].items() if k not in KEPT_MEMOS}


async def _cycle(lsp, uri: str, base: str, cycle: int, broken: bool) -> dict:
    """One open / insert / checkChange / close; serverStats while the document is open."""
    lsp.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=base))
    )
    line, text = _insertion(base, cycle, broken)
    at = types.Position(line, 0)
    lsp.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangePartial(range=types.Range(at, at), text=text)],
        )
    )
    result = await execute(lsp, "editFidelity.checkChange", {"uri": uri, "baseline": "snapshot", "version": 2})
    assert result["report"]["hunks"], "the inserted line is a change"
    opened = await execute(lsp, "editFidelity.serverStats", {})
    lsp.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    return opened


async def test_closed_documents_leave_nothing_cached_and_cycles_do_not_grow_the_caches(lsp):
    await start_session(lsp, {"editFidelity": {"observeChanges": False}})
    base = large_module(LINES)
    uri = "file:///tmp/memory-large.py"
    open_entries: list[int] = []
    for cycle in range(1, CYCLES + 1):
        broken = cycle % 2 == 0  # every other text does not parse: the broken-piece memo is used too
        opened = await _cycle(lsp, uri, base, cycle, broken)
        assert opened["caches"]["documentState"]["entries"] == 1 and opened["caches"]["documentState"]["bytes"] > 0
        assert opened["caches"]["documentState"]["workspace_documents"] == 0  # the store holds the one copy
        open_entries.append(sum(c["entries"] for c in opened["caches"].values()))
        closed = await execute(lsp, "editFidelity.serverStats", {})  # answered after the didClose
        assert closed["documents"] == 0 and closed["proposals"] == 0
        view = _closed_view(closed)
        assert all(v == (0, 0, 0) for v in view.values()), (cycle, view)
        assert closed["caches"]["documentState"]["workspace_documents"] == 0
        assert closed["caches"]["heldTrees"]["held"] == 0  # no syntax tree of a closed document
    # the same kind of text each cycle: as many entries while open at the end as after the first cycles
    assert max(open_entries[4:]) <= max(open_entries[:4]) + 2, open_entries


async def test_a_measurement_that_ends_after_its_document_closed_leaves_nothing_cached(lsp):
    await start_session(lsp, {"editFidelity": {"observeChanges": False}})
    base = large_module(LINES)
    uri = "file:///tmp/memory-closed-while-measured.py"
    lsp.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=base))
    )
    await execute(lsp, "editFidelity.serverStats", {})  # the configuration pull is over: commands run at once
    other = base.replace("return 0\n", "return 1\n")  # every method differs: a measurement of seconds
    pending = asyncio.ensure_future(execute(lsp, "editFidelity.checkChange", {"uri": uri, "baseline": {"text": other}}))
    while not (await execute(lsp, "editFidelity.serverStats", {}))["counters"]["computeRunning"]:
        await asyncio.sleep(0.01)
    lsp.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    result = await asyncio.wait_for(pending, 60)
    assert result["report"]["hunks"]  # measured, though closed meanwhile (its answer shows nothing)
    for _ in range(100):  # the measurement's end is reported to the loop after the reply
        stats = await execute(lsp, "editFidelity.serverStats", {})
        if stats["counters"]["computeRunning"] == 0:
            break
        await asyncio.sleep(0.05)
    assert stats["counters"]["computeRunning"] == 0
    view = _closed_view(stats)
    assert all(v == (0, 0, 0) for v in view.values()), view
