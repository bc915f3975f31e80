"""The `local` backend on llama.cpp with a real model (SmolLM2-135M-Instruct, GGUF): threads measured
at start, the model's chat template, token progress, the prompt prefix taken from the KV cache on
the next request, the rest of the document after a changed line too (the direct engine, within one
open document), cancellation that stops the computation (in the prompt too), one model per server
process, the server engine as the fallback with the same prompt.
Assertions are on behaviour (counts, states, pids), never on timings or on the small model's text."""

from __future__ import annotations

import asyncio
import os

import pytest
import pytest_asyncio
from local_model import SPEC, fetch_test_model
from test_lsp_local import asleep_throughout

from server.backends import BackendError
from server.backends.local_backend import LocalBackend, LocalProgress, local_backend_config
from server.backends.prompts import build_messages

pytestmark = pytest.mark.asyncio(loop_scope="module")

DOC = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(30))
MESSAGES = build_messages("fix the bug in f3", DOC, style="minimal")


@pytest.fixture(scope="module")
def model():
    return fetch_test_model()


def make(spec: str = SPEC, **kw) -> LocalBackend:
    fields = {"max_tokens": 24, "timeout_s": 120.0, **kw.pop("config", {})}
    return LocalBackend(local_backend_config(spec, **fields), progress_interval_s=0.0, **kw)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def backend(model):
    b = make()  # threads measured at start
    loading: list[LocalProgress] = []
    ready = await b.start(loading.append)
    assert ready.engine == "gguf" and ready.api == "direct" and ready.path == str(model) and ready.threads in (1, 2)
    assert 1 in ready.threads_probe and ready.threads_probe[1] > 0
    if len(os.sched_getaffinity(0)) >= 2:  # both measured; the faster (one unless two clearly win) kept
        assert set(ready.threads_probe) == {1, 2}
        assert ready.threads == (2 if ready.threads_probe[2] > ready.threads_probe[1] * 1.15 else 1)
    assert any("decode:" in p.message for p in loading) or len(ready.threads_probe) == 1
    assert ready.bytes_per_token and ready.bytes_per_token > 50_000_000
    yield b
    await b.aclose()


async def test_answers_with_token_progress_and_reuses_the_prompt_prefix(backend):
    events: list[LocalProgress] = []
    first = await backend.complete(MESSAGES, on_progress=events.append)
    assert first.text.strip() and first.prompt_tokens > 300 and 0 < first.completion_tokens <= 24
    counts = [e.tokens for e in events if e.tokens]
    assert counts and counts == sorted(counts) and counts[-1] <= first.completion_tokens
    # the same document again (another instruction would differ only after the system prompt and
    # the first words): the prompt comes from the KV cache, all but its last token
    again = await backend.complete(MESSAGES)
    stats = backend.last_stats
    assert stats is not None and stats.cached_tokens >= first.prompt_tokens - 1
    assert again.text == first.text  # greedy, and the cache changes nothing
    other = build_messages("fix the bug in f3", DOC.replace("x + 29", "x + 290"), style="minimal")
    await backend.complete(other)  # one line changed near the end: the prefix before it is reused
    stats = backend.last_stats
    assert stats is not None and first.prompt_tokens * 0.8 < stats.cached_tokens < first.prompt_tokens


async def test_the_document_first_layout_keeps_the_document_cached_across_instructions(backend):
    """What the server sends the embedded model (`document_first`): a new instruction on the same document
    computes only the instruction and the answer."""
    cached = {}
    for document_first in (False, True):
        one = build_messages("fix the bug in f3", DOC, style="minimal", document_first=document_first)
        two = build_messages("add a docstring to f7", DOC, style="minimal", document_first=document_first)
        first = await backend.complete(one)
        await backend.complete(two)
        stats = backend.last_stats
        assert stats is not None
        cached[document_first] = stats.cached_tokens / first.prompt_tokens
    # the instruction first: only the system prompt and the first words are shared; the document first: all of it
    assert cached[False] < 0.2 and cached[True] > 0.8, cached


def lines_changed(doc: str, at: int, new: str) -> str:
    lines = doc.splitlines(keepends=True)
    return "".join([*lines[:at], new, *lines[at + 1 :]])


