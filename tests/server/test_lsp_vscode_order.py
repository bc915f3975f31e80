"""What the real VS Code does differently from the test editor of lsp_helpers, seen in code-server
(scripts/test-vscode-real): it answers `workspace/applyEdit` before it sends the didChange of that
edit, and an edit another extension applies to the whole file reaches the server as many small
content changes in one didChange."""

from __future__ import annotations

import re

from lsp_helpers import SAMPLE, Editor, execute, lsp_lines, settings_for, te, wait_for
from lsprotocol import types
from pytest_lsp import client_capabilities

URI = "file:///tmp/vscode_order.py"


async def _vscode_session(lsp, options) -> tuple[Editor, list[types.ApplyWorkspaceEditParams]]:
    """An editor that, like VS Code, applies a server's edit and answers at once, and reports the
    change only later (the test sends it with `Editor.change`, after the command returned)."""
    editor = Editor(lsp)
    deferred: list[types.ApplyWorkspaceEditParams] = []

    @lsp.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams):
        for change in params.edit.document_changes or []:
            if change.text_document.version != editor.versions.get(change.text_document.uri):
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="version mismatch")
        deferred.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    @lsp.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(params):
        return None

    await lsp.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options=options,
            root_uri="file:///tmp",
        )
    )
    return editor, deferred


def _report_deferred(editor: Editor, deferred: list[types.ApplyWorkspaceEditParams]) -> None:
    for params in deferred:
        for change in params.edit.document_changes or []:
            editor.change(change.text_document.uri, list(change.edits))
    deferred.clear()


async def test_accept_clears_the_proposal_diagnostics_when_the_answer_comes_before_didchange(lsp, backend):
    editor, deferred = await _vscode_session(lsp, settings_for(backend, "overedit"))
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    [proposal] = result["proposals"]
    assert proposal["flaggedHunks"]
    await wait_for(lambda: lsp.diagnostics.get(URI))  # the flagged hunks are on screen
    applied = await execute(lsp, "editFidelity.applyProposal", {"id": proposal["id"]})
    assert applied["applied"] is True and len(deferred) == 1
    _report_deferred(editor, deferred)  # the didChange, after the command's answer
    assert "for value in values" in editor.texts[URI]
    # the accepted proposal's diagnostics go (they were computed for the text before the edit)
    await wait_for(lambda: URI in lsp.diagnostics and len(lsp.diagnostics[URI]) == 0, timeout=15)
    lenses = await lsp.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri=URI)))
    assert not lenses
    # and the server's own edit is not observed as an incoming change
    stats = await execute(lsp, "editFidelity.serverStats", {})
    assert stats["counters"].get("observationsScheduled", 0) == 0


async def test_accepting_some_hunks_and_dropping_the_rest_clears_the_diagnostics(lsp, backend):
    editor, deferred = await _vscode_session(lsp, settings_for(backend, "overedit"))
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    [proposal] = result["proposals"]
    await wait_for(lambda: lsp.diagnostics.get(URI))
    needed = [i for i in range(len(proposal["report"]["hunks"])) if i not in proposal["flaggedHunks"]]
    assert needed
    applied = await execute(
        lsp, "editFidelity.applyProposal", {"id": proposal["id"], "hunks": needed, "rest": "reject"}
    )
    assert applied["applied"] is True
    _report_deferred(editor, deferred)
    assert "if v > limit:" in editor.texts[URI] and "# only the large ones" in editor.texts[URI]
    await wait_for(lambda: URI in lsp.diagnostics and len(lsp.diagnostics[URI]) == 0, timeout=15)


async def test_the_accept_minimal_lens_leaves_no_diagnostics_of_the_dropped_rest(lsp, backend):
    """The lens "Accept minimal" takes the requested units only: the unrequested rest is dropped with it, not
    kept pending with its "(not requested)" warnings on the buffer."""
    editor, deferred = await _vscode_session(lsp, settings_for(backend, "overedit"))
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    [proposal] = result["proposals"]
    await wait_for(lambda: lsp.diagnostics.get(URI))
    lenses = await lsp.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri=URI)))
    minimal = next(lens.command for lens in lenses if lens.command and lens.command.title.startswith("Accept minimal"))
    assert minimal.arguments[0]["rest"] == "reject"
    applied = await execute(lsp, minimal.command, minimal.arguments[0])
    assert applied["applied"] is True and applied["hunks"] == minimal.arguments[0]["hunks"]
    _report_deferred(editor, deferred)
    assert "if v > limit:" in editor.texts[URI] and "# only the large ones" in editor.texts[URI]
    await wait_for(lambda: URI in lsp.diagnostics and len(lsp.diagnostics[URI]) == 0, timeout=15)
    lenses = await lsp.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri=URI)))
    assert not lenses
    again = await execute(lsp, "editFidelity.applyProposal", {"id": proposal["id"]})
    assert again["applied"] is False and again["reason"] in ("closed", "stale")


def _renamed(text: str) -> str:
    """An assistant's whole-file rewrite that renames on many lines and changes each line in place."""
    text = re.sub(r"\bv\b", "value", text)
    text = re.sub(r"\btotal\b", "acc", text)
    text = re.sub(r"\bcount\b", "n_items", text)
    return re.sub(r"\bx\b", "number", text)


async def test_a_whole_file_edit_in_many_small_content_changes_is_observed(lsp, backend):
    settings = settings_for(backend, "fix")  # largeChangeLines 8
    editor, _ = await _vscode_session(lsp, settings)
    editor.open(URI, SAMPLE)
    old, new = lsp_lines(SAMPLE), lsp_lines(_renamed(SAMPLE))
    assert len(old) == len(new)
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert len(changed) > settings["thresholds"]["largeChangeLines"]
    # one content change per line, each within its line (as VS Code reports a whole-file replacement)
    edits = [te(i, 0, i, len(old[i].rstrip("\n")), new[i].rstrip("\n")) for i in changed]
    editor.change(URI, edits)
    assert editor.texts[URI] == _renamed(SAMPLE)
    stats = await execute(lsp, "editFidelity.serverStats", {})  # didChange is handled before this answer
    assert stats["counters"].get("observationsScheduled", 0) == 1
    diags = await wait_for(lambda: [d for d in lsp.diagnostics.get(URI, ()) if "[observed change]" in d.message])
    assert any("renamed" in d.message for d in diags)


async def test_small_edits_in_one_didchange_are_still_typing(lsp, backend):
    """A multi-cursor edit of a few lines is not an assistant's edit: only lines that really differ count."""
    settings = settings_for(backend, "fix")
    editor, _ = await _vscode_session(lsp, settings)
    editor.open(URI, SAMPLE)
    old = lsp_lines(SAMPLE)
    first, last = 0, len(old) - 1  # far apart: the first line and the last function's body
    assert old[first].startswith("import math") and "return x * 2" in old[last]
    editor.change(URI, [te(first, 0, first, 0, "# "), te(last, 4, last, 4, "# ")])
    stats = await execute(lsp, "editFidelity.serverStats", {})
    assert stats["counters"].get("observationsScheduled", 0) == 0
