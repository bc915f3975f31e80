"""The direct llama.cpp engine of the model worker: a GGUF model driven through llama.cpp's C API
(`llama_capi`), so that the KV cache can be edited, not only cut after a common prefix.

- The prompt is the model's chat template applied by llama.cpp (`llama_chat_apply_template`, the
  templates llama.cpp knows; a GGUF with another template falls back to the server engine).
- A request reuses what the cache holds (`kv_plan`): the common prefix always (exact); on the same
  document as the previous request (the request's `document`: the editor's open document) also the
  runs after a changed range, moved into place, so a one-line change costs the changed line and the
  instruction instead of the rest of the document. Those moved cells attended to the old line
  before them: an approximation llama.cpp's `n_cache_reuse` makes too, kept to one open document
  (a benchmark opens every sample as its own document and gets exact prefix reuse only).
- A range to compute before cells already in the cache cannot be decoded in the main sequence
  (llama.cpp wants each sequence's new positions after its last one): it is computed in a scratch
  sequence holding only the cells before it, then given to the main one. Both share one cache.
- Cancellation and the deadline are checked after every token and, through llama.cpp's abort
  callback, inside the prompt's computation too; an aborted prompt clears the cache.
- Threads: as configured, else measured at start like the server engine does (one unless two are
  clearly faster), on the same context.
"""

from __future__ import annotations

import ctypes as C
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from server.backends import llama_capi as capi
from server.backends.kv_plan import plan
from server.backends.local_llama import (
    PROBE_S,
    PROBE_TOKENS,
    TWO_THREADS_GAIN,
    LlamaModel,
    open_gguf,
    usable_cpus,
)
from server.backends.local_protocol import (
    Failed,
    Finished,
    Generate,
    Loading,
    ModelUnavailable,
    Ready,
    Started,
    Tokens,
    WorkerConfig,
)
from server.backends.thread_choice import ThreadChoice

BATCH = 512  # tokens per decode call of the prompt
MAIN, SCRATCH = 0, 1  # sequence ids
CONTEXT_STEP = 256  # llama.cpp rounds the context up to this


def load_gguf(cfg: WorkerConfig, channel: Any) -> LlamaDirect | LlamaModel:
    """The direct engine where this build and model allow it (`llama_api` auto), else llama.cpp's server."""
    if cfg.llama_api != "server":
        try:
            return LlamaDirect(cfg, channel)
        except capi.CapiUnavailable as exc:
            if cfg.llama_api == "direct":
                raise ModelUnavailable(f"the direct llama.cpp engine is unavailable: {exc}") from None
            channel.send(Loading("loading", f"{exc}; using llama.cpp's server (the cache reuses prefixes only)"))
    return LlamaModel(cfg, channel)


