"""The server under churn, through the real server and a real LSP client: a document closed and
reopened (VS Code restarts versions at 1) while a requestEdit is pending, and what a closed document
leaves behind (its proposals, its analysis cache entries)."""

from __future__ import annotations

import asyncio
import threading
import uuid

from lsp_helpers import FIXED, SAMPLE, _fix, backend_entry, code_actions, execute, start_session, wait_for
from lsprotocol import types

from tools.doubles.scripted import Step

OTHER = SAMPLE.replace("def unrelated(x):\n    return x * 2\n", "def unrelated(x):\n    return x * 3  # other text\n")


def gated(backend) -> tuple[str, threading.Event]:
    """A backend whose answer waits for the test to open the gate: the request stays pending for as
    long as the test needs, without a sleep."""
    name = f"gated-{uuid.uuid4().hex[:8]}"
    gate = threading.Event()

    def answer(req: dict) -> str:
        if not gate.wait(30):
            raise RuntimeError("the test never opened the gate")
        return _fix(req)

    backend.scripts[name] = [Step(content=answer)]
    return name, gate


def open_doc(lsp, uri: str, text: str, version: int = 1) -> None:
    lsp.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )


def close_doc(lsp, uri: str) -> None:
    lsp.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


async def settled(lsp) -> dict:
    """A request answered after the notifications sent before it: they have been handled."""
    return await execute(lsp, "editFidelity.serverStats", {})


def ours(lsp, uri: str) -> list[types.Diagnostic]:
    return [d for d in lsp.diagnostics.get(uri, []) if d.source == "edit-fidelity"]


async def shown(lsp, uri: str) -> dict:
    """What the editor would show for the fix's line: lenses, hover, code actions."""
    lenses = await lsp.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri=uri)))
    hover = await lsp.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=9, character=8)
        )
    )
    line = types.Range(start=types.Position(9, 0), end=types.Position(9, 20))
    actions = [a for a in await code_actions(lsp, uri, line) if "Accept" in a["title"]]
    return {"lenses": lenses or [], "hover": hover, "actions": actions}


async def pending_request(lsp, backend, name: str, uri: str):
    """Send requestEdit and return once the backend holds it (the answer waits at the gate)."""
    before = len(backend.received)
    task = asyncio.ensure_future(
        execute(lsp, "editFidelity.requestEdit", {"uri": uri, "version": 1, "instruction": "fix the filter"})
    )
    await wait_for(lambda: any(r.model == name for r in backend.received[before:]), timeout=15)
    return task


async def session(lsp, backend, name: str):
    return await start_session(
        lsp, {"editFidelity": {"backends": [backend_entry(backend, name)], "observeChanges": False}}
    )


async def test_reopen_with_other_text_makes_the_pending_answer_stale(lsp, backend):
    name, gate = gated(backend)
    await session(lsp, backend, name)
    uri = f"file:///tmp/churn-{uuid.uuid4().hex[:6]}.py"
    open_doc(lsp, uri, SAMPLE)
    task = await pending_request(lsp, backend, name, uri)
    close_doc(lsp, uri)
    open_doc(lsp, uri, OTHER, version=1)  # same URI, same version, other text
    assert (await settled(lsp))["documents"] == 1
    gate.set()
    result = await asyncio.wait_for(task, 20)
    [p] = result["proposals"]
    assert p["status"] == "ok" and p["version"] == 1 and p["edits"]
    assert any("stale" in w and "reopened" in w for w in result["warnings"]), result["warnings"]
    # the server publishes before it answers: what the editor holds now is the last publication
    assert ours(lsp, uri) == []
    seen = await shown(lsp, uri)
    assert seen == {"lenses": [], "hover": None, "actions": []}
    applied = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert applied["applied"] is False and applied["reason"] == "stale", applied
    assert "reopened with other text" in applied["message"]


async def test_reopen_with_the_same_text_keeps_the_answer(lsp, backend):
    """Decision: the same URI, version and text is the same document (the edits apply exactly), so an
    answer for it is shown and can be applied; only other content makes it stale."""
    name, gate = gated(backend)
    editor = await session(lsp, backend, name)
    uri = f"file:///tmp/churn-{uuid.uuid4().hex[:6]}.py"
    editor.open(uri, SAMPLE)
    task = await pending_request(lsp, backend, name, uri)
    close_doc(lsp, uri)
    editor.open(uri, SAMPLE, version=1)
    assert (await settled(lsp))["documents"] == 1
    gate.set()
    result = await asyncio.wait_for(task, 20)
    [p] = result["proposals"]
    assert p["status"] == "ok" and result["warnings"] == []
    assert [d.data["id"] for d in ours(lsp, uri)] == [p["id"]]
    seen = await shown(lsp, uri)
    assert any("Accept" in lens.command.title for lens in seen["lenses"])
    assert seen["hover"] is not None and seen["actions"]
    applied = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert applied["applied"] is True, applied
    await wait_for(lambda: editor.texts[uri] == FIXED)


