"""The embedded `local` backend: a small instruction-tuned code model on the CPU, no GPU, no API key.

The model runs in a worker process (`local_worker`: GGUF models on llama.cpp, transformers models on
torch) that this class starts on first use and talks to over pipes with asyncio, so the server's
event loop never waits on the model. One model per server process: the local backends of one event
loop share one generation slot (a CPU has no spare capacity for two answers at once) and one worker
per model; starting a worker for another model first stops the idle ones. Requests wait in a bounded
queue (`max_concurrency` of the backend's settings is its size, running request included) and a
request beyond it fails at once with kind `rate_limited`.

Same contract as OpenAIBackend: `await complete(messages) -> Completion`, failures as BackendError:
  missing_dependency  torch/transformers are not installed (also raised when the backend is built)
  model_unavailable   the model cannot be found, downloaded or loaded
  rate_limited        the queue is full
  timeout             generation ran past `timeout_s` (queue wait and model loading not included)
  too_large           the prompt does not fit the model's context
  connection          the worker process died (its last stderr lines are in the message)
  bad_response / empty  generation raised / produced no text
Cancelling the awaiting task stops generation within one token (a flag the worker checks after each
token); a worker that spends `cancel_grace_s` seconds of its own CPU time after a cancel without
confirming it (stuck in a prefill nothing interrupts) is killed and restarted on next use. CPU time,
not wall time: on a loaded machine the worker gets less of the CPU, and a slow confirmation must not
read as a stuck worker (nor a late timer on the server's busy event loop as a missed deadline).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any

import msgspec

from server.backends.config import BackendConfig
from server.backends.local_process import WorkerProcess, stop_worker
from server.backends.local_protocol import (
    Cancel,
    Event,
    Failed,
    Finished,
    Generate,
    LlamaApi,
    LoadFailed,
    Loading,
    Ready,
    Started,
    Tokens,
    WorkerConfig,
    decode_event,
    encode,
)
from server.backends.local_spec import (
    LocalSpecError,
    ModelSpec,
    dependency_problem,
    parse_spec,
)
from server.backends.openai_backend import MAX_ANSWER_CHARS, BackendError, Completion
from server.backends.prompts import ChatMessage
from server.models.catalog import models_dir

logger = logging.getLogger(__name__)

PIPE_LIMIT = 64 * 1024 * 1024  # one event line may carry a whole answer
IGNORE_EOS_ENV = "EDIT_FIDELITY_LOCAL_IGNORE_EOS"
THREADS_ENV = "EDIT_FIDELITY_LOCAL_THREADS"
CACHE_REUSE_ENV = "EDIT_FIDELITY_LOCAL_CACHE_REUSE"  # 0: the exact prefix only
CACHE_REUSE = 32  # tokens: the shortest run of the cache after a change reused within one document
HARD_GRACE_S = 30.0  # past timeout_s: the worker is stuck (e.g. in a huge prefill) and gets killed
CANCEL_POLL_S = 0.5


class LocalProgress(msgspec.Struct, frozen=True):
    """What a request is doing now, for the caller's progress callback."""

    phase: str  # queued | loading | downloading | generating
    message: str
    tokens: int = 0  # generated so far
    max_tokens: int = 0
    done_bytes: int | None = None
    total_bytes: int | None = None


class GenerationStats(msgspec.Struct, frozen=True):
    """Timings of the last finished generation (for benchmarks and logs)."""

    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    ttft_ms: float | None
    gen_ms: float
    queue_ms: float
    cached_tokens: int = 0  # prompt tokens the KV cache already held (the same document as before)


ProgressCallback = Callable[[LocalProgress], None]


def local_backend_config(model: str = "local", *, name: str = "local", **fields: Any) -> BackendConfig:
    """A BackendConfig for a local model; `base_url` is not used by this backend."""
    return BackendConfig(name=name, base_url="local", model=model, **fields)


def check_available(model: str) -> ModelSpec:
    """Validate a `local...` model string before building the backend: BackendError when the optional
    dependencies are missing (the message says what to pip install) or the spec is unusable."""
    try:
        spec = parse_spec(model)
    except LocalSpecError as exc:
        problem = dependency_problem()
        if problem:
            raise BackendError("missing_dependency", problem) from None
        raise BackendError("model_unavailable", str(exc)) from None
    problem = dependency_problem(engine=spec.engine)
    if problem:
        raise BackendError("missing_dependency", problem)
    return spec


