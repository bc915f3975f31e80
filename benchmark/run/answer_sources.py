"""Where a replay's answers come from, `bench run --backend SPEC`: `recorded:PATH`, `gold`, `identity`,
`openai` (with --base-url/--model), `local[:MODEL]` (the server's embedded CPU model: a hub id or a local
directory). Each is the run's backend as the server sees it (`server/backends` is the server's own side).

Replayed backends answer through a local `ReplayEndpoint`, one server-side backend per sample slot
(`s0`, `s1`, ...), so sample i of a task always gets completion i whatever the concurrency.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from benchmark.run import recorded as rec
from benchmark.run.balancer import Balancer, EndpointsError, check_urls
from benchmark.run.endpoint import AnswerBook, ReplayEndpoint
from benchmark.suite import Suite, Task

# The engine's one interface to a backend (both kinds below have it):
#   serving(samples, concurrency, style, host) -> context giving the server's `backends` settings (`host`:
#                                                 where endpoints of its own listen: 127.0.0.1, or the
#                                                 driver's cluster address for servers on other nodes)
#   staged(suite, task, condition, sample)     -> context around one request; it gives False when the
#                                                 backend has no answer for that sample (a missing record)
#   recorded_verdict(task_id, condition, sample) -> (recorded pass, recorded-missing) from a recorded run
#   slot(sample), samples_per_request(samples), default_samples(); `recorded` (None: not a recorded run)


class BackendSpecError(Exception):
    pass


@dataclass
class Replay:
    """Answers known in advance: recorded completions, the gold `after`, or `before` unchanged."""

    kind: str  # recorded | gold | identity
    recorded: Any = None  # the suite's recorded run (`Suite.load_recorded`): get / verdict / samples
    book: AnswerBook = field(default_factory=AnswerBook)

    def answer(self, suite: Suite, task: Task, condition: str, sample: int) -> str | None:
        if self.kind == "gold":
            return suite.solver.gold_answer(task, condition)
        if self.kind == "identity":
            return suite.solver.identity_answer(task, condition)
        assert self.recorded is not None
        completions = self.recorded.get(task.task_id, condition)
        return completions[sample] if sample < len(completions) else None

    def slot(self, sample: int) -> str:
        return f"s{sample}"

    def server_backends(self, base_url: str, samples: int, concurrency: int) -> list[dict]:
        return [
            {
                "name": self.slot(i),
                "baseUrl": base_url,
                "model": self.slot(i),
                "maxConcurrency": concurrency,
                "timeoutS": 120,
                "maxRetries": 0,
                "temperature": 0,
            }
            for i in range(samples)
        ]

    def samples_per_request(self, samples: int) -> int:
        return 1  # sample i has its own slot (its own stored answer)

    def default_samples(self) -> int:
        return self.recorded.samples if self.recorded is not None else 1

    @contextmanager
    def serving(self, samples: int, concurrency: int, style: str, host: str = "127.0.0.1") -> Iterator[list[dict]]:
        """A local endpoint that answers each sample slot from the book while the run lasts."""
        del style  # the answers are fixed; the prompt style does not change them
        with ReplayEndpoint(self.book, host=host) as ep:
            yield self.server_backends(ep.base_url, samples, concurrency)

    @contextmanager
    def staged(self, suite: Suite, task: Task, condition: str, sample: int) -> Iterator[bool]:
        """The sample's answer put in the book for the request, taken out after it."""
        answer = self.answer(suite, task, condition, sample)
        if answer is None:
            yield False
            return
        slot = self.slot(sample)
        handle = self.book.put(
            slot,
            suite.solver.replay_key(task, condition),
            task.instruction(condition),
            answer,
            lang=suite.solver.answer_fence(task, condition),
        )
        try:
            yield True
        finally:
            self.book.drop(slot, handle)

    def recorded_verdict(
        self,
        task_id: str,
        condition: str,
        sample: int,
    ) -> tuple[bool | None, list[int] | None] | None:
        if self.recorded is None:
            return None
        missing = getattr(self.recorded, "recorded_missing", None)
        return (
            self.recorded.verdict(task_id, condition, sample),
            missing(task_id, condition, sample) if missing is not None else None,
        )


