"""Helpers for the server tests: a scripted OpenAI-compatible backend on 127.0.0.1 and the real server driven by a real
LSP client (pytest-lsp), which behaves like an editor: it keeps its own copy of each buffer, applies
`workspace/applyEdit` (refusing a versioned edit for another version) and reports the result back
with didChange."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from dataclasses import dataclass, field

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code

API_ENV = "EDIT_FIDELITY_TEST_KEY"
API_KEY = "sk-test-4f9a1c0ffee7d00d"

SAMPLE = '''import math


def mean_above(values, limit):
    """Mean of the values above limit."""
    total = 0
    count = 0
    for v in values:
        # only the large ones
        if v < limit:
            total += v
            count += 1
    return total / count if count else 0.0


def unrelated(x):
    return x * 2
'''

FIXED = SAMPLE.replace("if v < limit:", "if v > limit:")


def _fix(req: dict) -> str:
    return fenced(user_code(req).replace("if v < limit:", "if v > limit:"))


def _overedit(req: dict) -> str:
    code = user_code(req)
    code = code.replace("if v < limit:", "if v > limit:")
    code = code.replace("        # only the large ones\n", "")
    code = re.sub(r"\bv\b", "value", code)
    code = code.replace(
        '    """Mean of the values above limit."""\n',
        '    """Mean of the values above limit."""\n    if values is None:\n        raise ValueError("values must not be None")\n',
    )
    code = code.replace("return x * 2", "return x*2")
    return "<think>The user wants a fix. Let me rewrite it nicely.</think>\n" + fenced(code, "Improved version:")


def _whole_file_overedit(req: dict) -> str:
    # ignores "only the selected lines": answers with the whole file, changed elsewhere too
    code = user_code(req, 0).replace("# >>> SELECTION START\n", "").replace("# <<< SELECTION END\n", "")
    code = code.replace("if v < limit:", "if v > limit:").replace("return x * 2", "return 2 * x")
    return fenced(code)


SCRIPTS = {
    "fix": [Step(content=_fix)],
    "overedit": [Step(content=_overedit)],
    "wholefile": [Step(content=_whole_file_overedit)],
    "slowfix": [Step(content=_fix, delay_s=0.3)],
    "garbage": [Step(body=b"\x00\x01 this is not JSON at all <html>")],
    "e500": [Step(status=500)],
    "r429": [Step(status=429, headers={"retry-after": "0.4"}), Step(content=_fix)],
    "hang": [Step(hang=True)],
    "prose": [Step(content="I am sorry, I cannot help with that request.")],
    "echokey": [Step(status=400, body=None)],  # replaced per test
    "lazy": [
        Step(
            content=lambda r: fenced(
                "import math\n\n\ndef mean_above(values, limit):\n    # ... rest of the code unchanged ...\n    pass\n"
            )
        )
    ],
}


def backend_entry(srv: ScriptedServer, name: str, model: str | None = None, **extra) -> dict:
    entry = {
        "name": name,
        "baseUrl": srv.base_url,
        "model": model or name,
        "apiKeyEnv": API_ENV,
        "timeoutS": 10,
        "maxConcurrency": 8,
    }
    entry.update(extra)
    return entry


def settings_for(srv: ScriptedServer, *names: str, **extra) -> dict:
    return {
        "backends": [backend_entry(srv, n) for n in names],
        "thresholds": {"debounceMs": 50, "largeChangeLines": 8},
        **extra,
    }


SERVER_CMD = [sys.executable, "-m", "server.lsp"]
# HF_HUB_OFFLINE: a test that ends up on the embedded default model must never reach for the hub
SERVER_ENV = {**os.environ, API_ENV: API_KEY, "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1"}


@dataclass
class Editor:
    """The client-side copy of the buffers, as an editor keeps them."""

    client: LanguageClient
    texts: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    apply_requests: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)

    def open(self, uri: str, text: str, version: int = 1, language: str = "python") -> None:
        self.texts[uri] = text
        self.versions[uri] = version
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
            )
        )

    def change(self, uri: str, edits: list[types.TextEdit]) -> int:
        """Apply edits locally (last first) and send them as one incremental didChange."""
        text = self.texts[uri]
        changes = []
        for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            start, end = offset(text, e.range.start), offset(text, e.range.end)
            text = text[:start] + e.new_text + text[end:]
            changes.append(types.TextDocumentContentChangePartial(range=e.range, text=e.new_text))
        self.texts[uri] = text
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=changes,
            )
        )
        return self.versions[uri]

    def replace_all(self, uri: str, text: str) -> int:
        self.texts[uri] = text
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return self.versions[uri]


# LSP's line ends, and only those (str.splitlines also breaks at \v, \f, \x1c-\x1e, \x85, \u2028, \u2029)
_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lsp_lines(text: str) -> list[str]:
    """The lines of `text` as an LSP client counts them, each with its line end."""
    return _LSP_LINE.findall(text)


def line_of(text: str, needle: str, nth: int = 0) -> int:
    """The 0-based LSP line on which the `nth` occurrence of `needle` starts (located, not typed in)."""
    at = -1
    for _ in range(nth + 1):
        at = text.find(needle, at + 1)
        assert at >= 0, f"{needle!r} not in the text"
    return len(lsp_lines(text[:at] + "x")) - 1


def span_of(text: str, needle: str) -> types.Range:
    """The LSP range (UTF-16 columns) of the first occurrence of `needle`."""
    at = text.index(needle)

    def position(index: int) -> types.Position:
        line = len(lsp_lines(text[:index] + "x")) - 1
        start = sum(len(ln) for ln in lsp_lines(text)[:line])
        return types.Position(line, sum(2 if ord(c) > 0xFFFF else 1 for c in text[start:index]))

    return types.Range(start=position(at), end=position(at + len(needle)))


def offset(text: str, pos: types.Position) -> int:
    """UTF-16 position -> str index."""
    lines = lsp_lines(text)
    base = sum(len(ln) for ln in lines[: pos.line])
    if pos.line >= len(lines):
        return len(text)
    line = lines[pos.line].rstrip("\r\n")  # past the end of a line means its end (LSP)
    units = 0
    for i, ch in enumerate(line):
        if units >= pos.character:
            return base + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return base + len(line)


def te(sl: int, sc: int, el: int, ec: int, text: str) -> types.TextEdit:
    return types.TextEdit(range=types.Range(start=types.Position(sl, sc), end=types.Position(el, ec)), new_text=text)


def attach_editor(client: LanguageClient) -> Editor:
    editor = Editor(client)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams):
        editor.apply_requests.append(params)
        for change in params.edit.document_changes or []:
            uri = change.text_document.uri
            if change.text_document.version is not None and change.text_document.version != editor.versions.get(uri):
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="version mismatch")
        for change in params.edit.document_changes or []:
            editor.change(change.text_document.uri, list(change.edits))
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def lens_refresh(params):
        return None

    return editor


async def start_session(client: LanguageClient, options, capabilities: str = "visual-studio-code") -> Editor:
    editor = attach_editor(client)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(capabilities),
            initialization_options=options,
            root_uri="file:///tmp",
        )
    )
    return editor


async def execute(client: LanguageClient, command: str, argument=None, *, raw_arguments=None):
    arguments = raw_arguments if raw_arguments is not None else [argument]
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=arguments)
    )


async def wait_for(predicate, timeout: float = 5.0, interval: float = 0.02):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(interval)


async def raw_request(client: LanguageClient, method: str, params):
    """A request whose result stays plain JSON (lsprotocol's client-side converter turns every
    CodeAction that carries a command into a bare Command, losing its diagnostics and edit)."""
    import uuid

    msg_id = f"raw-{uuid.uuid4().hex}"
    fut = client.protocol.send_request(method, params, msg_id=msg_id)
    client.protocol._result_types.pop(msg_id, None)
    return await asyncio.wait_for(asyncio.wrap_future(fut), 10)


async def code_actions(client: LanguageClient, uri: str, rng: types.Range, diagnostics=()) -> list[dict]:
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=rng,
        context=types.CodeActionContext(diagnostics=list(diagnostics)),
    )
    return await raw_request(client, types.TEXT_DOCUMENT_CODE_ACTION, params)


async def send_raw_json(client: LanguageClient, message: dict, timeout: float = 10):
    """Write one JSON-RPC message as bytes, bypassing the client's typed serialisation (to send
    what a broken client would); returns the result or raises the error of the answer, if any."""
    import json
    from concurrent.futures import Future

    fut = None
    if "id" in message:
        fut = Future()
        client.protocol._request_futures[message["id"]] = fut
    body = json.dumps(message).encode()
    client.protocol.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    if fut is not None:
        return await asyncio.wait_for(asyncio.wrap_future(fut), timeout)