class LlamaDirect:
    def __init__(self, cfg: WorkerConfig, channel: Any) -> None:
        started = time.monotonic()
        api = capi.lib()
        path, info = open_gguf(cfg, channel)
        context = min(cfg.context, info.context_length or cfg.context)
        n_ctx = -(-context // CONTEXT_STEP) * CONTEXT_STEP
        params = capi.context_params(n_ctx, BATCH, seqs=2)  # before loading: a wrong layout costs nothing
        channel.send(Loading("loading", f"loading {info.name} ({info.file_bytes / 1e6:,.0f} MB)"))
        self.api = api
        self.model = api.llama_model_load_from_file(path.encode(), api.llama_model_default_params())
        if not self.model:
            raise ModelUnavailable(f"llama.cpp cannot load {path}")
        self.ctx = None
        self.vocab = api.llama_model_get_vocab(self.model)
        self.template = api.llama_model_chat_template(self.model, None)
        try:
            self.render([("user", "x")])
            self.ctx = api.llama_init_from_model(self.model, params)
            if not self.ctx:
                raise ModelUnavailable(f"llama.cpp cannot make a context of {n_ctx} tokens for {path}")
            capi.check_context(self.ctx, n_ctx, BATCH, 2)
        except (capi.CapiUnavailable, ModelUnavailable):
            self.close()
            raise
        self.n_ctx = n_ctx
        self.memory = api.llama_get_memory(self.ctx)
        # reuse moved runs only where the cache's positions can be shifted (RoPE models)
        self.reuse_chunks = cfg.cache_reuse if api.llama_memory_can_shift(self.memory) else 0
        self.batch = api.llama_batch_init(BATCH, 0, 1)
        self._abort: Callable[[], bool] = lambda: False
        self._abort_cb = capi.AbortCallback(lambda _data: self._abort())  # kept: llama.cpp holds the pointer
        self.cached: list[int] = []  # the tokens whose cells are in the main sequence, by position
        self.cache_key: str | None = None
        probe: dict[int, float] = {}
        if cfg.threads:
            threads = cfg.threads
        else:
            probe = {1: self._probe(1)}
            if usable_cpus() >= 2:
                probe[2] = self._probe(2)
                channel.send(Loading("loading", f"decode: {probe[1]:.1f} tokens/s on 1 thread, {probe[2]:.1f} on 2"))
            threads = 2 if probe.get(2, 0.0) > probe[1] * TWO_THREADS_GAIN else 1
        api.llama_set_n_threads(self.ctx, threads, threads)
        # measured, not configured: two threads are dropped while a busy machine makes them slower
        self.threads = ThreadChoice(threads if not cfg.threads else 0, probe.get(1, 0.0), self._set_threads)
        self.ready = Ready(
            model=cfg.model if cfg.source != "default" else os.path.basename(path),
            path=path,
            load_s=time.monotonic() - started,
            threads=threads,
            context=context,
            dtype=f"gguf type {info.metadata.get('general.file_type', '?')}",
            engine="gguf",
            threads_probe=probe,
            bytes_per_token=info.bytes_per_token(),
            api="direct",
        )

    # -- llama.cpp calls ---------------------------------------------------------------------------
    def render(self, messages: Sequence[tuple[str, str]]) -> str:
        chat = (capi.ChatMessage * len(messages))(*(capi.ChatMessage(r.encode(), c.encode()) for r, c in messages))
        size = 4096 + sum(len(c.encode()) for _, c in messages) * 2
        buf = C.create_string_buffer(size)
        n = self.api.llama_chat_apply_template(self.template, chat, len(messages), True, buf, size)
        if n > size:
            buf = C.create_string_buffer(n)
            n = self.api.llama_chat_apply_template(self.template, chat, len(messages), True, buf, n)
        if n < 0:
            raise capi.CapiUnavailable("llama.cpp does not know this model's chat template")
        return buf.raw[:n].decode("utf-8", errors="replace")

    def tokenize(self, text: str) -> list[int]:
        data = text.encode()
        out = (C.c_int32 * (len(data) + 16))()
        n = self.api.llama_tokenize(self.vocab, data, len(data), out, len(out), True, True)
        if n < 0:  # more tokens than bytes + 16 cannot happen; -n is the count needed
            out = (C.c_int32 * -n)()
            n = self.api.llama_tokenize(self.vocab, data, len(data), out, len(out), True, True)
        return list(out[:n])

    def piece(self, token: int) -> bytes:
        buf = C.create_string_buffer(128)
        n = self.api.llama_token_to_piece(self.vocab, token, buf, 128, 0, False)
        return buf.raw[:n] if n >= 0 else b""

    def decode(self, tokens: Sequence[int], first: int, seq: int, logits: bool) -> int:
        """Compute `tokens` at positions first.. in sequence `seq`; logits of the last one when asked.
        0, or llama.cpp's error (2: aborted by the callback)."""
        b = self.batch
        for start in range(0, len(tokens), BATCH):
            chunk = tokens[start : start + BATCH]
            b.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = token, first + start + i, 1, 0
                b.seq_id[i][0] = seq
            if logits and start + BATCH >= len(tokens):
                b.logits[len(chunk) - 1] = 1
            rc = self.api.llama_decode(self.ctx, b)
            if rc != 0:
                return int(rc)
        return 0

    def _set_threads(self, threads: int) -> None:
        self.api.llama_set_n_threads(self.ctx, threads, threads)

    def reset(self) -> None:
        self.api.llama_memory_clear(self.memory, True)
        self.cached, self.cache_key = [], None

    # -- the prompt --------------------------------------------------------------------------------
    def prefill(self, prompt: list[int], key: str | None) -> tuple[int, int]:
        """Bring the cache to `prompt` with logits for its last token: (reused tokens, llama.cpp's code)."""
        api, mem = self.api, self.memory
        chunks = self.reuse_chunks if key is not None and key == self.cache_key else 0
        todo = plan(self.cached, prompt, chunks)
        self.cached, self.cache_key = [], None  # unknown until the prompt is complete
        for p0, p1 in todo.drop:
            api.llama_memory_seq_rm(mem, MAIN, p0, p1)
        for kept in todo.shift_order():
            api.llama_memory_seq_add(mem, MAIN, kept.old, kept.old + kept.size, kept.delta)
        for g0, g1 in todo.compute:
            if g1 == len(prompt):
                rc = self.decode(prompt[g0:g1], g0, MAIN, logits=True)
            else:  # before kept cells: in the scratch sequence, over the cells before it only
                api.llama_memory_seq_rm(mem, SCRATCH, -1, -1)
                api.llama_memory_seq_cp(mem, MAIN, SCRATCH, 0, g0)
                rc = self.decode(prompt[g0:g1], g0, SCRATCH, logits=False)
                if rc == 0:
                    api.llama_memory_seq_cp(mem, SCRATCH, MAIN, g0, g1)
                api.llama_memory_seq_rm(mem, SCRATCH, -1, -1)
            if rc != 0:
                self.reset()
                return todo.reused, rc
        self.cached, self.cache_key = list(prompt), key
        return todo.reused, 0

    def sampler(self, req: Generate) -> Any:
        api = self.api
        if req.temperature <= 0:
            return api.llama_sampler_init_greedy()
        chain = api.llama_sampler_chain_init(True)
        # exactly the configured decoding, as the server engine: top-p, temperature, no other filter
        api.llama_sampler_chain_add(chain, api.llama_sampler_init_top_p(req.top_p, 1))
        api.llama_sampler_chain_add(chain, api.llama_sampler_init_temp(req.temperature))
        seed = req.seed if req.seed is not None else 0xFFFFFFFF  # LLAMA_DEFAULT_SEED: a random one
        api.llama_sampler_chain_add(chain, api.llama_sampler_init_dist(seed & 0xFFFFFFFF))
        return chain

    # -- a request ---------------------------------------------------------------------------------
    def generate(self, req: Generate, inbox: Any, channel: Any) -> Finished | Failed:
        try:
            return self._generate(req, inbox, channel)
        except Exception as exc:  # noqa: BLE001 - the request fails, the worker and its model stay
            self.reset()
            return Failed(req.id, "bad_response", f"generation failed: {type(exc).__name__}: {str(exc)[:300]}")

    def _generate(self, req: Generate, inbox: Any, channel: Any) -> Finished | Failed:
        received = time.monotonic()
        deadline = received + req.timeout_s

        def stop_reason() -> str | None:
            if inbox.is_cancelled(req.id):
                return "cancelled"
            return "timeout" if time.monotonic() > deadline else None

        try:
            prompt = self.tokenize(self.render(req.messages))
        except capi.CapiUnavailable as exc:
            return Failed(req.id, "bad_response", str(exc))
        if len(prompt) >= self.n_ctx:
            return Failed(
                req.id, "too_large", f"the prompt is {len(prompt)} tokens; the model's context holds {self.n_ctx}"
            )
        limit = min(req.max_new_tokens, self.n_ctx - len(prompt))
        channel.send(Started(req.id, len(prompt), limit))
        if stop_reason():  # cancelled while it waited in the queue
            return Finished(req.id, "", len(prompt), 0, stop_reason() or "cancelled", None, 0.0)
        self.threads.request_started(time.monotonic())  # two threads again, a while after they were dropped
        self._abort = lambda: stop_reason() is not None
        self.api.llama_set_abort_callback(self.ctx, self._abort_cb, None)
        try:
            reused, rc = self.prefill(prompt, req.document)
        finally:
            self.api.llama_set_abort_callback(self.ctx, capi.AbortCallback(0), None)  # none while decoding
        if rc != 0:
            reason = stop_reason()
            if reason:
                return Finished(req.id, "", len(prompt), 0, reason, None, (time.monotonic() - received) * 1000.0)
            return Failed(req.id, "bad_response", f"llama.cpp could not compute the prompt (decode returned {rc})")
        return self._answer(req, prompt, reused, limit, received, stop_reason, channel)

    def _answer(
        self,
        req: Generate,
        prompt: list[int],
        reused: int,
        limit: int,
        received: float,
        stop_reason: Callable[[], str | None],
        channel: Any,
    ) -> Finished | Failed:
        api = self.api
        sampler = self.sampler(req)
        pieces: list[bytes] = []
        first: float | None = None
        sent = 0.0
        reason: str | None = None
        try:
            token = api.llama_sampler_sample(sampler, self.ctx, -1)
            while True:
                now = time.monotonic()
                first = first if first is not None else now
                if not req.ignore_eos and api.llama_vocab_is_eog(self.vocab, token):
                    reason = "stop"
                    break
                pieces.append(self.piece(token))
                if now - sent >= req.progress_interval_s:
                    sent = now
                    channel.send(Tokens(req.id, len(pieces)))
                reason = "length" if len(pieces) >= limit else stop_reason()
                if reason:
                    break
                rc = self.decode([token], len(self.cached), MAIN, logits=True)
                if rc != 0:
                    self.reset()
                    return Failed(req.id, "bad_response", f"llama.cpp could not decode (returned {rc})")
                self.cached.append(token)
                self.threads.token(time.monotonic())
                token = api.llama_sampler_sample(sampler, self.ctx, -1)
        finally:
            api.llama_sampler_free(sampler)
        return Finished(
            req.id,
            b"".join(pieces).decode("utf-8", errors="replace"),
            len(prompt),
            len(pieces),
            reason,
            (first - received) * 1000.0 if first is not None else None,
            (time.monotonic() - received) * 1000.0,
            cached_tokens=reused,
        )

    def _probe(self, threads: int) -> float:
        """Decode tokens/s at `threads`: a short greedy generation, stopped after PROBE_TOKENS or PROBE_S."""
        api = self.api
        api.llama_set_n_threads(self.ctx, threads, threads)
        self.reset()
        prompt = self.tokenize(self.render([("user", "Count from one to twenty.")]))
        if self.decode(prompt, 0, MAIN, logits=True) != 0:
            return 0.0
        greedy = api.llama_sampler_init_greedy()
        times: list[float] = []
        try:
            for pos in range(len(prompt), len(prompt) + PROBE_TOKENS):
                token = api.llama_sampler_sample(greedy, self.ctx, -1)
                times.append(time.perf_counter())
                if len(times) >= 2 and times[-1] - times[0] > PROBE_S:
                    break
                if self.decode([token], pos, MAIN, logits=True) != 0:
                    break
        finally:
            api.llama_sampler_free(greedy)
            self.reset()
        if len(times) < 2:
            return 0.0
        return (len(times) - 1) / max(times[-1] - times[0], 1e-9)

    def close(self) -> None:
        if getattr(self, "batch", None) is not None:
            self.api.llama_batch_free(self.batch)
            self.batch = None
        if self.ctx:
            self.api.llama_free(self.ctx)
            self.ctx = None
        if self.model:
            self.api.llama_model_free(self.model)
            self.model = None
