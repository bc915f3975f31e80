"""`editFidelity.locateBug` end to end: the real server (pytest-lsp client) against scripted OpenAI-protocol
models on 127.0.0.1. The `interpreter` model answers what Python's own SyntaxError says about the numbered
lines it was sent, so a right answer proves the numbering the server built."""

from __future__ import annotations

import asyncio
import re
import warnings

import pytest
from lsp_helpers import backend_entry, execute, start_session, wait_for
from lsprotocol import types

from tools.doubles.scripted import ScriptedServer, Step

URI = "file:///tmp/haystack.py"
# 12 lines: the bug (a missing colon) on line 10, so numbers are two digits wide
CODE = """import math

def area(r):
    return math.pi * r * r

def double(x):
    return 2 * x

values = [1, 2, 3]
for v in values
    print(area(v))
print(double(4))
"""


def _context(request: dict) -> list[str]:
    content = request["messages"][-1]["content"]
    return re.search(r"<context>\n(.*)\n</context>", content, re.DOTALL).group(1).split("\n")


def interpreter(request: dict) -> str:
    """Number of the line Python's SyntaxError names, read off the numbered context."""
    numbered = _context(request)
    code = "\n".join(line.split("| ", 1)[1] if "| " in line else "" for line in numbered)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, "<ctx>", "exec")
    except SyntaxError as exc:
        return f"{numbered[exc.lineno - 1].split('|', 1)[0].strip()}, missing_colon"
    return "0, missing_colon"


SCRIPTS = {
    "interpreter": [Step(content=interpreter)],
    "chatty": [Step(content="The bug is on line 10, where the colon is missing.")],
    "far": [Step(content="Answer: 999, missing_colon.")],
    "e500": [Step(status=500)],
    "hang": [Step(hang=True)],
}


@pytest.fixture(scope="module")
def models():
    with ScriptedServer({k: list(v) for k, v in SCRIPTS.items()}) as srv:
        yield srv


def settings(srv: ScriptedServer, *names: str) -> dict:
    return {"backends": [backend_entry(srv, n, maxRetries=0) for n in names]}


def bug_diagnostics(lsp) -> list[types.Diagnostic]:
    return [d for d in lsp.diagnostics.get(URI, []) if d.code == "located-bug"]


async def test_answer_line_type_and_diagnostic(lsp, models):
    editor = await start_session(lsp, settings(models, "interpreter"))
    editor.open(URI, CODE)
    result = await execute(lsp, "editFidelity.locateBug", {"uri": URI, "version": 1})
    [a] = result["answers"]
    assert a["status"] == "ok" and a["backend"] == "interpreter"
    assert (a["line"], a["bugType"], a["knownType"], a["inRange"]) == (10, "missing_colon", True, True)
    assert a["raw"] == "10, missing_colon" and a["problem"] is None and a["latencyMs"] > 0
    assert (result["firstLine"], result["lastLine"], result["warnings"]) == (1, 12, [])
    # the paper's prompt, the document numbered as the paper numbers it
    sent = models.requests_for("interpreter")[-1].body["messages"]
    assert len(sent) == 1 and sent[0]["role"] == "user"
    assert sent[0]["content"].startswith("<system>\nYou are a intelligent assistant.\n</system>")
    assert "Always return your answer in the following format: <line_number>, <bug_type>" in sent[0]["content"]
    assert _context(models.requests_for("interpreter")[-1].body) == [
        f"{i + 1:<2}| {line}" for i, line in enumerate(CODE.splitlines())
    ]
    [diag] = await wait_for(lambda: bug_diagnostics(lsp))
    assert diag.range.start.line == 9 and diag.range.end.character == len("for v in values")
    assert diag.severity == types.DiagnosticSeverity.Warning and diag.source == "edit-fidelity"
    assert diag.message == "syntax bug here: missing_colon [interpreter]"
    # the answer names a line of the old text: any change takes the diagnostic away
    editor.replace_all(URI, CODE.replace("for v in values", "for v in values:"))
    await wait_for(lambda: not bug_diagnostics(lsp))


