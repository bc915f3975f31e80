"""Observation of large incoming changes and checkChange against snapshot / git / text."""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path

import pytest
from lsp_helpers import (
    SAMPLE,
    code_actions,
    execute,
    line_of,
    lsp_lines,
    settings_for,
    span_of,
    start_session,
    te,
    wait_for,
)
from lsprotocol import types

URI = "file:///tmp/observed.py"

# mean_above's lines in SAMPLE, [FUNC_START, FUNC_END): from its `def` to its `return`
FUNC_START = line_of(SAMPLE, "def mean_above(")
FUNC_END = line_of(SAMPLE, "    return total / count") + 1
FUNC_LINES = lsp_lines(SAMPLE)[FUNC_START:FUNC_END]
# What an assistant does to mean_above: renames, drops the comment, reformats.
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


async def counters(lsp) -> dict[str, int]:
    """The server's debug counters. didChange is handled synchronously, before the next message, so
    the answer counts every change sent before it."""
    stats = await execute(lsp, "editFidelity.serverStats", {})
    return {"observationsScheduled": 0, "observationsMeasured": 0, "actionEntriesBuilt": 0, **stats["counters"]}


def _replace_function() -> types.TextEdit:
    return te(FUNC_START, 0, FUNC_END, 0, ASSISTANT)


async def test_large_change_is_observed_and_revertible(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    editor.open(URI, SAMPLE)
    # typing is not observed: no observation is even scheduled for it
    end_of_import = span_of(SAMPLE, "import math").end
    editor.change(
        URI, [te(end_of_import.line, end_of_import.character, end_of_import.line, end_of_import.character, "  # math")]
    )
    assert (await counters(lsp))["observationsScheduled"] == 0
    editor.change(
        URI,
        [
            te(
                end_of_import.line,
                end_of_import.character,
                end_of_import.line,
                end_of_import.character + len("  # math"),
                "",
            )
        ],
    )
    assert (await counters(lsp))["observationsScheduled"] == 0
    # an assistant replaces the function in one change
    editor.change(URI, [_replace_function()])
    assert (await counters(lsp))["observationsScheduled"] == 1
    diags = await wait_for(lambda: _observed(lsp))
    assert all(d.source == "edit-fidelity" for d in diags)
    messages = " | ".join(d.message for d in diags)
    assert "renamed `v` to `value`" in messages and "not requested" in messages
    new_end = FUNC_START + len(lsp_lines(ASSISTANT))
    assert all(FUNC_START <= d.range.start.line < new_end for d in diags)  # on the new text
    # lenses: revert / dismiss
    lenses = await lsp.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri=URI)))
    assert any("revert" in lens.command.title for lens in lenses)
    # code actions: revert this hunk, revert all flagged (server commands: the server sends the edit)
    actions = await code_actions(lsp, URI, diags[0].range, diags[:1])
    titles = [a["title"] for a in actions]
    assert any(t.startswith("Revert this hunk") for t in titles)
    revert_all = next(a for a in actions if a["title"].startswith("Revert all"))
    built = (await counters(lsp))["actionEntriesBuilt"]
    again = await code_actions(lsp, URI, diags[0].range, diags[:1])  # served from the per-version cache
    assert again == actions and (await counters(lsp))["actionEntriesBuilt"] == built
    command = revert_all["command"]
    result = await execute(lsp, command["command"], command["arguments"][0])
    assert result["applied"] is True
    assert editor.texts[URI] == SAMPLE
    # the revert is the server's own edit: the observation ends, nothing is flagged on HEAD's text
    await wait_for(lambda: URI in lsp.diagnostics and not lsp.diagnostics[URI])


async def test_a_pending_observation_is_held_and_dismiss_lets_it_go(lsp, backend):
    settings = settings_for(backend, "fix")
    settings["thresholds"]["debounceMs"] = 60_000  # it waits for the rest of the test
    editor = await start_session(lsp, settings)
    editor.open(URI, SAMPLE)
    editor.change(URI, [_replace_function()])
    held = await counters(lsp)
    assert (held["observationsScheduled"], held["observationsMeasured"], held["backgroundTasks"]) == (1, 0, 1)
    assert (await execute(lsp, "editFidelity.dismiss", {"uri": URI})) == {"dismissed": True}
    deadline = asyncio.get_running_loop().time() + 5
    while (now := await counters(lsp))["backgroundTasks"] and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    assert (now["backgroundTasks"], now["observationsMeasured"]) == (0, 0)  # cancelled, never measured


