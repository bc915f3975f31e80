"""requestEdit / compareBackends end to end, against the scripted backend."""

from __future__ import annotations

import asyncio
import time

import msgspec
import pytest
from lsp_helpers import (
    API_KEY,
    FIXED,
    SAMPLE,
    backend_entry,
    code_actions,
    execute,
    line_of,
    settings_for,
    start_session,
    wait_for,
)
from lsprotocol import types

from server.fidelity import measure
from tools.doubles.scripted import Step

URI = "file:///tmp/sample.py"


async def test_minimal_fix_proposal(lsp, backend):
    editor = await start_session(lsp, {"editFidelity": settings_for(backend, "fix")})
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    [p] = result["proposals"]
    assert p["status"] == "ok" and p["backend"] == "fix" and p["error"] is None
    # the core's report, encoded: what `check --format json` prints
    assert p["report"] == msgspec.to_builtins(measure(SAMPLE, FIXED))
    assert (
        p["report"]["hunks"][0]["startLine"]
        == p["report"]["hunks"][0]["startLine"]
        == line_of(SAMPLE, "if v < limit:") + 1
    )
    assert p["edits"] == p["report"]["edits"] and len(p["edits"]) == 1
    assert p["flaggedHunks"] == []
    assert p["latencyMs"] > 0 and p["version"] == 1 and p["style"] == "minimal"
    assert p["usage"] == {"promptTokens": 100, "completionTokens": 20}
    # the key went to the backend from the environment and nowhere else
    req = backend.requests_for("fix")[-1]
    assert req.headers["authorization"] == f"Bearer {API_KEY}"
    assert API_KEY not in repr(result)
    # the minimal style carries the paper's keep-the-original-code instruction
    assert "Keep as much of the original code as possible" in req.body["messages"][-1]["content"]
    # a requested change is a hint, not a warning
    await wait_for(lambda: lsp.diagnostics.get(URI))
    [diag] = lsp.diagnostics[URI]
    assert diag.source == "edit-fidelity" and diag.severity == types.DiagnosticSeverity.Hint
    assert diag.range.start.line == line_of(SAMPLE, "if v < limit:")  # the fixed comparison


async def test_the_endpoints_cached_prompt_tokens_are_reported(lsp, backend):
    """vLLM and OpenAI say how much of the prompt came from their prefix cache: the proposal's usage says it too."""
    editor = await start_session(lsp, {"editFidelity": settings_for(backend, "cached")})
    backend.scripts["cached"] = [Step(content="```python\n" + FIXED + "```", cached_tokens=64)]
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    assert result["proposals"][0]["usage"] == {"promptTokens": 100, "completionTokens": 20, "cachedTokens": 64}


async def test_progress_reported(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix", "slowfix"))
    editor.open(URI, SAMPLE)
    await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    [(_token, reports)] = [(t, r) for t, r in lsp.progress_reports.items() if r]
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end" and kinds.count("report") == 2
    assert reports[0].cancellable is True
    assert any("slowfix: ok" in (r.message or "") for r in reports)


async def test_over_edit_flagged_with_reasons(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "overedit"))
    editor.open(URI, SAMPLE)
    result = await execute(
        lsp,
        "editFidelity.requestEdit",
        {"uri": URI, "version": 1, "instruction": "fix the comparison bug", "style": "generic"},
    )
    [p] = result["proposals"]
    assert p["status"] == "ok" and p["style"] == "generic"
    req = backend.requests_for("overedit")[-1]
    assert "Keep as much of the original code" not in req.body["messages"][-1]["content"]
    kinds = {k for h in p["report"]["hunks"] for k in h["kinds"]}
    assert {"rename", "defensive", "comment_removed"} <= kinds
    assert p["flaggedHunks"], p["hunkMessages"]
    messages = " | ".join(p["hunkMessages"])
    assert "renamed `v` to `value`" in messages and "(not requested)" in messages
    diags = await wait_for(lambda: lsp.diagnostics.get(URI))
    warnings = [d for d in diags if d.severity in (types.DiagnosticSeverity.Warning, types.DiagnosticSeverity.Error)]
    assert warnings and all(d.source == "edit-fidelity" for d in diags)
    assert any("not requested" in d.message and "[overedit]" in d.message for d in warnings)
    # hover on a flagged line shows the numbers
    line = warnings[0].range.start.line
    hover = await lsp.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line, 0))
    )
    assert hover is not None and "no_comments" in hover.contents.value and "cognitive" in hover.contents.value
    assert "this hunk" in hover.contents.value
    # code lenses: accept, accept minimal, reject
    lenses = await lsp.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri=URI)))
    titles = [lens.command.title for lens in lenses]
    assert any(t.startswith("✓ Accept") for t in titles) and "✗ Reject" in titles
    assert all(lens.command.arguments[0]["id"] == p["id"] for lens in lenses)
    # code actions for the flagged hunk
    actions = await code_actions(lsp, URI, warnings[0].range, warnings[:1])
    titles = [a["title"] for a in actions]
    assert any(t.startswith("[overedit] Accept this hunk") for t in titles)
    assert any("Reject this proposal" in t for t in titles)
    accept = next(a for a in actions if "Accept this hunk" in a["title"])
    assert accept["diagnostics"] and accept["command"]["arguments"][0]["hunks"] == [warnings[0].data["hunk"]]


