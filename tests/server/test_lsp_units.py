"""The server acts on change units (issue 17): a fix and a rename on one line are two units, accepted
and reverted apart; the server's own edits are not observed; one proposal shown at a time, labelled."""

from __future__ import annotations

import pytest
from lsp_helpers import backend_entry, code_actions, execute, start_session, wait_for
from lsprotocol import types

from tools.doubles.scripted import ScriptedServer, Step, fenced

URI = "file:///tmp/units.py"

ORIGINAL = """import math


def average(numbers):
    # Average of the numbers.
    # The caller passes a non-empty list;
    # an empty one raises ZeroDivisionError.
    total = sum(numbers)
    return total / len(numbers) + 1


def unrelated(x):
    return x * 2
"""
# the fix (drop `+ 1`), a rename of `numbers` on the same line and two others, the comments removed
OVEREDIT = """import math


def average(values):
    total = sum(values)
    return total / len(values)


def unrelated(x):
    return x * 2
"""
FIX_ONLY = ORIGINAL.replace("return total / len(numbers) + 1", "return total / len(numbers)")
INSTRUCTION = "fix the off-by-one in average"
# the fix needs a new helper at the top of the file; an unused import is inserted at the same point
WITH_HELPER = "def _count(xs):\n    return len(xs)\n\n\n" + FIX_ONLY.replace("len(numbers)", "_count(numbers)")
HELPER_AND_IMPORT = "import functools\n" + WITH_HELPER


@pytest.fixture(scope="module")
def scripted():
    with ScriptedServer(
        {
            "over": [Step(content=lambda r: fenced(OVEREDIT))],
            "fixer": [Step(content=lambda r: fenced(FIX_ONLY))],
            "helper": [Step(content=lambda r: fenced(HELPER_AND_IMPORT))],
        }
    ) as srv:
        yield srv


def _settings(srv, *names, large=2):
    return {
        "backends": [backend_entry(srv, n) for n in names],
        "thresholds": {"debounceMs": 50, "largeChangeLines": large},
    }


async def _lenses(lsp, uri=URI):
    return await lsp.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri=uri)))


def _ours(lsp, uri=URI):
    return [d for d in lsp.diagnostics.get(uri, ()) if d.source == "edit-fidelity"]


async def test_accept_minimal_keeps_the_fix_without_the_rename_on_its_line(lsp, scripted):
    editor = await start_session(lsp, _settings(scripted, "over"))
    editor.open(URI, ORIGINAL)
    [p] = (await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": INSTRUCTION}))[
        "proposals"
    ]
    hunks = p["report"]["hunks"]
    kinds = [h["kinds"] for h in hunks]
    rename = next(i for i, h in enumerate(hunks) if "rename" in h["kinds"])
    fix = next(i for i, h in enumerate(hunks) if h["kinds"] == ["logic"])
    assert len(hunks[rename]["edits"]) == 3, kinds  # one unit over every occurrence of `numbers`
    assert hunks[fix]["startLine"] == hunks[rename]["endLine"] == 9  # the same line
    assert rename in p["flaggedHunks"] and fix not in p["flaggedHunks"]
    # diagnostics: one per unit, each on its own columns (the fix's is the `+ 1` it drops)
    diags = await wait_for(lambda: len(_ours(lsp)) == len(hunks) and _ours(lsp))
    fix_diag = next(d for d in diags if d.data["hunk"] == fix)
    assert (fix_diag.range.start.line, fix_diag.range.end.line) == (8, 8)
    assert ORIGINAL.splitlines()[8][fix_diag.range.start.character : fix_diag.range.end.character] == " + 1"
    # the lens "Accept minimal" keeps only the units not flagged: the fix, not the rename on its line
    minimal = next(lens for lens in await _lenses(lsp) if lens.command.title.startswith("Accept minimal"))
    assert minimal.command.arguments[0]["hunks"] == [i for i in range(len(hunks)) if i not in p["flaggedHunks"]]
    result = await execute(lsp, minimal.command.command, minimal.command.arguments[0])
    assert result["applied"] is True
    await wait_for(lambda: editor.texts[URI] == FIX_ONLY)


