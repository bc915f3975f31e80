"""Other editors' capabilities, settings through workspace/configuration, UTF-16, TCP mode."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_helpers import (
    SAMPLE,
    SERVER_CMD,
    SERVER_ENV,
    attach_editor,
    execute,
    settings_for,
    start_session,
    wait_for,
)
from lsprotocol import types
from pytest_lsp import client_capabilities

from tools.doubles.scripted import Step, fenced, user_code

URI = "file:///tmp/clients.py"
CONTRACT = {
    "editFidelity.requestEdit",
    "editFidelity.applyProposal",
    "editFidelity.compareBackends",
    "editFidelity.checkChange",
}


@pytest.mark.parametrize("client", ["visual-studio-code", "neovim@v0.7.0", "neovim", "emacs"])
async def test_clients(lsp, backend, client):
    editor = attach_editor(lsp)
    init = await lsp.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(client),
            initialization_options={"editFidelity": settings_for(backend, "fix")},
        )
    )
    caps = init.capabilities
    assert set(caps.execute_command_provider.commands) >= CONTRACT
    assert caps.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    assert caps.hover_provider and caps.code_lens_provider is not None and caps.code_action_provider
    assert caps.position_encoding in (None, types.PositionEncodingKind.Utf16)
    editor.open(URI, SAMPLE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix"})
    [p] = result["proposals"]
    assert p["status"] == "ok"
    applied = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert applied["applied"] is True
    await wait_for(lambda: "if v > limit:" in editor.texts[URI])


async def test_utf8_preferring_client_gets_utf16(lsp, backend):
    caps = client_capabilities("visual-studio-code")
    caps.general = types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16]
    )
    attach_editor(lsp)
    init = await lsp.initialize_session(types.InitializeParams(capabilities=caps))
    assert init.capabilities.position_encoding == types.PositionEncodingKind.Utf16


async def test_utf16_columns_after_astral_characters(lsp, backend):
    backend.scripts["astral"] = [Step(content=lambda r: fenced(user_code(r).replace("1 < 2", "1 > 2")))]
    editor = await start_session(lsp, settings_for(backend, "astral"))
    text = 'x = "😀😀 naïve"; y = 1 < 2\nz = "𝔘"\n'
    editor.open(URI, text)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "flip"})
    [p] = result["proposals"]
    [edit] = p["edits"]
    assert edit["range"]["start"]["character"] == len('x = "😀😀 naïve"; y = 1 ') + 2  # two surrogate pairs
    await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    await wait_for(lambda: editor.texts[URI] == text.replace("1 < 2", "1 > 2"))


async def test_settings_from_workspace_configuration(lsp, backend):
    lsp.set_configuration(settings_for(backend, "fix"), section="editFidelity")
    editor = await start_session(lsp, None)
    listed = await execute(lsp, "editFidelity.listBackends", {})
    assert [b["name"] for b in listed["backends"]] == ["fix"]
    # a settings change: the server pulls again
    lsp.set_configuration(settings_for(backend, "fix", "overedit"), section="editFidelity")
    lsp.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))

    async def names():
        return [b["name"] for b in (await execute(lsp, "editFidelity.listBackends", {}))["backends"]]

    for _ in range(100):
        if await names() == ["fix", "overedit"]:
            break
        await asyncio.sleep(0.02)
    assert await names() == ["fix", "overedit"]
    editor.open(URI, SAMPLE)
    result = await execute(
        lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix", "backends": ["overedit"]}
    )
    assert [p["backend"] for p in result["proposals"]] == ["overedit"]


def _lsp_message(obj: dict) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_message(sock: socket.socket) -> dict:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    header, rest = data.split(b"\r\n\r\n", 1)
    length = int(next(h for h in header.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1])
    while len(rest) < length:
        rest += sock.recv(4096)
    return json.loads(rest[:length])


def test_tcp_mode(tmp_path: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [*SERVER_CMD, "--tcp", f"127.0.0.1:{port}"], env=SERVER_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        for _ in range(200):
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                import time

                time.sleep(0.05)
        else:
            raise AssertionError("server did not listen")
        with sock:
            sock.sendall(
                _lsp_message(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {"processId": None, "rootUri": None, "capabilities": {}},
                    }
                )
            )
            reply = _read_message(sock)
            assert (
                reply["id"] == 1
                and "editFidelity.requestEdit" in reply["result"]["capabilities"]["executeCommandProvider"]["commands"]
            )
            sock.sendall(_lsp_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            assert _read_message(sock)["id"] == 2
            sock.sendall(_lsp_message({"jsonrpc": "2.0", "method": "exit"}))
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_console_script_serve_over_stdio():
    """`edit-fidelity serve` as an editor starts it: LSP on stdin/stdout, settings under `editFidelity`."""
    script = Path(sys.executable).with_name("edit-fidelity")
    if not script.exists():
        pytest.skip("console script not installed")
    help_out = subprocess.run([str(script), "serve", "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert help_out.returncode == 0 and "--tcp" in help_out.stdout
    proc = subprocess.Popen(
        [str(script), "serve"], env=SERVER_ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:

        def send(obj):
            proc.stdin.write(_lsp_message(obj))
            proc.stdin.flush()

        def read():
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                header += proc.stdout.read(1)
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            return json.loads(proc.stdout.read(length))

        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "processId": None,
                    "rootUri": None,
                    "capabilities": {},
                    "initializationOptions": {
                        "editFidelity": {
                            "backends": [{"name": "local", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}]
                        }
                    },
                },
            }
        )
        reply = read()
        assert "editFidelity.checkChange" in reply["result"]["capabilities"]["executeCommandProvider"]["commands"]
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "workspace/executeCommand",
                "params": {"command": "editFidelity.listBackends", "arguments": [{}]},
            }
        )
        while (msg := read()).get("id") != 2:
            pass
        assert [b["name"] for b in msg["result"]["backends"]] == ["local"]
        send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
        while read().get("id") != 3:
            pass
        send({"jsonrpc": "2.0", "method": "exit"})
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