async def test_revert_command_and_dismiss(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    editor.open(URI, SAMPLE)
    editor.change(URI, [_replace_function()])
    await wait_for(lambda: _observed(lsp))
    result = await execute(lsp, "editFidelity.revertHunks", {"uri": URI})
    assert result["applied"] is True and result["hunks"]
    assert editor.texts[URI] == SAMPLE
    # and dismissing hides the warnings of a new observation
    editor.change(URI, [_replace_function()])
    await wait_for(lambda: _observed(lsp))
    assert (await execute(lsp, "editFidelity.dismiss", {"uri": URI})) == {"dismissed": True}
    await wait_for(lambda: not _observed(lsp))


async def test_whole_document_replacement_is_observed(lsp, backend):
    settings = settings_for(backend, "fix")
    # the changed region (first to last differing line) is 5 lines
    settings["thresholds"]["largeChangeLines"] = 3
    editor = await start_session(lsp, settings, capabilities="neovim")
    editor.open(URI, SAMPLE)
    new_text = SAMPLE.replace("".join(FUNC_LINES), ASSISTANT)
    editor.replace_all(URI, new_text)
    diags = await wait_for(lambda: _observed(lsp))
    assert any("renamed `v` to `value`" in d.message for d in diags)


def _small_functions(numbers: range) -> str:
    return "".join(
        f"def func_{i}(items, limit={i}):\n"
        f'    """Filter case {i}."""\n'
        "    result = []\n"
        "    for item in items:\n"
        "        # keep the small ones\n"
        "        if item < limit:\n"
        f"            result.append(item * {i})\n"
        "    return result\n\n\n"
        for i in numbers
    )


def _big_file(n_funcs: int) -> str:
    return "import os\n\n\n" + _small_functions(range(n_funcs))


def _table_function(rows: int, uncommented: tuple[int, ...] = ()) -> str:
    """One long top-level function (a generated table): measuring it takes seconds, not milliseconds."""
    body = "".join(
        f"    rows.append(('case {k}', {k}, {k} * 2))" + ("" if k in uncommented else f"  # row {k}") + "\n"
        for k in range(rows)
    )
    return f"def table():\n    rows = []\n{body}    return rows\n\n\n"


def _observed_at(lsp, uri: str, version: int):
    """The observation's diagnostics when the editor holds them for `version`: after a keystroke the
    editor keeps showing the previous version's until the debounced re-measurement publishes."""
    diags = _observed(lsp, uri)
    return diags if diags and all(d.data["version"] == version for d in diags) else []


def _window(hover: types.Hover | None) -> tuple[int, int]:
    """The 1-based lines a windowed measurement covered, from the observation's hover."""
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    found = re.search(r"measured over lines (\d+)-(\d+)", hover.contents.value)
    assert found, hover.contents.value
    return int(found[1]), int(found[2])


async def _hover(lsp, uri: str, position: types.Position) -> types.Hover | None:
    return await lsp.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri=uri), position))


async def test_large_file_measured_per_function_without_blocking(lsp, backend):
    """While the observation of a large file is being measured, the server keeps answering.

    Shown without a clock: between the server's counters saying "measurement started"
    (`observationsMeasured` counts a run when it starts) and its result (the published diagnostics, the
    task's end), only a server whose event loop is free can answer anything. A server measuring on its
    loop answers before the run starts or after it has published, never in between. The measured block
    is a 1,500-line function, so the run lasts far longer than a request's round trip on any machine
    (a loaded one slows both alike)."""
    settings = settings_for(backend, "fix")
    settings["thresholds"]["largeFileLines"] = 500
    editor = await start_session(lsp, settings)
    uri = "file:///tmp/big.py"
    before = _table_function(1500)
    after = _table_function(1500, uncommented=(0, 1499))  # the assistant drops two comments
    text = _big_file(100) + before + _small_functions(range(100, 200))  # 3,500 lines
    editor.open(uri, text)
    start = line_of(text, "def table(")
    version = editor.change(uri, [te(start, 0, start + len(lsp_lines(before)), 0, after)])
    inside = types.Position(start + 1, 4)

    def measuring(stats: dict[str, int]) -> bool:
        return stats["observationsMeasured"] == 1 and stats["backgroundTasks"] == 1 and not _observed(lsp, uri)

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 300  # a safety net only: the verdicts below count answers, not seconds
    stats = await counters(lsp)
    while stats["observationsMeasured"] == 0 and loop.time() < deadline:  # the debounce
        stats = await counters(lsp)
    assert measuring(stats), f"no answer while the measurement ran: {stats}"
    answered = 0  # hovers answered with the run in progress before and after them
    while measuring(stats) and loop.time() < deadline:
        await _hover(lsp, uri, inside)
        stats = await counters(lsp)
        answered += measuring(stats)
        await asyncio.sleep(0.01)
    assert answered >= 1, stats
    # and it is the observation of this version, measured once, over the changed function only
    diags = await wait_for(lambda: _observed_at(lsp, uri, version), timeout=120)
    stats = await counters(lsp)
    assert (stats["observationsScheduled"], stats["observationsMeasured"], stats["backgroundTasks"]) == (1, 1, 0)
    assert len(diags) == 2 and all("removes 1 comment (not requested)" in d.message for d in diags)
    assert all(start <= d.range.start.line < start + len(lsp_lines(after)) for d in diags)
    assert _window(await _hover(lsp, uri, diags[0].range.start)) == (start + 1, start + len(lsp_lines(after)))


