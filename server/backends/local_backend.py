"""The embedded `local` backend: a small instruction-tuned code model on the CPU, no GPU, no API key.

The model runs in a worker process (`local_worker`, transformers + torch) that this class starts on
first use and talks to over pipes with asyncio, so the server's event loop never waits on the model.
The worker generates one answer at a time (a CPU has no spare capacity for two); requests wait in a
bounded queue (`max_concurrency` of the backend's settings is its size, running request included)
and a request beyond it fails at once with kind `rate_limited`.

Same contract as OpenAIBackend: `await complete(messages) -> Completion`, failures as BackendError:
  missing_dependency  torch/transformers are not installed (also raised when the backend is built)
  model_unavailable   the model cannot be found, downloaded or loaded
  rate_limited        the queue is full
  timeout             generation ran past `timeout_s` (queue wait and model loading not included)
  too_large           the prompt does not fit the model's context
  connection          the worker process died (its last stderr lines are in the message)
  bad_response / empty  generation raised / produced no text
Cancelling the awaiting task stops generation within one token (a flag the worker checks after each
token); a worker that does not confirm within `cancel_grace_s` is killed and restarted on next use.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import os
import signal
import sys
import time
from collections.abc import Callable

import msgspec

from server.backends.config import BackendConfig
from server.backends.local_protocol import (
    Cancel,
    Failed,
    Finished,
    Generate,
    LoadFailed,
    Loading,
    Ready,
    Shutdown,
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

logger = logging.getLogger(__name__)

PIPE_LIMIT = 64 * 1024 * 1024  # one event line may carry a whole answer
HARD_GRACE_S = 30.0  # past timeout_s: the worker is stuck (e.g. in a huge prefill) and gets killed


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


ProgressCallback = Callable[[LocalProgress], None]


def local_backend_config(model: str = "local", *, name: str = "local", **fields) -> BackendConfig:
    """A BackendConfig for a local model; `base_url` is not used by this backend."""
    return BackendConfig(name=name, base_url="local", model=model, **fields)


def check_available(model: str) -> ModelSpec:
    """Validate a `local...` model string before building the backend: BackendError when the optional
    dependencies are missing (the message says what to pip install) or the spec is unusable."""
    problem = dependency_problem()
    if problem:
        raise BackendError("missing_dependency", problem)
    try:
        return parse_spec(model)
    except LocalSpecError as exc:
        raise BackendError("model_unavailable", str(exc)) from None


def offline_from_env() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


class _Job:
    def __init__(self, job_id: int, on_progress: ProgressCallback | None, loop: asyncio.AbstractEventLoop):
        self.id = job_id
        self.on_progress = on_progress
        self.future: asyncio.Future[Finished] = loop.create_future()
        # a cancelled caller no longer awaits it: its late outcome must not be logged as unretrieved
        self.future.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.max_new_tokens = 0
        self.prompt_tokens = 0


class _Worker:
    """One worker process and the tasks that read its pipes."""

    def __init__(self, proc: asyncio.subprocess.Process, loop: asyncio.AbstractEventLoop):
        self.proc = proc
        self.ready: asyncio.Future[Ready] = loop.create_future()
        self.ready.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self.tasks: list[asyncio.Task] = []

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def send(self, request: Generate | Cancel | Shutdown) -> None:
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.write(encode(request) + b"\n")

    def kill(self) -> None:
        if self.alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def tail(self) -> str:
        lines = [ln for ln in self.stderr_tail if ln.strip()]
        return " | ".join(lines[-3:])[-400:]


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
        python: str = sys.executable,
    ):
        self.config = config
        self.spec = check_available(config.model)
        # None: follow HF_HUB_OFFLINE, which `edit-fidelity serve --offline` sets
        self.offline = offline if offline is not None else offline_from_env()
        self.threads = threads
        self.dtype = dtype
        self.top_p = top_p
        self.seed = seed
        self.progress_interval_s = progress_interval_s
        self.cancel_grace_s = cancel_grace_s
        self._python = python
        self._capacity = config.max_concurrency
        self._pending = 0  # requests inside complete(): waiting or running
        self._slot: asyncio.Semaphore | None = None  # created in the running loop; held until the worker is idle
        self._worker: _Worker | None = None
        self._jobs: dict[int, _Job] = {}
        self._ids = itertools.count(1)
        self._loading_listener: ProgressCallback | None = None
        self.last_stats: GenerationStats | None = None
        self.last_cancelled: Finished | None = None  # what a cancelled generation had produced
        self.ready_info: Ready | None = None
        self.restarts = 0

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def queue_length(self) -> int:
        return self._pending

    # -- worker lifecycle ------------------------------------------------------------------------
    async def _spawn(self) -> _Worker:
        cfg = WorkerConfig(
            source=self.spec.source,
            model=self.spec.model,
            offline=self.offline,
            threads=self.threads,
            dtype=self.dtype,
        )
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
        worker = _Worker(proc, loop)
        worker.tasks = [
            asyncio.create_task(self._read_events(worker), name=f"local:{self.name}:events"),
            asyncio.create_task(self._read_stderr(worker), name=f"local:{self.name}:stderr"),
        ]
        self.restarts += self._worker is not None
        logger.info("local backend %s: started worker pid %d for %s", self.name, proc.pid, self.spec.describe())
        return worker

    async def _ensure_worker(self) -> _Worker:
        worker = self._worker
        if worker is None or not worker.alive or (worker.ready.done() and worker.ready.exception() is not None):
            if worker is not None:
                worker.kill()
            worker = self._worker = await self._spawn()
        self.ready_info = await asyncio.shield(worker.ready)
        return worker

    async def start(self, on_progress: ProgressCallback | None = None) -> Ready:
        """Start the worker and load the model now (downloading it on first use); returns its facts."""
        slot = self._get_slot()
        async with slot:
            self._loading_listener = on_progress
            try:
                await self._ensure_worker()
            finally:
                self._loading_listener = None
        assert self.ready_info is not None
        return self.ready_info

    def _get_slot(self) -> asyncio.Semaphore:
        if self._slot is None:
            self._slot = asyncio.Semaphore(1)
        return self._slot

    async def _read_stderr(self, worker: _Worker) -> None:
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

    async def _read_events(self, worker: _Worker) -> None:
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
        finally:
            rc = await worker.proc.wait()
            await asyncio.sleep(0)  # let the stderr reader take the last lines
            why = f"the local model worker exited (code {rc})"
            if worker.tail():
                why += f": {worker.tail()}"
            if not worker.ready.done():
                worker.ready.set_exception(BackendError("connection", f"backend {self.name!r}: {why}"))
            for job in list(self._jobs.values()):
                self._finish(job, BackendError("connection", f"backend {self.name!r}: {why}"))

    def _dispatch(self, worker: _Worker, event) -> None:
        if isinstance(event, Loading):
            self._notify(
                self._loading_listener,
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
            job = self._jobs.get(event.id)
            if job is not None:
                job.prompt_tokens, job.max_new_tokens = event.prompt_tokens, event.max_new_tokens
                self._notify(
                    job.on_progress,
                    LocalProgress("generating", f"prompt of {event.prompt_tokens} tokens", 0, event.max_new_tokens),
                )
        elif isinstance(event, Tokens):
            job = self._jobs.get(event.id)
            if job is not None:
                self._notify(
                    job.on_progress,
                    LocalProgress("generating", f"{event.tokens} tokens", event.tokens, job.max_new_tokens),
                )
        elif isinstance(event, Finished):
            if event.finish_reason == "cancelled":
                self.last_cancelled = event
            job = self._jobs.get(event.id)
            if job is not None:
                self._finish(job, event)
        elif isinstance(event, Failed):
            job = self._jobs.get(event.id)
            if job is not None:
                self._finish(job, BackendError(event.kind, f"backend {self.name!r}: {event.message}"))

    def _notify(self, callback: ProgressCallback | None, progress: LocalProgress) -> None:
        if callback is None:
            return
        try:
            callback(progress)
        except Exception:  # a broken progress display must not fail the request
            logger.exception("local backend %s: progress callback failed", self.name)

    def _finish(self, job: _Job, outcome: Finished | BackendError) -> None:
        """The worker is done with `job` (answered, failed, or died): the slot is free again."""
        if self._jobs.pop(job.id, None) is None:
            return
        if not job.future.done():
            if isinstance(outcome, BackendError):
                job.future.set_exception(outcome)
            else:
                job.future.set_result(outcome)
        if self._slot is not None:
            self._slot.release()

    def _kill_if_running(self, worker: _Worker, job: _Job, why: str) -> None:
        if job.id in self._jobs:
            logger.warning("local backend %s: %s; killing worker %d", self.name, why, worker.proc.pid)
            worker.kill()

    # -- the call ----------------------------------------------------------------------------------
    async def complete(
        self,
        messages: list[ChatMessage],
        *,
        on_progress: ProgressCallback | None = None,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
    ) -> Completion:
        """Generate one answer. `on_progress` gets LocalProgress records (queued, loading/downloading,
        tokens generated so far); it runs on the event loop and must not block. `max_tokens` and
        `timeout_s` override the settings for this request."""
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
                self._loading_listener = on_progress
                try:
                    worker = await self._ensure_worker()
                finally:
                    self._loading_listener = None
                loop = asyncio.get_running_loop()
                job = _Job(next(self._ids), on_progress, loop)
                self._jobs[job.id] = job  # from here on the slot is released by _finish
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
                    )
                )
            except BaseException:
                if job is None or job.id not in self._jobs:
                    slot.release()
                raise
            try:
                async with asyncio.timeout(timeout + HARD_GRACE_S):
                    result = await asyncio.shield(job.future)
            except TimeoutError:
                self._kill_if_running(worker, job, "generation did not stop at its deadline")
                raise BackendError("timeout", f"backend {self.name!r} did not answer within {timeout:g} s") from None
            except asyncio.CancelledError:
                if job.id in self._jobs:
                    worker.send(Cancel(job.id))
                    asyncio.get_running_loop().call_later(
                        self.cancel_grace_s, self._kill_if_running, worker, job, "cancel not confirmed"
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
        )

    async def aclose(self) -> None:
        """Stop the worker: ask, then kill after a short wait."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        if worker.alive:
            worker.send(Shutdown())
            with contextlib.suppress(Exception):
                if worker.proc.stdin is not None:
                    worker.proc.stdin.close()
            try:
                await asyncio.wait_for(worker.proc.wait(), 3.0)
            except TimeoutError:
                worker.kill()
                await worker.proc.wait()
        for task in worker.tasks:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, 2.0)