async def test_instruction_that_asks_for_it_is_not_flagged(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "overedit"))
    editor.open(URI, SAMPLE)
    result = await execute(
        lsp,
        "editFidelity.requestEdit",
        {
            "uri": URI,
            "version": 1,
            "instruction": "refactor: rename v to value, validate input, remove the comment, reformat",
        },
    )
    [p] = result["proposals"]
    assert p["status"] == "ok" and p["flaggedHunks"] == []


async def test_selection_edit_and_changes_outside_it(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix", "wholefile"))
    editor.open(URI, SAMPLE)
    # the loop of mean_above: from `for` up to (not into) its `return` line
    first, end = line_of(SAMPLE, "    for v in values:"), line_of(SAMPLE, "    return total / count")
    selection = {"start": {"line": first, "character": 0}, "end": {"line": end, "character": 0}}
    result = await execute(
        lsp,
        "editFidelity.requestEdit",
        {"uri": URI, "version": 1, "range": selection, "instruction": "fix the comparison"},
    )
    fix, whole = result["proposals"]
    # the target in 1-based lines: the selection ends at the start of `end`, which it leaves out
    target = range(first + 1, end + 1)
    assert fix["status"] == "ok" and fix["report"] == msgspec.to_builtins(measure(SAMPLE, FIXED, target=target))
    sent = backend.requests_for("fix")[-1].body["messages"][-1]["content"]
    assert "# >>> SELECTION START" in sent
    # the model answered with the whole file and changed `unrelated` too: outside the selection
    assert whole["status"] == "ok"
    outside = [h for h in whole["report"]["hunks"] if "outside_target" in h["kinds"]]
    assert outside and whole["flaggedHunks"]
    assert any(f"outside the selected lines {target[0]}-{target[-1]}" in m for m in whole["hunkMessages"])


async def test_compare_backends_rows(lsp, backend):
    names = ["fix", "overedit", "garbage", "e500", "r429", "prose", "lazy"]
    editor = await start_session(lsp, settings_for(backend, *names))
    editor.open(URI, SAMPLE)
    before_500 = len(backend.requests_for("e500"))
    started = time.perf_counter()
    result = await execute(
        lsp, "editFidelity.compareBackends", {"uri": URI, "version": 1, "instruction": "fix the bug"}
    )
    rows = {r["backend"]: r for r in result["rows"]}
    assert list(rows) == names
    expected_keys = {
        "backend",
        "status",
        "latencyMs",
        "tokens",
        "distance",
        "excess",
        "complexityDelta",
        "flaggedHunks",
        "wellFormed",
        "syntaxError",
        "lazyPlaceholders",
        "proposalId",
    }
    assert all(expected_keys <= set(r) for r in rows.values())
    assert rows["fix"]["status"] == "ok" and rows["fix"]["flaggedHunks"] == 0 and rows["fix"]["wellFormed"]
    assert rows["fix"]["tokens"] == 120 and 0 < rows["fix"]["distance"] < rows["overedit"]["distance"]
    assert rows["overedit"]["flaggedHunks"] > 0 and rows["overedit"]["complexityDelta"] >= 1
    assert rows["garbage"]["status"] == "error" and "not a chat completion" in rows["garbage"]["error"]
    assert rows["e500"]["status"] == "error" and "HTTP 500" in rows["e500"]["error"]
    assert len(backend.requests_for("e500")) - before_500 == 3  # first try + 2 retries
    assert rows["r429"]["status"] == "ok" and rows["r429"]["latencyMs"] >= 400  # waited for Retry-After
    assert rows["prose"]["status"] == "error" and "without code" in rows["prose"]["error"]
    # "# ... rest of the code unchanged ..." in place of the body: one hunk, a placeholder, flagged
    assert (rows["lazy"]["hunks"], rows["lazy"]["lazyPlaceholders"], rows["lazy"]["flaggedHunks"]) == (1, 1, 1)
    assert time.perf_counter() - started < 10  # all concurrently: the slowest (retries) sets the pace


async def test_concurrency_limit_per_backend(lsp, backend):
    settings = {"backends": [backend_entry(backend, "limited", "slowfix", maxConcurrency=2)]}
    editor = await start_session(lsp, settings)
    for i in range(6):
        editor.open(f"file:///tmp/c{i}.py", SAMPLE)
    backend.max_active = 0
    results = await asyncio.gather(
        *(
            execute(
                lsp, "editFidelity.requestEdit", {"uri": f"file:///tmp/c{i}.py", "version": 1, "instruction": "fix"}
            )
            for i in range(6)
        )
    )
    assert all(r["proposals"][0]["status"] == "ok" for r in results)
    assert backend.max_active <= 2


async def test_concurrent_requests_all_answered(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "slowfix"))
    for i in range(12):
        editor.open(f"file:///tmp/k{i}.py", SAMPLE)
    backend.max_active = 0
    results = await asyncio.gather(
        *(
            execute(
                lsp, "editFidelity.requestEdit", {"uri": f"file:///tmp/k{i}.py", "version": 1, "instruction": "fix"}
            )
            for i in range(12)
        )
    )
    ids = {r["proposals"][0]["id"] for r in results}
    assert len(ids) == 12 and all(r["proposals"][0]["status"] == "ok" for r in results)
    assert all(r["proposals"][0]["report"]["hunks"] for r in results)
    assert backend.max_active >= 4  # in flight together (maxConcurrency 8), not one after another