@dataclass
class OpenAI:
    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    timeout_s: float = 300.0
    name: str = "model"
    serve_vllm: bool = False  # base_url comes from a vLLM server the run starts (`vllm:MODEL`)
    # several endpoints serving the same model: the server is given one backend, a local balancer
    # (benchmark/run/balancer.py) in front of them; empty: base_url alone
    endpoints: tuple[str, ...] = ()
    endpoint_stats: list[Any] = field(default_factory=list)  # after `serving`: the balancer's per-endpoint counts

    recorded = None  # a live model: no recorded run

    def slot(self, sample: int) -> str:
        return self.name

    def default_samples(self) -> int:
        return 1

    def serving(
        self, samples: int, concurrency: int, style: str, host: str = "127.0.0.1"
    ) -> AbstractContextManager[list[dict]]:
        del samples  # one server-side backend; `n` per request carries the samples
        if len(self.endpoints) > 1:
            return self._balanced(concurrency, style, host)
        return nullcontext(self.server_backends(concurrency, style))

    @contextmanager
    def _balanced(self, concurrency: int, style: str, host: str) -> Iterator[list[dict]]:
        with Balancer(list(self.endpoints), timeout_s=self.timeout_s, host=host) as bal:
            try:
                yield self.server_backends(concurrency, style, base_url=bal.base_url)
            finally:
                self.endpoint_stats = bal.stats()

    def staged(self, suite: Suite, task: Task, condition: str, sample: int) -> AbstractContextManager[bool]:
        return nullcontext(True)  # the model answers the request itself

    def recorded_verdict(self, task_id: str, condition: str, sample: int) -> None:
        return None

    def samples_per_request(self, samples: int) -> int:
        # the endpoint's `n`: one prompt, n samples (vLLM shares the prompt's prefill); the embedded model
        # samples one answer per request
        return 1 if self.base_url == "local" else min(samples, 64)

    def server_backends(self, concurrency: int, style: str, *, base_url: str | None = None) -> list[dict]:
        entry: dict = {
            "name": self.name,
            "baseUrl": base_url or self.base_url,
            "model": self.model,
            "style": style,
            "maxConcurrency": concurrency,
            "timeoutS": self.timeout_s,
            "maxRetries": 2,
        }
        if self.api_key_env:
            entry["apiKeyEnv"] = self.api_key_env  # the variable's name; the server reads it from its environment
        if self.temperature is not None:
            entry["temperature"] = self.temperature
        if self.top_p is not None:
            entry["topP"] = self.top_p
        if self.max_tokens is not None:
            entry["maxTokens"] = self.max_tokens
        return [entry]


Backend = Replay | OpenAI


def parse(
    spec: str,
    *,
    suite: Suite | None = None,
    base_url: str | list[str] | None = None,
    model: str | None = None,
    api_key_env: str | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
) -> Backend:
    if spec in ("gold", "identity"):
        return Replay(spec)
    if spec.startswith("recorded:"):
        path = spec.split(":", 1)[1]
        if not path:
            raise BackendSpecError("recorded: needs a path, e.g. recorded:RUN.tar.gz or recorded:RUN_DIR")
        try:
            return Replay("recorded", suite.solver.load_recorded(path) if suite is not None else rec.load(path))
        except (rec.RecordedError, OSError, ValueError) as exc:
            raise BackendSpecError(
                f"recorded run {path}: {exc}" if not isinstance(exc, rec.RecordedError) else str(exc)
            ) from None
    if spec.startswith("vllm:"):
        name = spec.split(":", 1)[1]
        if not name:
            raise BackendSpecError("vllm: needs a model, e.g. --serve-vllm Qwen/Qwen2.5-Coder-7B-Instruct")
        return OpenAI(
            base_url="", model=name, temperature=temperature, top_p=top_p, max_tokens=max_tokens, serve_vllm=True
        )
    if spec == "openai":
        urls = [base_url] if isinstance(base_url, str) else list(base_url or [])
        if not urls or not model:
            raise BackendSpecError(
                "--backend openai needs --base-url URL (one or more, or --endpoints FILE) and --model NAME"
            )
        if len(urls) > 1:
            try:
                urls = check_urls(urls)
            except EndpointsError as exc:
                raise BackendSpecError(str(exc)) from None
        return OpenAI(
            base_url=urls[0],
            model=model,
            api_key_env=api_key_env,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            endpoints=tuple(urls) if len(urls) > 1 else (),
        )
    if spec == "local" or spec.startswith("local:"):
        # The server runs the model itself (baseUrl "local"); the CPU needs minutes, not seconds.
        return OpenAI(
            base_url="local",
            model=spec,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            timeout_s=600.0,
            name="local",
        )
    raise BackendSpecError(
        f"unknown backend {spec!r}; use recorded:PATH, gold, identity, openai, local[:MODEL] or --serve-vllm MODEL"
    )
