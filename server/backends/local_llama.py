"""The llama.cpp server engine of the model worker: a GGUF model served by `xllamacpp` (llama.cpp's own
server code in a prebuilt wheel), in the worker process. The fallback of the direct engine
(`local_llama_direct`) where the C API cannot be driven or the model's chat template is not one llama.cpp
knows; also what `llama_api: server` asks for.

- The model's own chat template (the GGUF's Jinja template) turns the messages into the prompt.
- One slot, `cache_prompt`: a request whose prompt starts like the previous one (system prompt and
  document) takes that prefix's KV cache and computes only the rest. Its `n_cache_reuse` is left off:
  it finds reusable runs only after a deletion (a changed or inserted line reuses nothing after it),
  and would apply to any request, not only to versions of one document.
- Tokens stream through a callback that also checks the cancel flag and the deadline after every
  token: returning True stops the slot at once. The prompt itself is computed in one piece, which
  nothing can interrupt; the server kills a worker that does not confirm a cancel in time.
- Threads: as configured, else measured at start (a short greedy decode at 1 and at 2 threads; the
  faster wins, one thread unless two are clearly faster, since two threads spin against whatever
  else runs on a shared 2-core machine).
- llama.cpp's server also listens for HTTP; here on a Unix socket in a private directory, not a port.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any

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
from server.models.catalog import CATALOG, DEFAULT_MIN_TOKENS_S, LARGE, SMALL, ModelEntry, is_fetched, model_path
from server.models.gguf import GGUFError, GGUFInfo, read_gguf

PROBE_TOKENS = 16
PROBE_S = 1.5
TWO_THREADS_GAIN = 1.15  # two threads must beat one by this much to be chosen


def _say(channel: Any, phase: str, message: str) -> None:
    channel.send(Loading(phase, message))


def choose_default(cfg: WorkerConfig, channel: Any) -> ModelEntry:
    """The 1.5B where this machine decodes it at >= DEFAULT_MIN_TOKENS_S (estimated from the measured
    copy bandwidth and its bytes per token), else the 0.5B; offline, a fetched one of the two."""
    from pathlib import Path

    from server.models.bandwidth import copy_bandwidth

    directory = Path(cfg.models_dir) if cfg.models_dir else None
    large, small = CATALOG[LARGE], CATALOG[SMALL]
    estimate = copy_bandwidth() / (large.size * 0.88)  # ~88% of the file is read per token (output head)
    choice = large if estimate >= DEFAULT_MIN_TOKENS_S else small
    _say(channel, "loading", f"default model: {choice.name} (estimated {estimate:.0f} tokens/s for the 1.5B here)")
    if is_fetched(choice, directory) or not cfg.offline:
        return choice
    fetched = [e for e in (choice, large, small) if is_fetched(e, directory)]
    if fetched:
        return fetched[0]
    raise ModelUnavailable(
        f"no default model is fetched and offline mode is on; run: edit-fidelity model fetch {choice.name}"
    )


def resolve(cfg: WorkerConfig, channel: Any) -> str:
    """The GGUF file to load: the file itself, or the catalogued model (fetched on first use)."""
    if cfg.source == "file":
        return cfg.model
    from pathlib import Path

    from server.models.fetch import FetchError, fetch

    entry = choose_default(cfg, channel) if cfg.source == "default" else CATALOG[cfg.model]
    directory = Path(cfg.models_dir) if cfg.models_dir else None
    if is_fetched(entry, directory):
        return str(model_path(entry, directory))
    if cfg.offline:
        raise ModelUnavailable(
            f"model {entry.name} is not fetched and offline mode is on; run: edit-fidelity model fetch {entry.name}"
        )
    _say(channel, "downloading", f"fetching {entry.name} ({entry.size / 1e6:,.0f} MB, first use)")
    try:
        return str(fetch(entry, directory=directory, progress=lambda msg: _say(channel, "downloading", msg)))
    except FetchError as exc:
        raise ModelUnavailable(f"{exc}; or fetch it by hand: edit-fidelity model fetch {entry.name}") from None


def open_gguf(cfg: WorkerConfig, channel: Any) -> tuple[str, GGUFInfo]:
    """The GGUF file to load and its header, which must carry a chat template."""
    path = resolve(cfg, channel)
    try:
        info = read_gguf(path)
    except GGUFError as exc:
        raise ModelUnavailable(str(exc)) from None
    if info.chat_template is None:
        raise ModelUnavailable(f"{path} has no chat template; the local backend needs an instruction-tuned model")
    return path, info


def usable_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class LlamaModel:
    def __init__(self, cfg: WorkerConfig, channel: Any) -> None:
        started = time.monotonic()
        path, info = open_gguf(cfg, channel)
        import xllamacpp

        self._xlc = xllamacpp
        self.path = path
        self.context = cfg.context
        self._sockets = tempfile.mkdtemp(prefix="edit-fidelity-llama-")  # private (0700): the HTTP socket
        _say(channel, "loading", f"loading {info.name} ({info.file_bytes / 1e6:,.0f} MB)")
        probe: dict[int, float] = {}
        try:
            if cfg.threads:
                self.server = self._load(cfg.threads)
                threads = cfg.threads
            else:
                threads, self.server, probe = self._measure_threads(channel)
        finally:
            # every request goes to the server in process (handle_chat_completions); its HTTP listener is
            # never connected to, so its socket's directory goes now: a worker killed later (a cancel in
            # prompt processing, the server's exit) leaves nothing behind in /tmp
            shutil.rmtree(self._sockets, ignore_errors=True)
        self.ready = Ready(
            model=cfg.model if cfg.source != "default" else os.path.basename(path),
            path=path,
            load_s=time.monotonic() - started,
            threads=threads,
            context=min(cfg.context, info.context_length or cfg.context),
            dtype=f"gguf type {info.metadata.get('general.file_type', '?')}",
            engine="gguf",
            api="server",
            threads_probe=probe,
            bytes_per_token=info.bytes_per_token(),
        )

    def _load(self, threads: int) -> Any:
        xlc = self._xlc
        p = xlc.CommonParams()
        p.model.path = self.path
        p.n_ctx = self.context
        p.n_parallel = 1  # one slot: one generation at a time, and its cache is the previous prompt's
        p.cpuparams.n_threads = threads
        p.cpuparams_batch.n_threads = threads
        p.use_jinja = True  # the GGUF's chat template
        p.cache_prompt = True
        p.reasoning_format = xlc.common_reasoning_format.COMMON_REASONING_FORMAT_NONE  # the answer as written
        p.warmup = False
        p.verbosity = -1
        p.hostnames = [os.path.join(self._sockets, f"llama-{threads}.sock")]
        p.endpoint_metrics = True  # the request below goes through the task loop only when metrics are on
        try:
            server = xlc.Server(p)
        except RuntimeError as exc:
            raise ModelUnavailable(f"llama.cpp cannot load {self.path}: {exc}") from None
        # `Server()` returns before its thread enters llama.cpp's task loop, and that loop's start sets
        # `running`: a server dropped in between (the thread probe drops one, a worker may close at once)
        # loses its terminate and its destructor waits for ever (seen on a busy machine). A request the
        # loop answers proves it runs; from then on a drop stops it.
        server.handle_metrics()
        return server

    def _measure_threads(self, channel: Any) -> tuple[int, Any, dict[int, float]]:
        one = self._load(1)
        rates = {1: self._probe(one)}
        if usable_cpus() < 2:
            return 1, one, rates
        two = self._load(2)
        rates[2] = self._probe(two)
        _say(channel, "loading", f"decode: {rates[1]:.1f} tokens/s on 1 thread, {rates[2]:.1f} on 2")
        if rates[2] > rates[1] * TWO_THREADS_GAIN:
            del one
            return 2, two, rates
        del two
        return 1, one, rates

    def _probe(self, server: Any) -> float:
        """Decode tokens/s: a short greedy generation, stopped after PROBE_TOKENS or PROBE_S (two
        threads on a busy machine can be ten times slower: the probe must not wait for them)."""
        body = {
            "messages": [{"role": "user", "content": "Count from one to twenty."}],
            "max_tokens": PROBE_TOKENS,
            "temperature": 0,
            "ignore_eos": True,
            "cache_prompt": False,
            "stream": True,
        }
        times: list[float] = []

        def on_chunk(chunk: Any) -> bool:
            choice = (chunk.get("choices") or [{}])[0] if isinstance(chunk, dict) else {}
            if (choice.get("delta") or {}).get("content"):
                times.append(time.perf_counter())
            return len(times) >= 2 and times[-1] - times[0] > PROBE_S

        server.handle_chat_completions(body, on_chunk)
        if len(times) < 2:
            return 0.0
        return (len(times) - 1) / max(times[-1] - times[0], 1e-9)

    def close(self) -> None:
        shutil.rmtree(self._sockets, ignore_errors=True)

    def generate(self, req: Generate, inbox: Any, channel: Any) -> Finished | Failed:
        received = time.monotonic()
        deadline = received + req.timeout_s
        channel.send(Started(req.id, 0, req.max_new_tokens))  # the prompt's size is known at its first token
        if inbox.is_cancelled(req.id):  # cancelled while it waited in the queue
            return Finished(req.id, "", 0, 0, "cancelled", None, 0.0)
        sample = req.temperature > 0
        body: dict[str, Any] = {
            "messages": [{"role": r, "content": c} for r, c in req.messages],
            "max_tokens": req.max_new_tokens,
            "stream": True,
            "timings_per_token": True,  # prompt and cache counts with the first token
            "cache_prompt": True,
            # exactly the configured decoding, as the papers' runs do: no top-k, min-p or penalties
            "temperature": req.temperature if sample else 0.0,
            "top_p": req.top_p if sample else 1.0,
            "top_k": 0,
            "min_p": 0.0,
            "repeat_penalty": 1.0,
        }
        if sample and req.seed is not None:
            body["seed"] = req.seed
        if req.ignore_eos:
            body["ignore_eos"] = True
        state: dict[str, Any] = {"text": [], "n": 0, "first": None, "sent": 0.0, "reason": None, "timings": {}}

        def on_chunk(chunk: Any) -> bool:
            try:
                return _step(chunk)
            except Exception as exc:  # noqa: BLE001 - llama.cpp swallows a callback's exception silently
                state["error"] = f"{type(exc).__name__}: {exc}"
                return True

        def _step(chunk: Any) -> bool:
            if not isinstance(chunk, dict):
                return False
            if "error" in chunk:
                state["error_body"] = chunk["error"]
                return True
            if "timings" in chunk:
                state["timings"] = chunk["timings"]
            choice = (chunk.get("choices") or [{}])[0]
            content = (choice.get("delta") or {}).get("content")
            now = time.monotonic()
            if content:
                state["text"].append(content)
                state["n"] += 1
                if state["first"] is None:
                    state["first"] = now
            if choice.get("finish_reason"):
                state["reason"] = choice["finish_reason"]
            if now - state["sent"] >= req.progress_interval_s and state["n"]:
                state["sent"] = now
                channel.send(Tokens(req.id, state["n"]))
            if inbox.is_cancelled(req.id):
                state["reason"] = "cancelled"
            elif now > deadline:
                state["reason"] = "timeout"
            return state["reason"] in ("cancelled", "timeout")

        try:
            self.server.handle_chat_completions(body, on_chunk)
        except Exception as exc:  # noqa: BLE001 - the request fails, the worker stays
            return Failed(req.id, "bad_response", f"generation failed: {type(exc).__name__}: {str(exc)[:300]}")
        if "error" in state:
            return Failed(req.id, "bad_response", f"generation failed: {state['error'][:300]}")
        if "error_body" in state:
            err = state["error_body"]
            kind = "too_large" if err.get("type") == "exceed_context_size_error" else "bad_response"
            return Failed(req.id, kind, str(err.get("message", err))[:400])
        timings = state["timings"]
        cached = int(timings.get("cache_n") or 0)
        n_prompt = cached + int(timings.get("prompt_n") or 0)
        reason = state["reason"] or "stop"
        ttft = (state["first"] - received) * 1000.0 if state["first"] is not None else None
        usage_n = int(timings.get("predicted_n") or state["n"])
        return Finished(
            req.id,
            "".join(state["text"]),
            n_prompt,
            usage_n if reason not in ("cancelled", "timeout") else state["n"],
            reason,
            ttft,
            (time.monotonic() - received) * 1000.0,
            cached_tokens=cached,
        )
