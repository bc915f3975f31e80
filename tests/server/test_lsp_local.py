"""The embedded `local` backend through the real server and a real LSP client: an edit request served
by the real test model on llama.cpp (SmolLM2-135M-Instruct, GGUF) that comes back as a parseable edit
with diagnostics; cancellation; the protocol with a tiny random transformers model (`local:PATH`:
token progress, cancellation of the worker); and the default backend offline with nothing fetched.

The server runs with HF_HUB_OFFLINE=1 and an empty HF_HOME: nothing here can reach for the hub."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("xllamacpp")

import pytest_lsp
from local_model import SPEC, fetch_test_model
from lsp_helpers import SAMPLE, SERVER_CMD, SERVER_ENV, execute, start_session, wait_for
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from server.backends.local_backend import IGNORE_EOS_ENV, THREADS_ENV
from server.fidelity import TextEdit, apply_text_edits
from server.models.catalog import MODELS_ENV

URI = "file:///tmp/local_sample.py"
HF_HOME = tempfile.mkdtemp(prefix="edit-fidelity-test-hf-")
EMPTY_MODELS = tempfile.mkdtemp(prefix="edit-fidelity-test-models-")
# one torch thread: two OpenMP threads spin against each other on a shared 2-core machine
ENV = {**SERVER_ENV, "HF_HOME": HF_HOME, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
# the real test model, fetched by the project's code into the models cache; one llama.cpp thread
REAL_ENV = {**ENV, MODELS_ENV: str(fetch_test_model().parent), THREADS_ENV: "1"}
LONG_ENV = {**REAL_ENV, IGNORE_EOS_ENV: "1"}  # every answer runs to its token limit: one to cancel


@pytest.fixture(scope="module")
def tiny_model():
    from tools.doubles.local_tiny import build_tiny_model

    directory = Path(tempfile.mkdtemp(prefix="edit-fidelity-tiny-"))
    try:
        yield build_tiny_model(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        shutil.rmtree(HF_HOME, ignore_errors=True)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, server_env=ENV))
async def lsp(lsp_client: LanguageClient):
    yield
    with contextlib.suppress(Exception):  # a server that died has nothing left to shut down
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, server_env=REAL_ENV))
async def real(lsp_client: LanguageClient):
    yield
    with contextlib.suppress(Exception):
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, server_env=LONG_ENV))
async def long_answers(lsp_client: LanguageClient):
    yield
    with contextlib.suppress(Exception):
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, server_env={**ENV, MODELS_ENV: EMPTY_MODELS}))
async def nothing_fetched(lsp_client: LanguageClient):
    yield
    with contextlib.suppress(Exception):
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)


async def test_the_real_model_answers_with_a_parseable_edit_and_diagnostics(real):
    editor = await start_session(real, {"backends": [{"name": "smol", "model": SPEC, "maxTokens": 400}]})
    editor.open(URI, SAMPLE)
    result = await execute(real, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    [p] = result["proposals"]
    assert p["backend"] == "smol" and p["status"] == "ok", p.get("error")
    edited = apply_text_edits(SAMPLE, [msgspec.convert(e, TextEdit) for e in p["edits"]])
    ast.parse(edited)  # the answer's code, spliced into the document, parses
    assert edited != SAMPLE and p["edits"] and p["report"] is not None
    assert p["usage"]["promptTokens"] > 100 and 0 < p["usage"]["completionTokens"] <= 400
    diagnostics = await wait_for(lambda: real.diagnostics.get(URI), timeout=30)
    assert diagnostics and all(d.source == "edit-fidelity" for d in diagnostics)
    assert any("tokens" in r for r in token_reports(real))  # tokens streamed into $/progress


async def test_cancelling_stops_the_real_model(long_answers):
    lsp = long_answers
    editor = await start_session(lsp, {"backends": [{"name": "smol", "model": SPEC, "maxTokens": 8000}]})
    editor.open(URI, SAMPLE)
    task = asyncio.ensure_future(
        execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "x"})
    )
    await wait_for(lambda: any(re.search(r": [1-9]\d*/\d+ tokens", r) for r in token_reports(lsp)), timeout=120)
    worker = worker_pid(lsp)
    assert worker is not None
    await wait_for(lambda: "R" in thread_states(worker), timeout=30)  # it computes
    token = next(t for t, r in lsp.progress_reports.items() if r)
    lsp.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    with pytest.raises(Exception, match="(?i)cancel"):
        await asyncio.wait_for(task, 30)  # a safety net: the reply comes within a token
    await asleep_throughout(worker)  # the model stays loaded in the same process but computes no more
    assert worker_pid(lsp) == worker


async def test_an_edited_line_costs_the_line_not_the_document(real):
    """One open document: after a line in its middle changes, the same request takes the rest of the
    document from the model's cache too (usage.cachedTokens); reopened, it is another document."""
    editor = await start_session(real, {"backends": [{"name": "smol", "model": SPEC, "maxTokens": 12}]})
    text = SAMPLE + "".join(f"\n\ndef helper_{i}(x):\n    return x * {i}\n" for i in range(40))
    editor.open(URI, text)
    ask = {"uri": URI, "instruction": "fix the bug in mean_above"}
    first = (await execute(real, "editFidelity.requestEdit", {**ask, "version": 1}))["proposals"][0]["usage"]
    middle = len(text.splitlines()) // 2
    line = text.splitlines()[middle]
    span = types.Range(types.Position(middle, 0), types.Position(middle, len(line)))
    version = editor.change(URI, [types.TextEdit(span, "    return x + 1  # edited")])
    warm = (await execute(real, "editFidelity.requestEdit", {**ask, "version": version}))["proposals"][0]["usage"]
    assert first["promptTokens"] > 500 and warm["cachedTokens"] >= warm["promptTokens"] - 20, (first, warm)
    real.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=URI)))
    editor.open(URI, text)  # reopened, the original text: the cache holds the edited version of the old opening
    again = (await execute(real, "editFidelity.requestEdit", {**ask, "version": 1}))["proposals"][0]["usage"]
    assert again["cachedTokens"] < again["promptTokens"] * 0.75, again  # the prefix before the edited line only


