"""Malformed or missing arguments, unknown documents and backends, stale versions, raw protocol junk:
each gets a specific error and the server keeps serving."""

from __future__ import annotations

import asyncio
import json

import pytest
from lsp_helpers import SAMPLE, execute, send_raw_json, settings_for, start_session
from lsprotocol import types

URI = "file:///tmp/bad.py"
GOOD = {"uri": URI, "version": 1, "instruction": "fix"}

CASES = [
    # (command, arguments as sent, error message fragment)
    ("editFidelity.requestEdit", [], "expects one JSON object argument"),
    ("editFidelity.requestEdit", [GOOD, GOOD], "exactly one JSON object"),
    ("editFidelity.requestEdit", ["a string"], "must be a JSON object"),
    ("editFidelity.requestEdit", [{"version": 1, "instruction": "x"}], "missing `uri`"),
    ("editFidelity.requestEdit", [{**GOOD, "uri": 5}], "`uri` must be a string"),
    ("editFidelity.requestEdit", [{**GOOD, "version": "1"}], "`version` must be an integer"),
    ("editFidelity.requestEdit", [{**GOOD, "version": True}], "`version` must be an integer"),
    ("editFidelity.requestEdit", [{**GOOD, "instruction": "   "}], "`instruction` must not be empty"),
    ("editFidelity.requestEdit", [{**GOOD, "instruction": "x" * 20001}], "too long"),
    ("editFidelity.requestEdit", [{**GOOD, "uri": "file:///nope.py"}], "unknown document"),
    ("editFidelity.requestEdit", [{**GOOD, "backends": ["nope"]}], "unknown backend 'nope'; configured: fix"),
    ("editFidelity.requestEdit", [{**GOOD, "backends": "fix"}], "`backends` must be an array of strings"),
    ("editFidelity.requestEdit", [{**GOOD, "backends": []}], "must not be empty"),
    ("editFidelity.requestEdit", [{**GOOD, "style": "terse"}], "`style` must be one of generic, minimal"),
    ("editFidelity.requestEdit", [{**GOOD, "range": {"start": {"line": 0}}}], "`range.start.character`"),
    ("editFidelity.requestEdit", [{**GOOD, "range": [1, 2]}], "`range` must be a range object"),
    (
        "editFidelity.requestEdit",
        [{**GOOD, "range": {"start": {"line": 5, "character": 0}, "end": {"line": 2, "character": 0}}}],
        "ends before it starts",
    ),
    (
        "editFidelity.requestEdit",
        [{**GOOD, "range": {"start": {"line": 500, "character": 0}, "end": {"line": 501, "character": 0}}}],
        "outside the document",
    ),
    (
        "editFidelity.requestEdit",
        [{**GOOD, "range": {"start": {"line": -1, "character": 0}, "end": {"line": 1, "character": 0}}}],
        "non-negative",
    ),
    ("editFidelity.applyProposal", [{}], "missing `id`"),
    ("editFidelity.applyProposal", [{"id": "x", "hunks": "all"}], "`hunks` must be an array of integers"),
    ("editFidelity.applyProposal", [{"id": "x", "hunks": [1, 1]}], "duplicates"),
    ("editFidelity.compareBackends", [{"uri": URI, "version": 1}], "missing `instruction`"),
    ("editFidelity.checkChange", [{"uri": URI}], "missing `baseline`"),
    ("editFidelity.checkChange", [{"uri": URI, "baseline": "yesterday"}], "`baseline` must be"),
    ("editFidelity.checkChange", [{"uri": URI, "baseline": {"txt": "x"}}], "`baseline.text` must be a string"),
    ("editFidelity.checkChange", [{"uri": "file:///nope.py", "baseline": "snapshot"}], "unknown document"),
    ("editFidelity.noSuchCommand", [{}], "unknown command"),
]