async def test_a_changed_line_of_the_same_document_reuses_the_cache_after_it(backend):
    """The editor's case: one open document, a line in the middle edited, the same instruction again. The
    direct engine computes the changed line and the last token; the runs around it come from the cache.
    Another document with the same text gets the exact prefix only."""
    ask = lambda text: build_messages("fix the bug in f3", text, style="minimal", document_first=True)  # noqa: E731
    first = await backend.complete(ask(DOC), document="file:///a.py#1")
    changed = lines_changed(DOC, 60, "    return x - 15  # edited\n")
    await backend.complete(ask(changed), document="file:///a.py#1")
    warm = backend.last_stats
    assert warm is not None and warm.cached_tokens >= warm.prompt_tokens - 20, (warm, first.prompt_tokens)
    assert warm.cached_tokens < warm.prompt_tokens  # the changed line was computed
    await backend.complete(ask(DOC), document="file:///b.py#1")  # another document: prefix only
    other = backend.last_stats
    assert other is not None and other.cached_tokens < other.prompt_tokens * 0.75, other
    # the same document reopened is another opening: its versions do not share moved runs either
    await backend.complete(ask(changed), document="file:///b.py#2")
    reopened = backend.last_stats
    assert reopened is not None and reopened.cached_tokens < reopened.prompt_tokens * 0.75, reopened


async def test_cancelling_while_the_prompt_is_computed_stops_it(backend):
    """llama.cpp's abort callback: a cancel lands inside the prompt's computation, not after it."""
    # nothing of it after line 1 is cached, and long (thousands of tokens): the cancel lands inside it
    fresh = "# another module\n" + DOC.replace("return x", "return -x") * 3
    seen: list[str] = []
    task = asyncio.ensure_future(
        backend.complete(build_messages("document f9", fresh), on_progress=lambda p: seen.append(p.message))
    )
    deadline = asyncio.get_running_loop().time() + 120
    while not any(m.startswith("prompt of") for m in seen) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.005)
    assert any(m.startswith("prompt of") for m in seen), "the prompt was not started within the safety timeout"
    worker = backend._worker
    assert worker is not None
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asleep_throughout(worker.proc.pid)
    stopped = backend.last_cancelled
    assert worker.alive and stopped is not None and stopped.finish_reason == "cancelled"
    assert stopped.completion_tokens == 0 and stopped.ttft_ms is None  # stopped before its first token
    done = await backend.complete(MESSAGES)  # the cache was cleared; the next request is whole
    assert done.text.strip() and backend._worker is worker


async def test_the_server_engine_reads_the_same_prompt(backend):
    """The fallback (llama.cpp's server, Jinja chat template) and the direct engine (llama.cpp's
    built-in template) tokenize a request to the same prompt, and both answer it greedily alike."""
    direct = await backend.complete(MESSAGES, max_tokens=8)
    server = make(llama_api="server", threads=1)
    try:
        ready = await server.start()
        assert ready.api == "server"
        answer = await server.complete(MESSAGES, max_tokens=8)
        assert answer.prompt_tokens == direct.prompt_tokens
        assert answer.text == direct.text
    finally:
        await server.aclose()


async def test_a_prompt_over_the_context_is_too_large(model):
    small = make(config={"max_tokens": 8}, context=256, threads=1)
    big = build_messages("x", DOC * 4, style="minimal")
    with pytest.raises(BackendError) as err:
        await small.complete(big)
    assert err.value.kind == "too_large" and "context" in err.value.message
    await small.aclose()


async def test_cancelling_stops_the_generation_and_keeps_the_model(backend):
    long = make(config={"max_tokens": 100_000 // 40}, ignore_eos=True)  # the same model: the same worker
    seen: list[int] = []
    task = asyncio.ensure_future(long.complete(MESSAGES, on_progress=lambda p: seen.append(p.tokens)))
    deadline = asyncio.get_running_loop().time() + 120
    while not any(seen) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    assert any(seen), "no token within the safety timeout"
    worker = backend._worker
    assert worker is not None and long._worker is worker  # one model, one worker
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asleep_throughout(worker.proc.pid)  # nothing computes any more
    assert worker.alive and long.last_cancelled is not None and long.last_cancelled.finish_reason == "cancelled"
    assert 0 < long.last_cancelled.completion_tokens < 2500
    done = await backend.complete(MESSAGES)  # the same worker answers the next request
    assert done.text.strip() and backend._worker is worker


async def test_one_model_per_server_process(backend, tmp_path, model):
    worker = backend._worker
    assert worker is not None
    copy = tmp_path / "copy.gguf"
    os.link(model, copy) if os.stat(model).st_dev == os.stat(tmp_path).st_dev else copy.write_bytes(model.read_bytes())
    other = make(f"local:{copy}", threads=1)  # another model file
    await other.complete(MESSAGES, max_tokens=2)
    assert not worker.alive  # the first model's worker was stopped before the second loaded
    assert other._worker is not None and other._worker is not worker and backend._worker is None
    await other.aclose()
    await backend.complete(MESSAGES, max_tokens=2)  # and back: loaded again on first use
    assert backend._worker is not None and backend.restarts == 0