def offline_from_env() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


_IDS = itertools.count(1)  # job ids, unique across the backends that share a worker


class _Job:
    def __init__(
        self,
        job_id: int,
        on_progress: ProgressCallback | None,
        loop: asyncio.AbstractEventLoop,
        owner: LocalBackend,
        slot: asyncio.Semaphore,
    ) -> None:
        self.id = job_id
        self.owner = owner
        self.slot = slot
        self.on_progress = on_progress
        self.future: asyncio.Future[Finished] = loop.create_future()
        # a cancelled caller no longer awaits it: its late outcome must not be logged as unretrieved
        self.future.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.max_new_tokens = 0
        self.prompt_tokens = 0


class LocalBackend:
    """The `local` backend for one BackendConfig whose `model` is `local`, `local:PATH` or `local:HUB_ID`."""

    def __init__(
        self,
        config: BackendConfig,
        *,
        offline: bool | None = None,
        threads: int | None = None,
        dtype: str = "float32",
        top_p: float = 0.95,
        seed: int | None = None,
        progress_interval_s: float = 0.1,
        cancel_grace_s: float = 3.0,
        cancel_wall_limit_s: float = 120.0,
        cache_reuse: int | None = None,
        llama_api: LlamaApi = "auto",
        context: int = 8192,
        ignore_eos: bool | None = None,
        python: str = sys.executable,
    ) -> None:
        self.config = config
        self.spec = check_available(config.model)
        # None: follow HF_HUB_OFFLINE, which `edit-fidelity serve --offline` sets
        self.offline = offline if offline is not None else offline_from_env()
        # None: measured by the worker at start (llama.cpp); EDIT_FIDELITY_LOCAL_THREADS overrides
        env_threads = os.environ.get(THREADS_ENV, "")
        self.threads = threads if threads is not None else int(env_threads) if env_threads.isdigit() else None
        self.dtype = dtype
        self.top_p = top_p
        self.seed = seed
        self.progress_interval_s = progress_interval_s
        self.cancel_grace_s = cancel_grace_s
        # a worker that neither computes nor confirms a cancel for this long is hung (stopped, deadlocked)
        self.cancel_wall_limit_s = cancel_wall_limit_s
        env_reuse = os.environ.get(CACHE_REUSE_ENV, "")
        self.cache_reuse = (
            cache_reuse if cache_reuse is not None else int(env_reuse) if env_reuse.isdigit() else CACHE_REUSE
        )
        self.llama_api = llama_api
        self.context = context
        # decode to the token limit (benchmarks; tests that need a long generation): IGNORE_EOS_ENV=1
        self.ignore_eos = ignore_eos if ignore_eos is not None else os.environ.get(IGNORE_EOS_ENV) == "1"
        self._python = python
        self._capacity = config.max_concurrency
        self._pending = 0  # requests inside complete(): waiting or running
        self._measured_threads: int | None = None  # a restarted worker keeps what the first one measured
        self.last_stats: GenerationStats | None = None
        self.last_cancelled: Finished | None = None  # what a cancelled generation had produced
        self.ready_info: Ready | None = None
        self.restarts = 0
        _OPEN.add(self)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def queue_length(self) -> int:
        return self._pending

    # -- worker lifecycle ------------------------------------------------------------------------
    def worker_config(self) -> WorkerConfig:
        return WorkerConfig(
            source=self.spec.source,
            model=self.spec.model,
            offline=self.offline,
            threads=self.threads or self._measured_threads,
            dtype=self.dtype,
            cache_reuse=self.cache_reuse,
            llama_api=self.llama_api,
            context=self.context,
            models_dir=str(models_dir()),
        )

    def _key(self) -> bytes:
        """Backends with the same key share a worker (the measured thread count is not part of it)."""
        return encode(msgspec.structs.replace(self.worker_config(), threads=self.threads))

    @property
    def _worker(self) -> WorkerProcess[_Job] | None:
        """This backend's model worker in the running loop, when one is started."""
        shared = _shared_or_none()
        return shared.workers.get(self._key()) if shared is not None else None

    async def _spawn(self) -> WorkerProcess[_Job]:
        cfg = self.worker_config()
        env = dict(os.environ)
        env.setdefault("TOKENIZERS_PARALLELISM", "false")  # the tokenizer's threads would fight torch's
        env.setdefault("TRANSFORMERS_VERBOSITY", "error")
        if self.offline:
            env["HF_HUB_OFFLINE"] = "1"
        proc = await asyncio.create_subprocess_exec(
            self._python,
            "-m",
            "server.backends.local_worker",
            encode(cfg).decode(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            limit=PIPE_LIMIT,
            start_new_session=True,  # killpg reaches anything it starts; terminal signals do not reach it
        )
        loop = asyncio.get_running_loop()
        worker = WorkerProcess[_Job](proc, loop)
        worker.tasks = [
            asyncio.create_task(self._read_events(worker), name=f"local:{self.name}:events"),
            asyncio.create_task(self._read_stderr(worker), name=f"local:{self.name}:stderr"),
        ]
        logger.info("local backend %s: started worker pid %d for %s", self.name, proc.pid, self.spec.describe())
        return worker

    async def _ensure_worker(self, on_progress: ProgressCallback | None) -> WorkerProcess[_Job]:
        """The worker for this backend's model, started when needed. Called with the shared slot held,
        so every other worker is idle: they are stopped first (one model per server process)."""
        shared = _shared()
        key = self._key()
        worker = shared.workers.get(key)
        if worker is None or not worker.alive or (worker.ready.done() and worker.ready.exception() is not None):
            if worker is not None:
                worker.kill()
                self.restarts += 1
            for other_key, other in list(shared.workers.items()):
                if other_key != key:
                    del shared.workers[other_key]
                    await stop_worker(other)
            worker = shared.workers[key] = await self._spawn()
        worker.loading_listener = on_progress
        try:
            self.ready_info = await asyncio.shield(worker.ready)
        finally:
            worker.loading_listener = None
        if self.threads is None and self.ready_info.engine == "gguf":
            self._measured_threads = self.ready_info.threads
        return worker

    async def start(self, on_progress: ProgressCallback | None = None) -> Ready:
        """Start the worker and load the model now (downloading it on first use); returns its facts."""
        async with self._get_slot():
            await self._ensure_worker(on_progress)
        assert self.ready_info is not None
        return self.ready_info

    def _get_slot(self) -> asyncio.Semaphore:
        return _shared().slot

    async def _read_stderr(self, worker: WorkerProcess[_Job]) -> None:
        stream = worker.proc.stderr
        assert stream is not None
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line over the limit (a progress bar without newlines)
                continue
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip()
            worker.stderr_tail.append(text)
            logger.debug("local worker %d: %s", worker.proc.pid, text)

    async def _read_events(self, worker: WorkerProcess[_Job]) -> None:
        stream = worker.proc.stdout
        assert stream is not None
        try:
            while True:
                line = await stream.readline()
                if not line:
                    break
                try:
                    event = decode_event(line)
                except msgspec.DecodeError:
                    logger.warning("local worker %d sent a bad event line", worker.proc.pid)
                    continue
                self._dispatch(worker, event)
        except asyncio.CancelledError:  # the event loop is closing under a live worker: it goes too
            worker.kill()
            raise
        finally:
            rc = await worker.proc.wait()
            await asyncio.sleep(0)  # let the stderr reader take the last lines
            why = f"the local model worker exited (code {rc})"
            if worker.tail():
                why += f": {worker.tail()}"
            if not worker.ready.done():
                worker.ready.set_exception(BackendError("connection", f"backend {self.name!r}: {why}"))
            for job in list(worker.jobs.values()):
                job.owner._finish(worker, job, BackendError("connection", f"backend {job.owner.name!r}: {why}"))

    def _dispatch(self, worker: WorkerProcess[_Job], event: Event) -> None:
        if isinstance(event, Loading):
            self._notify(
                worker.loading_listener,
                LocalProgress(
                    phase=event.phase, message=event.message, done_bytes=event.done_bytes, total_bytes=event.total_bytes
                ),
            )
        elif isinstance(event, Ready):
            if not worker.ready.done():
                worker.ready.set_result(event)
            logger.info(
                "local backend %s: %s loaded in %.1f s (%d threads)",
                self.name,
                event.model,
                event.load_s,
                event.threads,
            )
        elif isinstance(event, LoadFailed):
            if not worker.ready.done():
                worker.ready.set_exception(BackendError(event.kind, f"backend {self.name!r}: {event.message}"))
        elif isinstance(event, Started):
            job = worker.jobs.get(event.id)
            if job is not None:
                job.prompt_tokens, job.max_new_tokens = event.prompt_tokens, event.max_new_tokens
                what = f"prompt of {event.prompt_tokens} tokens" if event.prompt_tokens else "reading the prompt"
                self._notify(job.on_progress, LocalProgress("generating", what, 0, event.max_new_tokens))
        elif isinstance(event, Tokens):
            job = worker.jobs.get(event.id)
            if job is not None:
                self._notify(
                    job.on_progress,
                    LocalProgress("generating", f"{event.tokens} tokens", event.tokens, job.max_new_tokens),
                )
        elif isinstance(event, Finished):
            job = worker.jobs.get(event.id)
            if job is not None:
                if event.finish_reason == "cancelled":
                    job.owner.last_cancelled = event
                job.owner._finish(worker, job, event)
        elif isinstance(event, Failed):
            job = worker.jobs.get(event.id)
            if job is not None:
                job.owner._finish(worker, job, BackendError(event.kind, f"backend {job.owner.name!r}: {event.message}"))

    def _notify(self, callback: ProgressCallback | None, progress: LocalProgress) -> None:
        if callback is None:
            return
        try:
            callback(progress)
        except Exception:  # a broken progress display must not fail the request
            logger.exception("local backend %s: progress callback failed", self.name)

    def _finish(self, worker: WorkerProcess[_Job], job: _Job, outcome: Finished | BackendError) -> None:
        """The worker is done with `job` (answered, failed, or died): the slot is free again."""
        if worker.jobs.pop(job.id, None) is None:
            return
        if not job.future.done():
            if isinstance(outcome, BackendError):
                job.future.set_exception(outcome)
            else:
                job.future.set_result(outcome)
        job.slot.release()

    def _kill_if_running(self, worker: WorkerProcess[_Job], job: _Job, why: str) -> None:
        if job.id in worker.jobs:
            logger.warning("local backend %s: %s; killing worker %d", self.name, why, worker.proc.pid)
            worker.kill()

    def _watch_cancel(self, worker: WorkerProcess[_Job], job: _Job, cpu_at: float | None, wall_at: float) -> None:
        """Kill the worker once it has spent `cancel_grace_s` of CPU time since the cancel without
        confirming it (wall time where /proc is missing); a worker that computes nothing is given up on
        after `cancel_wall_limit_s`. (A bound method with arguments, not a closure: a closure that
        reschedules itself is a reference cycle that keeps the backend open until the collector runs.)"""
        if job.id not in worker.jobs or not worker.alive:
            return
        cpu = worker.cpu_seconds()
        waited = time.monotonic() - wall_at
        spent = cpu - cpu_at if cpu is not None and cpu_at is not None else waited
        if spent >= self.cancel_grace_s or waited >= self.cancel_wall_limit_s:
            self._kill_if_running(worker, job, f"cancel not confirmed ({spent:.1f} s of CPU, {waited:.1f} s)")
        else:
            asyncio.get_running_loop().call_later(CANCEL_POLL_S, self._watch_cancel, worker, job, cpu_at, wall_at)

    # -- the call ----------------------------------------------------------------------------------
    async def complete(
        self,
        messages: list[ChatMessage],
        *,
        on_progress: ProgressCallback | None = None,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
        document: str | None = None,
    ) -> Completion:
        """Generate one answer. `on_progress` gets LocalProgress records (queued, loading/downloading,
        tokens generated so far); it runs on the event loop and must not block. `max_tokens` and
        `timeout_s` override the settings for this request. `document` names the open document the
        prompt edits (one opening of it): the worker then also reuses the cache after a changed line
        of the same document, not only the common prefix."""
        limit = max_tokens if max_tokens is not None else self.config.max_tokens
        timeout = timeout_s if timeout_s is not None else self.config.timeout_s
        started = time.perf_counter()
        if self._pending >= self._capacity:
            raise BackendError(
                "rate_limited",
                f"backend {self.name!r}: the local model's queue is full ({self._pending} requests waiting or "
                f"running, maxConcurrency {self._capacity}); try again when one has finished",
            )
        self._pending += 1
        try:
            slot = self._get_slot()
            if slot.locked():
                self._notify(
                    on_progress, LocalProgress("queued", f"waiting for the local model ({self._pending - 1} ahead)")
                )
            await slot.acquire()
            job: _Job | None = None
            try:
                worker = await self._ensure_worker(on_progress)
                loop = asyncio.get_running_loop()
                job = _Job(next(_IDS), on_progress, loop, self, slot)
                worker.jobs[job.id] = job  # from here on the slot is released by _finish
                queue_ms = (time.perf_counter() - started) * 1000.0
                worker.send(
                    Generate(
                        id=job.id,
                        messages=[(m.role, m.content) for m in messages],
                        max_new_tokens=limit,
                        temperature=self.config.temperature,
                        top_p=self.top_p,
                        seed=self.seed,
                        timeout_s=timeout,
                        progress_interval_s=self.progress_interval_s,
                        ignore_eos=self.ignore_eos,
                        document=document,
                    )
                )
            except BaseException:
                if job is None or job.id not in worker.jobs:
                    slot.release()
                raise
            try:
                async with asyncio.timeout(timeout + HARD_GRACE_S):
                    result = await asyncio.shield(job.future)
            except TimeoutError:
                self._kill_if_running(worker, job, "generation did not stop at its deadline")
                raise BackendError("timeout", f"backend {self.name!r} did not answer within {timeout:g} s") from None
            except asyncio.CancelledError:
                if job.id in worker.jobs:
                    worker.send(Cancel(job.id))
                    asyncio.get_running_loop().call_later(
                        CANCEL_POLL_S, self._watch_cancel, worker, job, worker.cpu_seconds(), time.monotonic()
                    )
                raise
        finally:
            self._pending -= 1
        return self._completion(result, started, queue_ms, timeout)

    def _completion(self, result: Finished, started: float, queue_ms: float, timeout: float) -> Completion:
        self.last_stats = GenerationStats(
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            finish_reason=result.finish_reason,
            ttft_ms=result.ttft_ms,
            gen_ms=result.gen_ms,
            queue_ms=queue_ms,
            cached_tokens=result.cached_tokens,
        )
        if result.finish_reason == "timeout":
            raise BackendError(
                "timeout",
                f"backend {self.name!r} did not finish within {timeout:g} s "
                f"({result.completion_tokens} tokens generated)",
            )
        if result.finish_reason == "cancelled":  # cancelled by someone else (the worker's own view)
            raise BackendError("bad_response", f"backend {self.name!r}: generation was cancelled")
        if not result.text.strip():
            raise BackendError("empty", f"backend {self.name!r} answered with an empty message")
        if len(result.text) > MAX_ANSWER_CHARS:
            raise BackendError("too_large", f"backend {self.name!r} answered with {len(result.text):,} characters")
        return Completion(
            text=result.text,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            finish_reason=result.finish_reason,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            attempts=1,
            cached_tokens=result.cached_tokens,
        )

    async def aclose(self) -> None:
        """Stop the worker, unless another open backend uses the same model: ask, then kill after a
        short wait."""
        _OPEN.discard(self)
        shared = _shared_or_none()
        key = self._key()
        if shared is None or key not in shared.workers or any(b._key() == key for b in _OPEN):
            return
        await stop_worker(shared.workers.pop(key))


class _Shared:
    """What the local backends of one event loop share: the generation slot and the workers by model."""

    def __init__(self) -> None:
        self.slot = asyncio.Semaphore(1)  # held from a request's start until its worker is idle again
        self.workers: dict[bytes, WorkerProcess[_Job]] = {}


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Shared] = weakref.WeakKeyDictionary()
_OPEN: weakref.WeakSet[LocalBackend] = weakref.WeakSet()  # backends not closed yet


def _shared() -> _Shared:
    loop = asyncio.get_running_loop()
    shared = _SHARED.get(loop)
    if shared is None:
        shared = _SHARED[loop] = _Shared()
    return shared


def _shared_or_none() -> _Shared | None:
    try:
        return _SHARED.get(asyncio.get_running_loop())
    except RuntimeError:  # no running loop: nothing was started
        return None
