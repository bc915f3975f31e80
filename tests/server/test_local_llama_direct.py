"""Choosing the llama.cpp engine in the worker, with the real library and the real test model: the
direct engine where the library's parameter layout is the one known here, llama.cpp's server (saying
why) where it is not, and a clear refusal when the direct engine was asked for by name."""

from __future__ import annotations

import subprocess
import sys

import pytest
from local_model import NAME, fetch_test_model

from server.backends import llama_capi
from server.backends.local_llama import LlamaModel
from server.backends.local_llama_direct import LlamaDirect, load_gguf
from server.backends.local_protocol import Generate, Loading, ModelUnavailable, WorkerConfig


class Channel:
    def __init__(self) -> None:
        self.events: list[object] = []

    def send(self, event: object) -> None:
        self.events.append(event)


class Inbox:
    def is_cancelled(self, job_id: int) -> bool:
        return False


@pytest.fixture(scope="module")
def model_dir():
    return str(fetch_test_model().parent)


def config(model_dir: str, **kw) -> WorkerConfig:
    return WorkerConfig(source="named", model=NAME, threads=1, context=2048, models_dir=model_dir, **kw)


def test_the_direct_engine_where_the_layout_is_known(model_dir):
    channel = Channel()
    engine = load_gguf(config(model_dir, cache_reuse=16), channel)
    try:
        assert isinstance(engine, LlamaDirect) and engine.ready.api == "direct"
        assert engine.n_ctx == 2048 and engine.reuse_chunks == 16  # a RoPE model: its cache can be moved
        req = Generate(id=1, messages=[("user", "Say hi.")], max_new_tokens=4, document="a#1")
        done = engine.generate(req, Inbox(), channel)
        assert done.finish_reason in ("stop", "length") and 0 < done.completion_tokens <= 4  # type: ignore[union-attr]
        # too long for the context: one clear failure, the engine stays usable
        big = Generate(id=2, messages=[("user", "word " * 5000)], max_new_tokens=4)
        failed = engine.generate(big, Inbox(), channel)
        assert failed.kind == "too_large" and "context" in failed.message  # type: ignore[union-attr]
        assert engine.generate(req, Inbox(), channel).finish_reason in ("stop", "length")  # type: ignore[union-attr]
    finally:
        engine.close()


def test_another_layout_falls_back_to_the_server_engine(model_dir, monkeypatch):
    monkeypatch.setattr(llama_capi, "_FINGERPRINT", {0: 4096})  # what another build's defaults would show
    channel = Channel()
    engine = load_gguf(config(model_dir), channel)
    try:
        assert isinstance(engine, LlamaModel) and engine.ready.api == "server"
        said = [e.message for e in channel.events if isinstance(e, Loading)]
        assert any("not the layout" in m and "llama.cpp's server" in m for m in said), said
    finally:
        engine.close()


def test_the_direct_engine_by_name_refuses_in_one_line(model_dir, monkeypatch):
    monkeypatch.setattr(llama_capi, "_FINGERPRINT", {0: 4096})
    with pytest.raises(ModelUnavailable, match="direct llama.cpp engine is unavailable: .*not the layout"):
        load_gguf(config(model_dir, llama_api="direct"), Channel())


DROP_AT_ONCE = """
import sys
from server.backends.local_llama import LlamaModel
from server.backends.local_protocol import WorkerConfig

class Channel:
    def send(self, event):
        pass

cfg = WorkerConfig(source="named", model=sys.argv[1], threads=1, context=512, models_dir=sys.argv[2], llama_api="server")
for i in range(6):
    engine = LlamaModel(cfg, Channel())
    engine.close()
    del engine  # the server object goes here, a moment after it was made
    print("dropped", i, flush=True)
"""


def test_the_server_engine_can_be_dropped_right_after_loading(model_dir):
    # llama.cpp's task loop starts after its server object exists, and an object dropped before the loop
    # ran hung the process for ever (its terminate was lost, the destructor joined the loop's thread).
    # Loaded and dropped at once, six times, with both cores kept busy: every drop returns.
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        run = subprocess.run(
            [sys.executable, "-c", DROP_AT_ONCE, NAME, model_dir], capture_output=True, text=True, timeout=300
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"dropping a just-loaded server engine hung: {exc.stdout!r}")
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.count("dropped") == 6