def local_settings(model: Path, **extra) -> dict:
    entry = {"name": "tiny", "model": f"local:{model}", "maxTokens": 40, "timeoutS": 60, **extra}
    return {"backends": [entry]}


def token_reports(lsp: LanguageClient) -> list[str]:
    return [
        r.message or "" for reports in lsp.progress_reports.values() for r in reports if "tokens" in (r.message or "")
    ]


async def test_edit_request_served_by_the_local_model_with_token_progress(lsp, tiny_model):
    editor = await start_session(lsp, local_settings(tiny_model))
    editor.open(URI, SAMPLE)
    listed = await execute(lsp, "editFidelity.listBackends", {})
    assert [(b["name"], b["model"]) for b in listed["backends"]] == [("tiny", f"local:{tiny_model}")]
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    [p] = result["proposals"]
    assert p["backend"] == "tiny"
    # the random model's text is garbage: an error proposal that says there was no code, or (rarely) a
    # proposal measured like any other
    if p["status"] == "error":
        assert p["errorKind"] == "no_code" and "without code" in p["error"]
    else:
        assert p["report"] is not None
    assert p["usage"]["completionTokens"] == 40 and p["usage"]["promptTokens"] > 100
    assert p["truncated"] is True  # the tiny model runs to the token limit
    reports = token_reports(lsp)
    assert reports and any("tiny" in r for r in reports)
    kinds = [r.kind for reports in lsp.progress_reports.values() for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end"


async def test_cancelling_the_request_stops_the_model(lsp, tiny_model):
    editor = await start_session(lsp, local_settings(tiny_model, maxTokens=4000, timeoutS=600))
    editor.open(URI, SAMPLE)
    task = asyncio.ensure_future(
        execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "x"})
    )
    await wait_for(lambda: token_reports(lsp), timeout=30)
    worker = worker_pid(lsp)
    assert worker is not None
    # generating, the worker is runnable (on a CPU or waiting for one: a loaded machine changes nothing)
    await wait_for(lambda: "R" in thread_states(worker), timeout=30)
    token = next(t for t, r in lsp.progress_reports.items() if r)
    lsp.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    with pytest.raises(Exception, match="(?i)cancel"):
        await asyncio.wait_for(task, 30)  # a safety net: the reply comes within a token
    # the worker stays (the model stays loaded, the same process) but no longer computes: every one of
    # its threads sleeps, sample after sample (a generation left running would be runnable in each)
    await asleep_throughout(worker)
    assert worker_pid(lsp) == worker
    assert (await execute(lsp, "editFidelity.listBackends", {}))["backends"][0]["name"] == "tiny"


async def test_without_backends_the_embedded_default_model_is_used(nothing_fetched):
    lsp = nothing_fetched
    editor = await start_session(lsp, {})
    editor.open(URI, SAMPLE)
    listed = await execute(lsp, "editFidelity.listBackends", {})
    assert [(b["name"], b["model"]) for b in listed["backends"]] == [("local", "local")]
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix the bug"})
    [p] = result["proposals"]
    # offline with nothing fetched: one clear line that says what to run, no download attempt
    assert p["status"] == "error" and p["errorKind"] == "model_unavailable"
    assert "offline" in p["error"] and "edit-fidelity model fetch qwen2.5-coder-" in p["error"]
    assert "\n" not in p["error"]


def worker_pid(lsp: LanguageClient) -> int | None:
    """The model worker this client's server started (its child): never another test's worker of the same
    model, which runs beside it on another pytest worker or in another checkout's run."""
    server = lsp._server
    assert server is not None
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat[1]) == server.pid and "server.backends.local_worker" in cmdline:  # stat(5) field 4: ppid
            return int(entry)
    return None


def thread_states(pid: int) -> list[str]:
    """The scheduler state of each thread of the process: R runs or waits for a CPU, S and D sleep."""
    states: list[str] = []
    if not os.path.isdir(f"/proc/{pid}/task"):
        return states  # gone
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            states.append(Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()[0])
    return states


async def asleep_throughout(pid: int, samples: int = 25, interval: float = 0.02, timeout: float = 30) -> None:
    """Wait until `samples` samples in a row find no thread of the process runnable (the timeout is
    a safety net: a process that computes is runnable in every sample however slow the machine)."""
    deadline = asyncio.get_running_loop().time() + timeout
    quiet = 0
    while quiet < samples:
        states = thread_states(pid)
        assert states, f"process {pid} is gone"
        quiet = 0 if "R" in states else quiet + 1
        assert asyncio.get_running_loop().time() < deadline, f"process {pid} still computes: {states}"
        await asyncio.sleep(interval)
