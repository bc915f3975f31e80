"""End-to-end proof that a non-VS Code editor works: real headless Neovim (its built-in LSP client)
drives `edit-fidelity serve` over stdio.

The test starts the shared scripted OpenAI-compatible HTTP server on 127.0.0.1 (tools/doubles) that
answers every chat completion with the same over-edit in a ```python block, configures the
language server through initialization options, asks for an edit with
`workspace/executeCommand editFidelity.requestEdit`, checks that fidelity diagnostics appear, and
applies the proposal with `editFidelity.applyProposal`; the server answers with
`workspace/applyEdit`, which Neovim applies to the buffer. The Lua script writes what it saw to a
JSON file that the test reads back.

Skips (with the reason) only when Neovim is not installed or when this environment has no
`edit-fidelity serve` at all. Debian's `neovim` package (0.7.2) is enough.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.doubles.scripted import ScriptedServer, Step

VENV_BIN = Path(sys.executable).parent
SERVER = VENV_BIN / ("edit-fidelity.exe" if os.name == "nt" else "edit-fidelity")
API_ENV = "EDIT_FIDELITY_NVIM_TEST_KEY"
API_KEY = "sk-nvim-test-0d15ea5e"
MODEL = "scripted-overeditor"

ORIGINAL = """def total_positive(items):
    # sum of the positive items
    s = 0
    for i in range(1, len(items)):
        if items[i] > 0:
            s += items[i]
    return s


def untouched(x):
    return x * 2