async def test_accept_minimal_drops_an_import_inserted_where_the_fix_inserts_a_helper(lsp, scripted):
    editor = await start_session(lsp, _settings(scripted, "helper"))
    editor.open(URI, ORIGINAL)
    [p] = (await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": INSTRUCTION}))[
        "proposals"
    ]
    hunks = p["report"]["hunks"]
    imports = [i for i, h in enumerate(hunks) if "import_change" in h["kinds"]]
    assert len(imports) == 1 and imports[0] in p["flaggedHunks"], [h["kinds"] for h in hunks]
    assert [e["newText"] for e in hunks[imports[0]]["edits"]] == ["import functools\n"]  # the import alone
    minimal = next(lens for lens in await _lenses(lsp) if lens.command.title.startswith("Accept minimal"))
    result = await execute(lsp, minimal.command.command, minimal.command.arguments[0])
    assert result["applied"] is True
    await wait_for(lambda: editor.texts[URI] == WITH_HELPER)


async def test_revert_the_rename_keeps_the_fix_and_is_not_observed(lsp, scripted):
    editor = await start_session(lsp, _settings(scripted, "over"))
    editor.open(URI, ORIGINAL)
    # an assistant's change: the fix with the rename and the comments removed (a large change)
    editor.replace_all(URI, OVEREDIT)
    diags = await wait_for(lambda: [d for d in _ours(lsp) if "[observed change]" in d.message])
    assert any("renamed `numbers` to `values`" in d.message for d in diags)
    rename_diag = next(d for d in diags if "renamed" in d.message)
    # revert this unit (a code action running revertHunks): all three occurrences, nothing else
    actions = await code_actions(lsp, URI, rename_diag.range, [rename_diag])
    revert = next(a for a in actions if a["title"].startswith("Revert this hunk: renamed"))
    result = await execute(lsp, revert["command"]["command"], revert["command"]["arguments"][0])
    assert result["applied"] is True
    expected = OVEREDIT.replace("values", "numbers")
    assert editor.texts[URI] == expected and "return total / len(numbers)\n" in expected
    # measured again against the same baseline: the comments are still flagged, the rename is gone,
    # and the revert itself (numbers back) is not an observed change
    await wait_for(lambda: (d := [x.message for x in _ours(lsp)]) and not any("renamed" in m for m in d))
    messages = [d.message for d in _ours(lsp)]
    assert any("removes 3 comments" in m and "[observed change]" in m for m in messages), messages
    # revert the rest of the flagged units: the comments come back (a large edit), the fix stays
    result = await execute(lsp, "editFidelity.revertHunks", {"uri": URI})
    assert result["applied"] is True
    assert editor.texts[URI] == FIX_ONLY
    # only the fix is left: requested-looking, so no squiggle; nothing flags the server's revert
    await wait_for(lambda: URI in lsp.diagnostics and not _ours(lsp))
    check = await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": {"text": ORIGINAL}})
    assert [h["kinds"] for h in check["report"]["hunks"]] == [["logic"]] and check["flaggedHunks"] == []


async def test_revert_to_head_text_is_not_flagged(lsp, scripted):
    """checkChange against a baseline, revert every flagged unit: the buffer is the baseline again and
    nothing is flagged (the revert, a large edit, used to be observed as "renamed `values` to ...")."""
    editor = await start_session(lsp, _settings(scripted, "over"))
    editor.open(URI, OVEREDIT.replace("return total / len(values)", "return total / len(values) + 1"))
    result = await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": {"text": ORIGINAL}})
    assert len(result["flaggedHunks"]) == len(result["report"]["hunks"]) == 2  # rename, comments
    await wait_for(lambda: [d for d in _ours(lsp) if "[vs baseline]" in d.message])
    reverted = await execute(lsp, "editFidelity.revertHunks", {"uri": URI})
    assert reverted["applied"] is True and editor.texts[URI] == ORIGINAL
    await wait_for(lambda: URI in lsp.diagnostics and not _ours(lsp))
    # and it stays so: a small edit later is measured against the same baseline, not the pre-revert text
    editor.change(
        URI, [types.TextEdit(range=types.Range(types.Position(12, 11), types.Position(12, 12)), new_text="3")]
    )
    again = await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": {"text": ORIGINAL}})
    assert len(again["report"]["hunks"]) == 1 and again["flaggedHunks"] == []


async def test_an_applied_proposal_is_not_observed(lsp, scripted):
    """Accepting a large proposal is the server's own edit: a later assistant change is measured
    against the text the accept left, so only the later change shows."""
    editor = await start_session(lsp, _settings(scripted, "over"))
    editor.open(URI, ORIGINAL)
    [p] = (await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": INSTRUCTION}))[
        "proposals"
    ]
    assert (await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]}))["applied"] is True
    await wait_for(lambda: editor.texts[URI] == OVEREDIT)
    # an assistant then reformats `unrelated` (a large change of its own)
    later = OVEREDIT.replace("def unrelated(x):\n    return x * 2\n", "def unrelated(x):\n\n\n    return (x * 2)\n")
    editor.replace_all(URI, later)
    diags = await wait_for(lambda: [d for d in _ours(lsp) if "[observed change]" in d.message])
    assert all(d.range.start.line >= 8 for d in diags), [(d.range, d.message) for d in diags]
    assert not any("renamed" in d.message or "comment" in d.message for d in diags)