async def test_typing_after_a_large_change_is_observed_at_the_final_version(lsp, backend):
    """Each keystroke after an observed change measures it again (debounced); until that run publishes,
    the editor still shows the previous version's diagnostics, which no longer hover (their version
    is gone). So the verdict waits for the diagnostics of the version last typed, never for "some"."""
    settings = settings_for(backend, "fix")
    settings["thresholds"]["largeFileLines"] = 500
    editor = await start_session(lsp, settings)
    uri = "file:///tmp/big.py"
    text = _big_file(300)  # 3,000 lines
    editor.open(uri, text)
    lines = lsp_lines(text)
    start = line_of(text, "def func_150(")
    body = "".join(lines[start : start + 10])
    changed = body.replace("item", "element").replace("        # keep the small ones\n", "")
    changed = changed.replace(
        "    result = []\n", "    if items is None:\n        raise ValueError('items')\n    result = []\n"
    )
    version = editor.change(uri, [te(start, 0, start + 10, 0, changed)])
    await wait_for(lambda: _observed_at(lsp, uri, version), timeout=60)
    # keep typing in the next function (a character in, out again), hovering between keystrokes: from
    # the first keystroke on the editor holds an older version's diagnostics
    typed = span_of(editor.texts[uri], "Filter case 151.").start
    for k in range(10):
        if k % 2 == 0:
            editor.change(uri, [te(typed.line, typed.character, typed.line, typed.character, "#")])
        else:
            editor.change(uri, [te(typed.line, typed.character, typed.line, typed.character + 1, "")])
        await _hover(lsp, uri, types.Position(1, 0))
    final = editor.versions[uri]
    assert final == version + 10 and (await counters(lsp))["observationsScheduled"] == 11  # each keystroke
    diags = await wait_for(lambda: _observed_at(lsp, uri, final), timeout=60)
    assert all(start <= d.range.start.line <= start + 12 for d in diags)
    # func_150 alone (its new 11 lines): the typing left func_151 as it was
    assert _window(await _hover(lsp, uri, diags[0].range.start)) == (start + 1, start + len(lsp_lines(changed)))


async def test_check_change_snapshot_text_and_save(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    editor.open(URI, SAMPLE)
    # small edits, one by one: no observation, but checkChange sees them all
    body = span_of(SAMPLE, "return x * 2")
    editor.change(URI, [te(body.start.line, body.start.character, body.end.line, body.end.character, "return x + x")])
    comment = line_of(SAMPLE, "# only the large ones")
    editor.change(URI, [te(comment, 0, comment + 1, 0, "")])
    assert (await counters(lsp))["observationsScheduled"] == 0
    result = await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": "snapshot"})
    assert result["baseline"] == "snapshot" and result["version"] == 3
    assert not result["report"]["identical"] and len(result["report"]["hunks"]) == 2
    # the deleted comment line and the changed return (1-based original lines), in document order
    hunks = result["report"]["hunks"]
    assert [(h["startLine"], h["endLine"]) for h in hunks] == [
        (comment + 1, comment + 1),
        (body.start.line + 1, body.start.line + 1),
    ]
    assert hunks[0]["kinds"] == ["comment_removed"]
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


async def test_the_editor_and_the_server_count_lines_alike(lsp, backend):
    """A form feed (a page break in old Python files) or U+2028 ends no line in LSP: an edit below
    them lands at the same place in the test editor's copy as in the server's."""
    editor = await start_session(lsp, settings_for(backend, "fix"))
    text = "import math\n\x0c\ndef f(x):\n    return x  \x0c # page\n\ns = '\u2028'\ny = f(1)\n"
    editor.open(URI, text)
    target = span_of(text, "f(1)")
    assert target.start.line == 6  # str.splitlines would put it on line 9
    editor.change(URI, [te(target.start.line, target.start.character, target.end.line, target.end.character, "f(2)")])
    assert editor.texts[URI] == text.replace("f(1)", "f(2)")
    result = await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": {"text": editor.texts[URI]}})
    assert result["report"]["identical"]


async def test_check_change_against_git_head(lsp, backend, tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
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
    lsp.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text="# notes\n")
        )
    )
    editor.texts[uri], editor.versions[uri] = "# notes\n", 1
    editor.change(uri, [te(1, 0, 1, 0, "- item\n" * 30)])
    # the same change to a Python file is observed (test_large_change_is_observed_and_revertible);
    # to Markdown, no observation is scheduled at all
    assert (await counters(lsp))["observationsScheduled"] == 0
    assert not lsp.diagnostics.get(uri)