"""

# The instruction asks for one thing (start the loop at the first item); the model also renames,
# adds input validation and a docstring, drops the comment and rewrites the loop.
OVER_EDIT = '''def total_positive(values):
    """Sum the positive values."""
    if values is None:
        raise ValueError("values must not be None")
    result = 0
    for value in values:
        if value > 0:
            result += value
    return result


def untouched(x):
    return x * 2
'''

INSTRUCTION = "The loop skips the first item; make it start at index 0."


def _nvim() -> str | None:
    return shutil.which("nvim")


def _serve_available() -> tuple[bool, str]:
    """Is there an `edit-fidelity serve` next to the interpreter running the tests?

    Missing (no console script, or no `serve` subcommand) is a skip; a `serve` that exists but
    crashes is a failure, not a skip.
    """
    if not SERVER.exists():
        return False, f"{SERVER} does not exist (the project is not installed in this venv)"
    proc = subprocess.run([str(SERVER), "serve", "--help"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        if "invalid choice: 'serve'" in proc.stderr:
            return False, "this edit-fidelity has no `serve` subcommand"
        pytest.fail(f"`edit-fidelity serve --help` exits {proc.returncode}:\n{proc.stderr[-3000:]}")
    return True, ""


@pytest.fixture
def model_server():
    """The shared scripted OpenAI server: every chat completion is the over-edit in a ```python block."""
    content = "Sure, here is a cleaner version:\n\n```python\n" + OVER_EDIT + "```\n"
    with ScriptedServer({MODEL: [Step(content=content, usage=(120, 80))]}) as srv:
        yield srv


# The whole editor session, in Neovim 0.7's Lua API. Parameters arrive as a JSON file.
LUA = r"""
local params = vim.fn.json_decode(table.concat(vim.fn.readfile(vim.env.EF_PARAMS), "\n"))
local out = { steps = {} }
local function step(name) table.insert(out.steps, name) end
local function finish()
  vim.fn.writefile({ vim.fn.json_encode(out) }, params.out)
  vim.cmd("qall!")
end

local ok, err = pcall(function()
  vim.lsp.set_log_level("debug")
  vim.cmd("edit " .. vim.fn.fnameescape(params.file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = "edit-fidelity",
    cmd = params.cmd,
    root_dir = params.root,
    init_options = { editFidelity = { backends = { params.backend } } },
  })
  assert(client_id, "start_client failed")
  vim.lsp.buf_attach_client(bufnr, client_id)
  local ready = vim.wait(30000, function()
    local c = vim.lsp.get_client_by_id(client_id)
    return c ~= nil and c.server_capabilities ~= nil and next(c.server_capabilities) ~= nil
  end, 20)
  assert(ready, "the server did not initialize within 30 s")
  step("initialized")
  local client = vim.lsp.get_client_by_id(client_id)
  out.commands = (client.server_capabilities.executeCommandProvider or {}).commands or {}

  -- 1. Ask for the edit (whole file: no range).
  local version = vim.lsp.util.buf_versions[bufnr]
  local uri = vim.uri_from_bufnr(bufnr)
  local res, req_err = vim.lsp.buf_request_sync(bufnr, "workspace/executeCommand", {
    command = "editFidelity.requestEdit",
    arguments = { { uri = uri, version = version, instruction = params.instruction } },
  }, 60000)
  assert(res, "requestEdit: " .. tostring(req_err))
  local answer = res[client_id]
  assert(answer, "requestEdit: no answer from the client")
  assert(not answer.err and not answer.error, "requestEdit error: " .. vim.inspect(answer.err or answer.error))
  out.request = answer.result
  step("requested")

  -- 2. Fidelity diagnostics for the pending proposal.
  vim.wait(15000, function() return #vim.diagnostic.get(bufnr) > 0 end, 20)
  out.diagnostics_pending = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out.diagnostics_pending, { source = d.source, message = d.message, lnum = d.lnum, severity = d.severity })
  end
  out.text_before_apply = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n"

  -- 3. Apply it: the server sends workspace/applyEdit, Neovim's default handler applies it.
  local proposal = answer.result.proposals[1]
  local res2, apply_err = vim.lsp.buf_request_sync(bufnr, "workspace/executeCommand", {
    command = "editFidelity.applyProposal",
    arguments = { { id = proposal.id } },
  }, 30000)
  assert(res2, "applyProposal: " .. tostring(apply_err))
  local applied = res2[client_id]
  assert(not applied.err and not applied.error, "applyProposal error: " .. vim.inspect(applied.err or applied.error))
  out.apply = applied.result
  step("applied")
  vim.wait(5000, function()
    return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n" == params.expected
  end, 20)
  out.text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n"
  out.changedtick_after = vim.lsp.util.buf_versions[bufnr]

  -- 4. Applying the same proposal again is refused (it is closed), and nothing changes.
  local res3 = vim.lsp.buf_request_sync(bufnr, "workspace/executeCommand", {
    command = "editFidelity.applyProposal",
    arguments = { { id = proposal.id } },
  }, 30000)
  out.apply_again = res3 and res3[client_id] and res3[client_id].result or vim.NIL
  out.text_after_second_apply = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n"

  vim.lsp.stop_client(client_id)
  vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
  step("stopped")
end)
if not ok then out.error = tostring(err) end
finish()
"""


def _run_neovim(tmp_path: Path, base_url: str, lua_source: str = LUA, **extra) -> tuple[dict, str]:
    work = tmp_path / "project"
    work.mkdir()
    src = work / "totals.py"
    src.write_text(ORIGINAL)
    out_file = tmp_path / "result.json"
    params = {
        "file": str(src),
        "root": str(work),
        "cmd": [str(SERVER), "serve"],
        "backend": {"name": "scripted", "baseUrl": base_url, "model": MODEL, "apiKeyEnv": API_ENV, "timeoutS": 20},
        "instruction": INSTRUCTION,
        "expected": OVER_EDIT,
        "out": str(out_file),
        **extra,
    }
    (tmp_path / "params.json").write_text(json.dumps(params))
    lua = tmp_path / "session.lua"
    lua.write_text(lua_source)
    home = tmp_path / "home"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "EF_PARAMS": str(tmp_path / "params.json"),
        API_ENV: API_KEY,
    }
    env.pop("VIMINIT", None)
    proc = subprocess.run(
        [_nvim(), "--headless", "-u", "NONE", "-i", "NONE", "-n", "--noplugin", "-c", f"luafile {lua}"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    logs = list(home.rglob("lsp.log"))
    log_tail = "\n".join(logs[0].read_text(errors="replace").splitlines()[-60:]) if logs else "(no lsp.log)"
    diag = f"nvim exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}\nlsp.log tail:\n{log_tail}"
    assert out_file.exists(), f"Neovim wrote no result.\n{diag}"
    result = json.loads(out_file.read_text())
    assert "error" not in result, f"Lua session failed: {result['error']}\nsteps: {result['steps']}\n{diag}"
    return result, diag


def _require_editor_and_server() -> None:
    if _nvim() is None:
        pytest.skip("Neovim is not installed (Debian: apt-get install -y neovim)")
    available, why = _serve_available()
    if not available:
        pytest.skip(f"the language server is not available: {why}")


def test_neovim_requests_previews_and_applies_an_edit(tmp_path, model_server):
    _require_editor_and_server()

    result, diag = _run_neovim(tmp_path, model_server.base_url)

    assert result["steps"] == ["initialized", "requested", "applied", "stopped"], diag
    assert {"editFidelity.requestEdit", "editFidelity.applyProposal"} <= set(result["commands"])

    # The request reached the scripted model with the key from the named environment variable.
    assert len(model_server.received) == 1
    assert model_server.received[0].body["model"] == MODEL
    assert [r.headers.get("authorization") for r in model_server.received] == [f"Bearer {API_KEY}"]
    prompt = json.dumps(model_server.received[0].body["messages"])
    assert "start at index 0" in prompt and "total_positive" in prompt

    (proposal,) = result["request"]["proposals"]
    assert proposal["status"] == "ok", proposal
    assert proposal["backend"] == "scripted"
    assert proposal["edits"], "an over-edit must produce text edits"
    report = proposal["report"]
    assert report["distance"]["no_comments"]["normalized"] > 0.2
    assert any(h["unrequested"] for h in report["hunks"]), report["hunks"]

    # Fidelity warnings on the buffer while the proposal is pending; nothing applied yet.
    assert result["text_before_apply"] == ORIGINAL
    sources = {d["source"] for d in result["diagnostics_pending"]}
    assert "edit-fidelity" in sources, result["diagnostics_pending"]
    messages = " | ".join(d["message"] for d in result["diagnostics_pending"] if d["source"] == "edit-fidelity")
    assert any(word in messages for word in ("renamed", "validation", "comment", "docstring")), messages

    # Applied through workspace/applyEdit: the buffer is exactly the model's text.
    assert result["apply"]["applied"] is True, result["apply"]
    assert result["text"] == OVER_EDIT
    # A closed proposal is refused the second time and the buffer stays as it is.
    assert result["apply_again"]["applied"] is False
    assert result["text_after_second_apply"] == OVER_EDIT


# The user-facing Neovim module documented in client-vscode/README.md, driven through its commands.
README = Path(__file__).resolve().parents[2] / "client-vscode" / "README.md"

README_SESSION = r"""
local params = vim.fn.json_decode(table.concat(vim.fn.readfile(vim.env.EF_PARAMS), "\n"))
local out = { steps = {} }
local function text(b) return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n") .. "\n" end
local ok, err = pcall(function()
  local ef = dofile(params.module)
  vim.cmd("filetype on")
  ef.setup({ cmd = params.cmd, settings = { backends = { params.backend } } })
  vim.cmd("edit " .. vim.fn.fnameescape(params.file)) -- FileType python attaches the server
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(30000, function()
    local c = ef.state.client_id and vim.lsp.get_client_by_id(ef.state.client_id)
    return c and c.server_capabilities ~= nil and next(c.server_capabilities) ~= nil
  end, 20), "the server did not initialize")
  table.insert(out.steps, "attached")

  vim.cmd("EFEdit " .. params.instruction)
  assert(vim.wait(60000, function() return ef.state.preview ~= nil end, 20), "no preview appeared")
  out.preview_text = text(ef.state.preview)
  out.buffer_during_preview = text(bufnr)
  out.diff_windows = 0
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_option(w, "diff") then out.diff_windows = out.diff_windows + 1 end
  end
  assert(vim.wait(15000, function() return #vim.diagnostic.get(bufnr) > 0 end, 20), "no diagnostics")
  out.sources = vim.tbl_map(function(d) return d.source end, vim.diagnostic.get(bufnr))
  table.insert(out.steps, "previewed")

  vim.api.nvim_set_current_buf(bufnr)
  vim.cmd("EFAccept")
  assert(vim.wait(30000, function() return ef.state.proposal == nil end, 20), "accept did not finish")
  vim.wait(5000, function() return text(bufnr) == params.expected end, 20)
  out.text = text(bufnr)
  out.preview_closed = ef.state.preview == nil
  table.insert(out.steps, "accepted")
  vim.lsp.stop_client(ef.state.client_id)
end)
if not ok then out.error = tostring(err) end
vim.fn.writefile({ vim.fn.json_encode(out) }, params.out)
vim.cmd("qall!")
"""


def _readme_lua_module() -> str:
    text = README.read_text()
    start = text.index("### Neovim")
    block = text.index("```lua\n", start) + len("```lua\n")
    return text[block : text.index("```", block)]


def test_the_documented_neovim_module_previews_and_accepts(tmp_path, model_server):
    _require_editor_and_server()
    module = tmp_path / "edit_fidelity.lua"
    module.write_text(_readme_lua_module())

    result, diag = _run_neovim(tmp_path, model_server.base_url, README_SESSION, module=str(module))

    assert result["steps"] == ["attached", "previewed", "accepted"], diag
    # The diff split showed the proposal while the buffer was still untouched.
    assert result["preview_text"] == OVER_EDIT
    assert result["buffer_during_preview"] == ORIGINAL
    assert result["diff_windows"] == 2
    assert "edit-fidelity" in result["sources"]
    # :EFAccept applied it through the server and closed the preview.
    assert result["text"] == OVER_EDIT
    assert result["preview_closed"] is True