async def test_cancel_request_aborts_http(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "hang"))
    editor.open(URI, SAMPLE)
    before = backend.disconnects.count("hang")
    msg_id = "cancel-me"
    fut = asyncio.ensure_future(
        lsp.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(
                command="editFidelity.requestEdit", arguments=[{"uri": URI, "version": 1, "instruction": "fix"}]
            ),
            msg_id=msg_id,
        )
    )
    await wait_for(lambda: len(backend.requests_for("hang")) > 0)
    lsp.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    with pytest.raises(Exception, match="(?i)cancel"):
        await asyncio.wait_for(fut, 5)
    await wait_for(lambda: backend.disconnects.count("hang") > before, timeout=5)
    # progress ended, server alive
    result = await execute(lsp, "editFidelity.listBackends", {})
    assert result["backends"][0]["name"] == "hang"


async def test_progress_cancel_button_aborts_http(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "hang"))
    editor.open(URI, SAMPLE)
    before = backend.disconnects.count("hang")
    task = asyncio.ensure_future(
        execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "x"})
    )
    token = await wait_for(lambda: next((t for t, r in lsp.progress_reports.items() if r), None))
    n_hang = len(backend.requests_for("hang"))
    await wait_for(lambda: len(backend.requests_for("hang")) > n_hang - 1 and backend.active > 0)
    lsp.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    with pytest.raises(Exception, match="(?i)cancel"):
        await asyncio.wait_for(task, 5)
    await wait_for(lambda: backend.disconnects.count("hang") > before, timeout=5)
    assert lsp.progress_reports[token][-1].kind == "end"


