"""Observation of large incoming changes and checkChange against snapshot / git / text."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import pytest
from lsp_helpers import (
    SAMPLE,
    code_actions,
    execute,
    settings_for,
    start_session,
    te,
    wait_for,
)
from lsprotocol import types

URI = "file:///tmp/observed.py"

# What an assistant does to mean_above (lines 3..12): renames, drops the comment, reformats.
FUNC_LINES = SAMPLE.splitlines(keepends=True)[3:13]
ASSISTANT = (
    "def mean_above(values, limit):\n"
    '    """Mean of the values above limit."""\n'
    "    total = 0\n"
    "    count = 0\n"
    "    for value in values:\n"
    "        if value < limit:\n"
    "            total += value\n"
    "            count += 1\n"
    "    return total / count if count else 0.0\n"
    "\n"
)


def _observed(lsp, uri=URI):
    return [d for d in lsp.diagnostics.get(uri, ()) if "[observed change]" in d.message]


async def test_large_change_is_observed_and_revertible(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    editor.open(URI, SAMPLE)
    # typing is not observed
    editor.change(URI, [te(0, 11, 0, 11, "  # math")])
    await asyncio.sleep(0.3)
    assert not _observed(lsp)
    editor.change(URI, [te(0, 11, 0, 19, "")])
    # an assistant replaces the function in one change
    editor.change(URI, [te(3, 0, 13, 0, ASSISTANT)])
    diags = await wait_for(lambda: _observed(lsp))
    assert all(d.source == "edit-fidelity" for d in diags)
    messages = " | ".join(d.message for d in diags)
    assert "renamed `v` to `value`" in messages and "not requested" in messages
    assert all(3 <= d.range.start.line <= 12 for d in diags)  # on the new text
    # lenses: revert / dismiss
    lenses = await lsp.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri=URI)))
    assert any("revert" in lens.command.title for lens in lenses)
    # code actions: revert this hunk, revert all flagged (server commands: the server sends the edit)
    actions = await code_actions(lsp, URI, diags[0].range, diags[:1])
    titles = [a["title"] for a in actions]
    assert any(t.startswith("Revert this hunk") for t in titles)
    revert_all = next(a for a in actions if a["title"].startswith("Revert all"))
    started = time.perf_counter()
    again = await code_actions(lsp, URI, diags[0].range, diags[:1])  # served from the per-version cache
    assert again == actions and time.perf_counter() - started < 2.0
    command = revert_all["command"]
    result = await execute(lsp, command["command"], command["arguments"][0])
    assert result["applied"] is True
    assert editor.texts[URI] == SAMPLE
    # the revert is the server's own edit: the observation ends, nothing is flagged on HEAD's text
    await wait_for(lambda: URI in lsp.diagnostics and not lsp.diagnostics[URI])


async def test_revert_command_and_dismiss(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    editor.open(URI, SAMPLE)
    editor.change(URI, [te(3, 0, 13, 0, ASSISTANT)])
    await wait_for(lambda: _observed(lsp))
    result = await execute(lsp, "editFidelity.revertHunks", {"uri": URI})
    assert result["applied"] is True and result["hunks"]
    assert editor.texts[URI] == SAMPLE
    # and dismissing hides the warnings of a new observation
    editor.change(URI, [te(3, 0, 13, 0, ASSISTANT)])
    await wait_for(lambda: _observed(lsp))
    assert (await execute(lsp, "editFidelity.dismiss", {"uri": URI})) == {"dismissed": True}
    await wait_for(lambda: not _observed(lsp))


async def test_whole_document_replacement_is_observed(lsp, backend):
    settings = settings_for(backend, "fix")
    settings["thresholds"]["largeChangeLines"] = 3  # the changed region (first to last differing line) is 5 lines
    editor = await start_session(lsp, settings, capabilities="neovim")
    editor.open(URI, SAMPLE)
    new_text = SAMPLE.replace("".join(FUNC_LINES), ASSISTANT)
    editor.replace_all(URI, new_text)
    diags = await wait_for(lambda: _observed(lsp))
    assert any("renamed `v` to `value`" in d.message for d in diags)


def _big_file(n_funcs: int) -> str:
    parts = ["import os\n\n\n"]
    for i in range(n_funcs):
        parts.append(
            f"def func_{i}(items, limit={i}):\n"
            f'    """Filter case {i}."""\n'
            "    result = []\n"
            "    for item in items:\n"
            "        # keep the small ones\n"
            "        if item < limit:\n"
            f"            result.append(item * {i})\n"
            "    return result\n\n\n"
        )
    return "".join(parts)


async def test_large_file_measured_per_function_without_blocking(lsp, backend):
    settings = settings_for(backend, "fix")
    settings["thresholds"]["largeFileLines"] = 500
    editor = await start_session(lsp, settings)
    uri = "file:///tmp/big.py"
    text = _big_file(300)  # 3,000 lines
    editor.open(uri, text)
    lines = text.splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("def func_150("))
    body = "".join(lines[start : start + 10])
    changed = body.replace("item", "element").replace("        # keep the small ones\n", "")
    changed = changed.replace("    result = []\n", "    if items is None:\n        raise ValueError('items')\n    result = []\n")
    editor.change(uri, [te(start, 0, start + 10, 0, changed)])
    # keep typing elsewhere while it is measured: every keystroke answered at once
    worst = 0.0
    for k in range(10):
        editor.change(uri, [te(0, 0, 0, 0, "#" if k % 2 == 0 else "")]) if k % 2 == 0 else editor.change(uri, [te(0, 0, 0, 1, "")])
        t0 = time.perf_counter()
        await lsp.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(1, 0)))
        worst = max(worst, time.perf_counter() - t0)
    assert worst < 1.0  # generous for loaded CI machines; a blocked loop shows up as seconds
    diags = await wait_for(lambda: _observed(lsp, uri), timeout=10)
    assert all(start <= d.range.start.line <= start + 12 for d in diags)
    hover = await lsp.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=uri), diags[0].range.start))
    assert hover is not None and "measured over lines" in hover.contents.value


async def test_check_change_snapshot_text_and_save(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    editor.open(URI, SAMPLE)
    # small edits, one by one: no observation, but checkChange sees them all
    editor.change(URI, [te(16, 4, 16, 16, "return x + x")])
    editor.change(URI, [te(8, 0, 9, 0, "")])
    result = await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": "snapshot"})
    assert result["baseline"] == "snapshot" and result["version"] == 3
    assert not result["report"]["identical"] and len(result["report"]["hunks"]) == 2
    kinds = {k for h in result["report"]["hunks"] for k in h["kinds"]}
    assert "comment_removed" in kinds or "comment_only" in kinds
    diags = await wait_for(lambda: [d for d in lsp.diagnostics.get(URI, ()) if "[vs snapshot]" in d.message])
    assert diags
    # against given text
    result = await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": {"text": editor.texts[URI]}})
    assert result["report"]["identical"] and result["report"]["hunks"] == []
    # saving moves the snapshot
    lsp.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=URI)))
    result = await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": "snapshot"})
    assert result["report"]["identical"]
    with pytest.raises(Exception) as info:
        await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": "snapshot", "version": 1})
    assert getattr(info.value, "code", None) == -32801


async def test_check_change_against_git_head(lsp, backend, tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    (repo / "pkg").mkdir()
    (repo / "pkg" / "mod.py").write_text(SAMPLE)
    def git_init():
        for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "init"]):
            subprocess.run(cmd, cwd=repo, env=env, check=True)

    await asyncio.to_thread(git_init)
    editor = await start_session(lsp, settings_for(backend, "fix"))
    uri = (repo / "pkg" / "mod.py").as_uri()
    editor.open(uri, SAMPLE.replace("return x * 2", "return x * 3"))
    result = await execute(lsp, "editFidelity.checkChange", {"uri": uri, "baseline": "git"})
    assert result["baseline"] == "git" and len(result["report"]["hunks"]) == 1
    # a file git does not know, a folder outside any repository
    (repo / "pkg" / "new.py").write_text("x = 1\n")
    editor.open((repo / "pkg" / "new.py").as_uri(), "x = 2\n")
    with pytest.raises(Exception) as info:
        await execute(lsp, "editFidelity.checkChange", {"uri": (repo / "pkg" / "new.py").as_uri(), "baseline": "git"})
    assert getattr(info.value, "code", None) == -32803 and "no version in git HEAD" in str(info.value)
    outside = tmp_path / "loose.py"
    outside.write_text("x = 1\n")
    editor.open(outside.as_uri(), "x = 2\n")
    with pytest.raises(Exception) as info:
        await execute(lsp, "editFidelity.checkChange", {"uri": outside.as_uri(), "baseline": "git"})
    assert "not in a git repository" in str(info.value)
    editor.open("untitled:Untitled-1", "x = 1\n")
    with pytest.raises(Exception) as info:
        await execute(lsp, "editFidelity.checkChange", {"uri": "untitled:Untitled-1", "baseline": "git"})
    assert "file: URI" in str(info.value)


async def test_other_languages_are_not_observed(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    uri = "file:///tmp/notes.md"
    lsp.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text="# notes\n")))
    editor.texts[uri], editor.versions[uri] = "# notes\n", 1
    editor.change(uri, [te(1, 0, 1, 0, "- item\n" * 30)])
    await asyncio.sleep(0.4)
    assert not lsp.diagnostics.get(uri)
