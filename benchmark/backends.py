"""Backend specs for replay: `recorded:PATH`, `gold`, `identity`, `openai` (with --base-url/--model),
`local[:MODEL]` (the server's embedded CPU model: a hub id or a local directory).

Replayed backends answer through a local `ReplayEndpoint`, one server-side backend per sample slot
(`s0`, `s1`, ...), so sample i of a task always gets completion i whatever the concurrency.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchmark import recorded as rec
from benchmark.endpoint import AnswerBook
from benchmark.suite import Suite, Task


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
            return suite.gold_answer(task, condition)
        if self.kind == "identity":
            return suite.identity_answer(task, condition)
        assert self.recorded is not None
        completions = self.recorded.get(task.task_id, condition)
        return completions[sample] if sample < len(completions) else None

    def slot(self, sample: int) -> str:
        return f"s{sample}"

    def server_backends(self, base_url: str, samples: int, concurrency: int) -> list[dict]:
        return [{"name": self.slot(i), "baseUrl": base_url, "model": self.slot(i), "maxConcurrency": concurrency,
                 "timeoutS": 120, "maxRetries": 0, "temperature": 0} for i in range(samples)]

    def samples_per_request(self, samples: int) -> int:
        return 1  # sample i has its own slot (its own stored answer)

    def default_samples(self) -> int:
        return self.recorded.samples if self.recorded is not None else 1


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

    def slot(self, sample: int) -> str:
        return self.name

    def samples_per_request(self, samples: int) -> int:
        # the endpoint's `n`: one prompt, n samples (vLLM shares the prompt's prefill); the embedded model
        # samples one answer per request
        return 1 if self.base_url == "local" else min(samples, 64)

    def server_backends(self, concurrency: int, style: str) -> list[dict]:
        entry: dict = {"name": self.name, "baseUrl": self.base_url, "model": self.model, "style": style,
                       "maxConcurrency": concurrency, "timeoutS": self.timeout_s, "maxRetries": 2}
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


def parse(spec: str, *, suite: Suite | None = None, base_url: str | None = None, model: str | None = None,
          api_key_env: str | None = None, temperature: float | None = None, top_p: float | None = None,
          max_tokens: int | None = None) -> Backend:
    if spec in ("gold", "identity"):
        return Replay(spec)
    if spec.startswith("recorded:"):
        path = spec.split(":", 1)[1]
        if not path:
            raise BackendSpecError("recorded: needs a path, e.g. recorded:RUN.tar.gz or recorded:RUN_DIR")
        try:
            return Replay("recorded", suite.load_recorded(path) if suite is not None else rec.load(path))
        except (rec.RecordedError, OSError, ValueError) as exc:
            raise BackendSpecError(f"recorded run {path}: {exc}" if not isinstance(exc, rec.RecordedError) else str(exc)) from None
    if spec.startswith("vllm:"):
        name = spec.split(":", 1)[1]
        if not name:
            raise BackendSpecError("vllm: needs a model, e.g. --serve-vllm Qwen/Qwen2.5-Coder-7B-Instruct")
        return OpenAI(base_url="", model=name, temperature=temperature, top_p=top_p, max_tokens=max_tokens, serve_vllm=True)
    if spec == "openai":
        if not base_url or not model:
            raise BackendSpecError("--backend openai needs --base-url URL and --model NAME")
        return OpenAI(base_url=base_url, model=model, api_key_env=api_key_env, temperature=temperature,
                      top_p=top_p, max_tokens=max_tokens)
    if spec == "local" or spec.startswith("local:"):
        # The server runs the model itself (baseUrl "local"); the CPU needs minutes, not seconds.
        return OpenAI(base_url="local", model=spec, temperature=temperature, top_p=top_p, max_tokens=max_tokens, timeout_s=600.0,
                      name="local")
    raise BackendSpecError(
        f"unknown backend {spec!r}; use recorded:PATH, gold, identity, openai, local[:MODEL] or --serve-vllm MODEL"
    )