async def test_samples_are_shown_one_at_a_time_labelled_and_switchable(lsp, scripted):
    editor = await start_session(lsp, _settings(scripted, "over"))
    editor.open(URI, ORIGINAL)
    props = (
        await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": INSTRUCTION, "n": 2})
    )["proposals"]
    first, second = props
    n_units = len(first["report"]["hunks"])
    # one proposal's diagnostics, not both: no duplicates, labelled with the backend and the sample
    diags = await wait_for(lambda: len(_ours(lsp)) == n_units and _ours(lsp))
    assert {d.data["id"] for d in diags} == {first["id"]}
    assert all(d.message.endswith("[over, sample 1 of 2]") for d in diags)
    assert len({(d.range.start.line, d.range.start.character, d.message) for d in diags}) == len(diags)
    # lenses: accept / minimal / reject for the shown one, and a lens that shows the other
    lenses = await _lenses(lsp)
    show = [lens for lens in lenses if lens.command.command == "editFidelity.selectProposal"]
    assert [lens.command.arguments[0]["id"] for lens in show] == [second["id"]]
    assert "over, sample 2 of 2" in show[0].command.title
    accept_ids = {
        lens.command.arguments[0]["id"] for lens in lenses if lens.command.command == "editFidelity.applyProposal"
    }
    assert accept_ids == {first["id"]}
    # hover says which one
    hover = await lsp.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=URI), diags[0].range.start)
    )
    assert "`over, sample 1 of 2`" in hover.contents.value and "proposal 1 of 2" in hover.contents.value
    # switch: the other sample's diagnostics replace the first's, and code actions address it
    assert (await execute(lsp, "editFidelity.selectProposal", show[0].command.arguments[0])) == {"active": second["id"]}
    diags = await wait_for(lambda: (d := _ours(lsp)) and {x.data["id"] for x in d} == {second["id"]} and d)
    assert len(diags) == len(second["report"]["hunks"])
    assert all(d.message.endswith("[over, sample 2 of 2]") for d in diags)
    actions = await code_actions(lsp, URI, diags[0].range, diags[:1])
    ids = {a["command"]["arguments"][0].get("id") for a in actions if a.get("command")}
    assert ids == {second["id"]} and all("[over, sample 2 of 2]" in a["title"] for a in actions if a.get("command"))
    with pytest.raises(Exception, match="no pending proposal 'nope'"):
        await execute(lsp, "editFidelity.selectProposal", {"uri": URI, "id": "nope"})


async def test_compare_backends_after_request_edit_shows_one_proposal(lsp, scripted):
    editor = await start_session(lsp, _settings(scripted, "over", "fixer"))
    editor.open(URI, ORIGINAL)
    [earlier] = (
        await execute(
            lsp,
            "editFidelity.requestEdit",
            {"uri": URI, "version": 1, "instruction": INSTRUCTION, "backends": ["over"]},
        )
    )["proposals"]
    rows = (await execute(lsp, "editFidelity.compareBackends", {"uri": URI, "version": 1, "instruction": INSTRUCTION}))[
        "rows"
    ]
    assert [r["backend"] for r in rows] == ["over", "fixer"]
    newest = rows[0]["proposalId"]
    # three pending proposals on this version; the diagnostics show the newest request's first, once
    diags = await wait_for(lambda: (d := _ours(lsp)) and {x.data["id"] for x in d} == {newest} and d)
    assert all(d.message.endswith("[over]") for d in diags)
    keys = [
        (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character, d.message) for d in diags
    ]
    assert len(set(keys)) == len(keys) == rows[0]["hunks"]
    show = [lens for lens in await _lenses(lsp) if lens.command.command == "editFidelity.selectProposal"]
    assert {lens.command.arguments[0]["id"] for lens in show} == {earlier["id"], rows[1]["proposalId"]}
    assert any("fixer" in lens.command.title for lens in show)
    fixer = next(lens for lens in show if "fixer" in lens.command.title)
    await execute(lsp, fixer.command.command, fixer.command.arguments[0])
    diags = await wait_for(lambda: (d := _ours(lsp)) and all(x.message.endswith("[fixer]") for x in d) and d)
    assert len(diags) == 1 and diags[0].data["id"] == rows[1]["proposalId"]