async def test_selection_is_numbered_with_document_lines(lsp, models):
    editor = await start_session(lsp, settings(models, "interpreter"))
    editor.open(URI, CODE)
    rng = {"start": {"line": 7, "character": 0}, "end": {"line": 11, "character": 3}}
    result = await execute(lsp, "editFidelity.locateBug", {"uri": URI, "version": 1, "range": rng})
    [a] = result["answers"]
    assert (result["firstLine"], result["lastLine"]) == (8, 12)
    assert _context(models.requests_for("interpreter")[-1].body) == [
        f"{i + 8:<2}| {line}" for i, line in enumerate(CODE.splitlines()[7:12])
    ]
    assert a["status"] == "ok" and a["line"] == 10
    [diag] = await wait_for(lambda: bug_diagnostics(lsp))
    assert diag.range.start.line == 9


async def test_each_backend_answers_in_its_own_way(lsp, models):
    editor = await start_session(lsp, settings(models, "interpreter", "chatty", "far", "e500"))
    editor.open(URI, CODE)
    result = await execute(lsp, "editFidelity.locateBug", {"uri": URI, "version": 1})
    by = {a["backend"]: a for a in result["answers"]}
    assert [a["backend"] for a in result["answers"]] == ["interpreter", "chatty", "far", "e500"]
    # the wrong format is reported as such, never guessed from the text
    chatty = by["chatty"]
    assert chatty["status"] == "unparseable" and chatty["line"] is None and chatty["bugType"] is None
    assert chatty["raw"] == SCRIPTS["chatty"][0].content and "not an integer" in chatty["problem"]
    # a line it was never shown: parsed, no diagnostic, a warning
    assert (by["far"]["status"], by["far"]["line"], by["far"]["inRange"]) == ("ok", 999, False)
    assert result["warnings"] == ["far answered line 999, outside the lines it was shown (1-12)"]
    assert by["e500"]["status"] == "error" and by["e500"]["errorKind"] == "http" and by["e500"]["raw"] is None
    diags = await wait_for(lambda: bug_diagnostics(lsp))
    assert [d.message for d in diags] == ["syntax bug here: missing_colon [interpreter]"]
    # one progress report per backend, between begin and end
    [(_token, reports)] = [(t, r) for t, r in lsp.progress_reports.items() if r]
    assert [r.kind for r in reports] == ["begin", "report", "report", "report", "report", "end"]
    assert any(r.message and r.message.startswith("chatty: unparseable") for r in reports)


BAD_ARGUMENTS = [
    ({"version": 1}, "missing `uri`"),
    ({"uri": URI}, "missing `version`"),
    ({"uri": "file:///tmp/never.py", "version": 1}, "unknown document"),
    ({"uri": URI, "version": 1, "backends": ["nobody"]}, "unknown backend 'nobody'"),
    (
        {
            "uri": URI,
            "version": 1,
            "range": {"start": {"line": 40, "character": 0}, "end": {"line": 41, "character": 0}},
        },
        "outside the document",
    ),
    ({"uri": URI, "version": 1, "backends": "interpreter"}, "`backends` must be an array"),
]


async def test_bad_arguments_name_the_field(lsp, models):
    editor = await start_session(lsp, settings(models, "interpreter"))
    editor.open(URI, CODE)
    asked = len(models.requests_for("interpreter"))
    for argument, message in BAD_ARGUMENTS:
        with pytest.raises(Exception, match=re.escape(message)):
            await execute(lsp, "editFidelity.locateBug", argument)
    assert len(models.requests_for("interpreter")) == asked  # nothing reached a model


async def test_stale_version_and_cancellation(lsp, models):
    editor = await start_session(lsp, settings(models, "hang"))
    editor.open(URI, CODE)
    with pytest.raises(Exception, match="version 3 is not the current one"):
        await execute(lsp, "editFidelity.locateBug", {"uri": URI, "version": 3})
    before = models.disconnects.count("hang")
    fut = asyncio.ensure_future(
        lsp.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="editFidelity.locateBug", arguments=[{"uri": URI, "version": 1}]),
            msg_id="locate-cancel",
        )
    )
    await wait_for(lambda: len(models.requests_for("hang")) > 0)
    lsp.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="locate-cancel"))
    with pytest.raises(Exception, match="(?i)cancel"):
        await asyncio.wait_for(fut, 5)
    await wait_for(lambda: models.disconnects.count("hang") > before, timeout=5)  # the HTTP request was closed
    assert (await execute(lsp, "editFidelity.listBackends", {}))["backends"][0]["name"] == "hang"