async def test_every_bad_argument_gets_a_specific_error(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    editor.open(URI, SAMPLE)
    for command, arguments, fragment in CASES:
        with pytest.raises(Exception) as info:
            await execute(lsp, command, raw_arguments=arguments)
        assert fragment in str(info.value), (command, arguments, str(info.value))
        assert "-32602" in repr(info.value) or getattr(info.value, "code", None) == -32602, info.value
    # still alive and working
    result = await execute(lsp, "editFidelity.requestEdit", GOOD)
    assert result["proposals"][0]["status"] == "ok"


async def test_stale_version_and_no_backends(lsp, backend):
    editor = await start_session(lsp, {"localModel": None})  # no embedded default model either
    editor.open(URI, SAMPLE)
    with pytest.raises(Exception) as info:
        await execute(lsp, "editFidelity.requestEdit", {**GOOD, "version": 3})
    assert getattr(info.value, "code", None) == -32801 and "not the current one (1)" in str(info.value)
    with pytest.raises(Exception) as info:
        await execute(lsp, "editFidelity.requestEdit", GOOD)
    assert getattr(info.value, "code", None) == -32803 and "no backends configured" in str(info.value)


async def test_backend_down(lsp, backend):
    settings = {"backends": [{"name": "down", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}]}
    editor = await start_session(lsp, settings)
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", GOOD)
    [p] = result["proposals"]
    assert (
        p["status"] == "error" and p["errorKind"] == "connection" and "cannot reach http://127.0.0.1:9/v1" in p["error"]
    )


async def test_buffer_that_does_not_parse(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    broken = SAMPLE.replace("def unrelated(x):", "def unrelated(x)")
    editor.open(URI, broken)
    result = await execute(lsp, "editFidelity.requestEdit", GOOD)
    [p] = result["proposals"]
    assert p["status"] == "ok" and p["report"]["parseErrors"]["original"]
    assert any("does not parse" in w for w in result["warnings"])
    check = await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": {"text": SAMPLE}})
    assert check["report"]["parseErrors"]["edited"]


async def test_raw_protocol_junk(lsp, backend):
    editor = await start_session(lsp, settings_for(backend, "fix"))
    editor.open(URI, SAMPLE)
    # params that do not deserialize at all: an InvalidParams answer, not silence
    with pytest.raises(Exception) as info:
        await send_raw_json(
            lsp, {"jsonrpc": "2.0", "id": "junk-1", "method": types.TEXT_DOCUMENT_HOVER, "params": {"textDocument": 5}}
        )
    assert "invalid params" in str(info.value).lower()
    with pytest.raises(Exception) as info:
        await send_raw_json(
            lsp,
            {
                "jsonrpc": "2.0",
                "id": "junk-2",
                "method": types.WORKSPACE_EXECUTE_COMMAND,
                "params": {"command": "editFidelity.requestEdit", "arguments": "fix it"},
            },
        )
    assert "`arguments` must be an array" in str(info.value)
    # the object itself instead of a one-element array is accepted
    ok = await send_raw_json(
        lsp,
        {
            "jsonrpc": "2.0",
            "id": "junk-3",
            "method": types.WORKSPACE_EXECUTE_COMMAND,
            "params": {"command": "editFidelity.listBackends", "arguments": {}},
        },
    )
    assert ok.backends[0].name == "fix"  # (the client turns untyped JSON objects into namedtuples)
    # not even JSON: logged, and the server reads on
    lsp.protocol.writer.write(b"Content-Length: 9\r\n\r\n{not json")
    # an unknown method
    with pytest.raises(Exception, match="(?i)method not found|not found"):
        await send_raw_json(lsp, {"jsonrpc": "2.0", "id": "junk-4", "method": "editFidelity/bogus", "params": {}})
    # notifications about documents nobody opened are ignored
    lsp.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri="file:///ghost.py", version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="x")],
        )
    )
    lsp.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri="file:///ghost.py")))
    # hover / lens / actions on unknown documents: empty answers
    hover = await lsp.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri="file:///ghost.py"), types.Position(0, 0))
    )
    assert hover is None
    result = await execute(lsp, "editFidelity.requestEdit", GOOD)
    assert result["proposals"][0]["status"] == "ok"


async def test_bad_settings_are_reported_and_skipped(lsp, backend):
    settings = settings_for(backend, "fix")
    settings["backends"] += [
        {"name": "nourl", "model": "m"},
        {"name": "fix", "baseUrl": backend.base_url, "model": "dup"},
        {"name": "k", "baseUrl": backend.base_url, "model": "m", "apiKeyEnv": "sk-live-abcdef"},
        {"name": "t", "baseUrl": backend.base_url, "model": "m", "temperature": "hot"},
        "not an object",
    ]
    settings["thresholds"]["largeChangeLines"] = -3
    settings["defaultStyle"] = "fancy"
    editor = await start_session(lsp, settings)
    editor.open(URI, SAMPLE)
    listed = await execute(lsp, "editFidelity.listBackends", {})
    assert [b["name"] for b in listed["backends"]] == ["fix"]
    problems = " ".join(listed["problems"])
    for fragment in (
        "`baseUrl` must be an http(s) URL",
        "duplicate backend name 'fix'",
        "NAME of an environment variable",
        "`temperature` must be a number",
        "a backend must be an object",
        "largeChangeLines",
        "defaultStyle",
    ):
        assert fragment in problems, fragment
    assert "sk-live-abcdef" not in json.dumps(listed["backends"])
    await asyncio.sleep(0.2)
    assert any("edit-fidelity settings" in m.message for m in lsp.messages)
