"""applyProposal: versioned edits, all or some hunks, stale refusals; reject."""

from __future__ import annotations

from lsp_helpers import (
    FIXED,
    SAMPLE,
    execute,
    settings_for,
    start_session,
    te,
    wait_for,
)
from lsprotocol import types

from server.fidelity import apply_text_edits

URI = "file:///tmp/apply.py"


async def _propose(lsp, backend, model="overedit", instruction="fix the comparison bug"):
    editor = await start_session(lsp, settings_for(backend, model))
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": instruction})
    return editor, result["proposals"][0]


async def test_apply_all_hunks(lsp, backend):
    editor, p = await _propose(lsp, backend, "fix")
    result = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert result["applied"] is True and result["reason"] is None and result["version"] == 1
    [req] = editor.apply_requests
    [doc_edit] = req.edit.document_changes
    assert doc_edit.text_document.version == 1  # versioned for the proposal's document version
    await wait_for(lambda: editor.texts[URI] == FIXED)
    # once applied, the proposal is gone: no diagnostics, no lenses, and it cannot be applied twice
    await wait_for(lambda: URI in lsp.diagnostics and len(lsp.diagnostics[URI]) == 0)
    lenses = await lsp.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri=URI)))
    assert not lenses
    again = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert again["applied"] is False and again["reason"] in ("closed", "stale")
    assert len(editor.apply_requests) == 1


async def test_apply_some_hunks_then_the_rest(lsp, backend):
    editor, p = await _propose(lsp, backend)
    report = p["report"]
    n = len(report["hunks"])
    assert n >= 2 and p["flaggedHunks"]
    keep = [0]
    result = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"], "hunks": keep})
    assert result["applied"] is True and result["hunks"] == keep
    import msgspec

    from server.fidelity import TextEdit

    chosen = [msgspec.convert(e, TextEdit) for i in keep for e in report["hunks"][i]["edits"]]
    expected = apply_text_edits(SAMPLE, chosen)
    await wait_for(lambda: editor.texts[URI] == expected)
    assert editor.texts[URI] not in (SAMPLE,)

    # the rest of the proposal is carried over to the new version: its lenses come back
    async def lenses():
        return await lsp.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri=URI)))

    for _ in range(100):
        got = await lenses()
        if got:
            break
        import asyncio

        await asyncio.sleep(0.03)
    assert got and got[0].command.arguments[0]["id"] == p["id"]
    rest = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert rest["applied"] is True and rest["version"] == 2
    # everything applied: the buffer is what the model wrote
    await wait_for(lambda: "raise ValueError" in editor.texts[URI] and "for value in values" in editor.texts[URI])
    assert "return x*2" in editor.texts[URI] and "# only the large ones" not in editor.texts[URI]


async def test_stale_apply_is_refused_and_nothing_is_sent(lsp, backend):
    editor, p = await _propose(lsp, backend, "fix")
    editor.change(URI, [te(0, 0, 0, 0, "# a comment typed meanwhile\n")])
    result = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert result["applied"] is False and result["reason"] == "stale"
    assert "changed" in result["message"]
    assert editor.apply_requests == []
    assert editor.texts[URI].startswith("# a comment typed meanwhile\nimport math")
    # its diagnostics were withdrawn when the buffer changed
    await wait_for(lambda: URI in lsp.diagnostics and len(lsp.diagnostics[URI]) == 0)


async def test_client_refusing_a_versioned_edit(lsp, backend):
    editor, p = await _propose(lsp, backend, "fix")
    # the editor's own version moved on without the server hearing of it yet
    editor.versions[URI] = 7
    result = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert result["applied"] is False and result["reason"] == "rejected" and "version" in result["message"]
    assert editor.texts[URI] == SAMPLE


async def test_reject_withdraws_everything(lsp, backend):
    _editor, p = await _propose(lsp, backend)
    await wait_for(lambda: lsp.diagnostics.get(URI))
    result = await execute(lsp, "editFidelity.rejectProposal", {"id": p["id"]})
    assert result == {"rejected": True}
    await wait_for(lambda: URI in lsp.diagnostics and len(lsp.diagnostics[URI]) == 0)
    refused = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert refused["applied"] is False and refused["reason"] == "closed"


async def test_apply_refusals(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "prose", "fix"))
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix"})
    prose, fix = result["proposals"]
    assert prose["status"] == "error"
    r = await execute(lsp, "editFidelity.applyProposal", {"id": prose["id"]})
    assert r["applied"] is False and r["reason"] == "error_proposal"
    r = await execute(lsp, "editFidelity.applyProposal", {"id": "no-such-proposal"})
    assert r["applied"] is False and r["reason"] == "unknown"
    lsp.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=URI)))
    r = await execute(lsp, "editFidelity.applyProposal", {"id": fix["id"]})
    assert r["applied"] is False and r["reason"] == "closed"
    assert editor.apply_requests == []


async def test_buffer_changed_while_the_backend_worked(lsp, backend):
    import asyncio

    editor = await start_session(lsp, settings_for(backend, "slowfix"))
    editor.open(URI, SAMPLE)
    task = asyncio.ensure_future(
        execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix"})
    )
    await wait_for(lambda: backend.requests_for("slowfix") and backend.active)
    editor.change(URI, [te(0, 0, 0, 0, "#\n")])
    result = await task
    [p] = result["proposals"]
    assert p["status"] == "ok" and p["version"] == 1
    assert any("stale" in w for w in result["warnings"])
    refused = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert refused["reason"] == "stale" and editor.apply_requests == []