async def test_answer_arriving_while_closed_is_dropped(lsp, backend):
    name, gate = gated(backend)
    await session(lsp, backend, name)
    uri = f"file:///tmp/churn-{uuid.uuid4().hex[:6]}.py"
    open_doc(lsp, uri, SAMPLE)
    task = await pending_request(lsp, backend, name, uri)
    close_doc(lsp, uri)
    assert (await settled(lsp))["documents"] == 0
    gate.set()
    result = await asyncio.wait_for(task, 20)
    [p] = result["proposals"]
    assert any("closed while the backends worked" in w for w in result["warnings"])
    stats = await execute(lsp, "editFidelity.serverStats", {})
    assert stats["proposals"] == 0 and stats["documents"] == 0
    assert all(c["owners"] == 0 for c in stats["caches"].values()), stats["caches"]
    r = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert r["reason"] == "closed"
    open_doc(lsp, uri, SAMPLE)  # reopened: the answer was never kept for this opening
    r = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert r["applied"] is False and r["reason"] == "stale"
    assert await shown(lsp, uri) == {"lenses": [], "hover": None, "actions": []}


async def test_close_releases_the_documents_state_and_cache_entries(lsp, backend):
    await start_session(lsp, {"editFidelity": {"backends": [backend_entry(backend, "fix")], "observeChanges": False}})
    tag = uuid.uuid4().hex[:6]
    a, b = f"file:///tmp/a-{tag}.py", f"file:///tmp/b-{tag}.py"
    unique = SAMPLE + f"\n\ndef only_in_a_{tag}():\n    return {len(tag)}\n"
    open_doc(lsp, a, unique)
    open_doc(lsp, b, SAMPLE)
    for uri in (a, b):
        r = await execute(lsp, "editFidelity.requestEdit", {"uri": uri, "version": 1, "instruction": "fix the filter"})
        assert r["proposals"][0]["status"] == "ok"
    full = await execute(lsp, "editFidelity.serverStats", {})
    assert full["documents"] == 2 and full["proposals"] == 2
    assert full["caches"]["analyses"]["owners"] == 2 and full["caches"]["analyses"]["entries"] >= 4

    close_doc(lsp, a)
    after = await execute(lsp, "editFidelity.serverStats", {})
    assert after["documents"] == 1 and after["proposals"] == 1 and after["released"] == 1
    # a's texts (its original and edited side) are gone; b's stay
    assert after["caches"]["analyses"]["entries"] <= full["caches"]["analyses"]["entries"] - 2
    assert after["caches"]["analyses"]["owners"] == 1
    assert after["caches"]["chunks"]["bytes"] < full["caches"]["chunks"]["bytes"]
    # b is untouched: its proposal is still shown and applies
    assert (await shown(lsp, b))["lenses"]

    close_doc(lsp, b)
    empty = await execute(lsp, "editFidelity.serverStats", {})
    assert empty["documents"] == 0 and empty["proposals"] == 0
    assert all(c["owners"] == 0 for c in empty["caches"].values())
    assert empty["caches"]["analyses"]["entries"] <= after["caches"]["analyses"]["entries"] - 2
    assert empty["caches"]["chunks"]["bytes"] < after["caches"]["chunks"]["bytes"]


async def test_shared_text_stays_cached_for_the_open_document(lsp, backend):
    """Two documents with the same text share cache entries: closing one keeps them for the other."""
    await start_session(lsp, {"editFidelity": {"backends": [backend_entry(backend, "fix")], "observeChanges": False}})
    tag = uuid.uuid4().hex[:6]
    a, b = f"file:///tmp/a-{tag}.py", f"file:///tmp/b-{tag}.py"
    for uri in (a, b):
        open_doc(lsp, uri, SAMPLE)
        r = await execute(lsp, "editFidelity.requestEdit", {"uri": uri, "version": 1, "instruction": "fix the filter"})
        assert r["proposals"][0]["status"] == "ok"
    full = await execute(lsp, "editFidelity.serverStats", {})
    close_doc(lsp, a)
    after = await execute(lsp, "editFidelity.serverStats", {})
    assert after["caches"]["analyses"]["entries"] == full["caches"]["analyses"]["entries"]
    assert after["caches"]["chunks"]["entries"] == full["caches"]["chunks"]["entries"]
    assert after["caches"]["analyses"]["owners"] == 1


async def test_located_bug_for_other_text_is_not_marked_after_reopen(lsp, backend):
    name = f"gated-bug-{uuid.uuid4().hex[:8]}"
    gate = threading.Event()
    backend.scripts[name] = [Step(content=lambda req: "10, missing_colon" if gate.wait(30) else "")]
    await session(lsp, backend, name)
    uri = f"file:///tmp/churn-{uuid.uuid4().hex[:6]}.py"
    open_doc(lsp, uri, SAMPLE.replace("if v < limit:", "if v < limit"))
    before = len(backend.received)
    task = asyncio.ensure_future(execute(lsp, "editFidelity.locateBug", {"uri": uri, "version": 1}))
    await wait_for(lambda: any(r.model == name for r in backend.received[before:]), timeout=15)
    close_doc(lsp, uri)
    open_doc(lsp, uri, OTHER, version=1)
    assert (await settled(lsp))["documents"] == 1
    gate.set()
    result = await asyncio.wait_for(task, 20)
    assert [a["status"] for a in result["answers"]] == ["ok"]
    assert any("no diagnostics were published" in w for w in result["warnings"]), result["warnings"]
    # published diagnostics come before the answer: none for the new text
    assert ours(lsp, uri) == []