async def test_timeout_and_missing_key(lsp, backend):
    settings = {
        "backends": [
            backend_entry(backend, "slow", "hang", timeoutS=0.3),
            backend_entry(backend, "nokey", "fix", apiKeyEnv="EDIT_FIDELITY_UNSET_KEY_VAR"),
        ]
    }
    editor = await start_session(lsp, settings)
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix"})
    slow, nokey = result["proposals"]
    assert slow["status"] == "error" and slow["errorKind"] == "timeout" and "0.3 s" in slow["error"]
    assert nokey["status"] == "error" and "EDIT_FIDELITY_UNSET_KEY_VAR is not set" in nokey["error"]
    assert slow["edits"] == [] and slow["report"] is None
    # every backend failed: the user is told
    await wait_for(lambda: any(m.type == types.MessageType.Error for m in lsp.messages))


async def test_hostile_backend_cannot_leak_the_key(lsp, backend):

    backend.scripts["leaky"] = [
        Step(status=400, body=('{"error": {"message": "invalid key ' + API_KEY + '"}}').encode())
    ]
    backend.scripts["leaky-code"] = [Step(content="```python\nKEY = '" + API_KEY + "'\n```")]
    editor = await start_session(lsp, settings_for(backend, "leaky", "leaky-code"))
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix"})
    assert API_KEY not in repr(result)
    assert "***" in result["proposals"][0]["error"]


async def test_client_initiated_progress_token(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    editor.open(URI, SAMPLE)
    lsp.progress_reports["client-token-1"] = []
    await lsp.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="editFidelity.requestEdit",
            arguments=[{"uri": URI, "version": 1, "instruction": "fix"}],
            work_done_token="client-token-1",
        )
    )
    kinds = [r.kind for r in lsp.progress_reports["client-token-1"]]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert [t for t, r in lsp.progress_reports.items() if r] == ["client-token-1"]  # no second token


async def test_report_is_what_check_prints(lsp, backend, tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(sys.executable).with_name("edit-fidelity")
    editor = await start_session(lsp, settings_for(backend, "overedit"))
    editor.open(URI, SAMPLE)
    selection = {"start": {"line": 7, "character": 0}, "end": {"line": 12, "character": 0}}
    result = await execute(
        lsp,
        "editFidelity.requestEdit",
        {"uri": URI, "version": 1, "range": selection, "instruction": "fix the comparison"},
    )
    [p] = result["proposals"]
    import msgspec

    from server.fidelity import TextEdit, apply_text_edits

    edited = apply_text_edits(SAMPLE, [msgspec.convert(e, TextEdit) for e in p["edits"]])
    (tmp_path / "a.py").write_text(SAMPLE)
    (tmp_path / "b.py").write_text(edited)
    out = await asyncio.to_thread(
        subprocess.run,
        [str(script), "check", str(tmp_path / "a.py"), str(tmp_path / "b.py"), "--target", "8:12", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == p["report"]  # one document: the same keys on the wire and in check


async def test_crlf_buffer_keeps_its_line_endings(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    crlf = SAMPLE.replace("\n", "\r\n")
    editor.open(URI, crlf)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix"})
    [p] = result["proposals"]
    assert len(p["report"]["hunks"]) == 1 and p["flaggedHunks"] == []
    await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    await wait_for(lambda: editor.texts[URI] == FIXED.replace("\n", "\r\n"))


async def test_benchmark_gold_field_fills_excess(lsp, backend):
    editor = await start_session(lsp, {"editFidelity": settings_for(backend, "fix")})
    editor.open(URI, SAMPLE)
    args = {"uri": URI, "version": 1, "instruction": "fix the bug", "gold": FIXED}
    [p] = (await execute(lsp, "editFidelity.requestEdit", args))["proposals"]
    assert p["report"] == msgspec.to_builtins(measure(SAMPLE, FIXED, gold=FIXED))
    assert p["report"]["excess"] == {"raw": 0.0, "no_comments": 0.0, "body_no_comments": 0.0}
    without = (await execute(lsp, "editFidelity.requestEdit", {**args, "gold": None}))["proposals"][0]
    assert without["report"]["excess"] is None
    with pytest.raises(Exception, match="`gold` must be a string"):
        await execute(lsp, "editFidelity.requestEdit", {**args, "gold": 3})
