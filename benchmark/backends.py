"""Backend specs for replay: `recorded:PATH`, `gold`, `identity`, `openai` (with --base-url/--model),
`local[:MODEL]` (the server's embedded CPU model: a hub id or a local directory).

Replayed backends answer through a local `ReplayEndpoint`, one server-side backend per sample slot
(`s0`, `s1`, ...), so sample i of a task always gets completion i whatever the concurrency.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmark import recorded as rec
from benchmark.canitedit import Problem
from benchmark.endpoint import AnswerBook


class BackendSpecError(Exception):
    pass


@dataclass
class Replay:
    """Answers known in advance: recorded completions, the gold `after`, or `before` unchanged."""

    kind: str  # recorded | gold | identity
    recorded: rec.Recorded | None = None
    book: AnswerBook = field(default_factory=AnswerBook)

    def answer(self, problem: Problem, condition: str, sample: int) -> str | None:
        if self.kind == "gold":
            return problem.after
        if self.kind == "identity":
            return problem.before
        assert self.recorded is not None
        completions = self.recorded.get(problem.task_id, condition)
        return completions[sample] if sample < len(completions) else None

    def slot(self, sample: int) -> str:
        return f"s{sample}"

    def server_backends(self, base_url: str, samples: int, concurrency: int) -> list[dict]:
        return [{"name": self.slot(i), "baseUrl": base_url, "model": self.slot(i), "maxConcurrency": concurrency,
                 "timeoutS": 120, "maxRetries": 0, "temperature": 0} for i in range(samples)]

    def default_samples(self) -> int:
        return self.recorded.samples if self.recorded is not None else 1


@dataclass
class OpenAI:
    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_s: float = 300.0
    name: str = "model"
    serve_vllm: bool = False  # base_url comes from a vLLM server the run starts (`vllm:MODEL`)

    def slot(self, sample: int) -> str:
        return self.name

    def server_backends(self, concurrency: int, style: str) -> list[dict]:
        entry: dict = {"name": self.name, "baseUrl": self.base_url, "model": self.model, "style": style,
                       "maxConcurrency": concurrency, "timeoutS": self.timeout_s, "maxRetries": 2}
        if self.api_key_env:
            entry["apiKeyEnv"] = self.api_key_env  # the variable's name; the server reads it from its environment
        if self.temperature is not None:
            entry["temperature"] = self.temperature
        if self.max_tokens is not None:
            entry["maxTokens"] = self.max_tokens
        return [entry]


Backend = Replay | OpenAI


def parse(spec: str, *, base_url: str | None = None, model: str | None = None, api_key_env: str | None = None,
          temperature: float | None = None, max_tokens: int | None = None) -> Backend:
    if spec in ("gold", "identity"):
        return Replay(spec)
    if spec.startswith("recorded:"):
        path = spec.split(":", 1)[1]
        if not path:
            raise BackendSpecError("recorded: needs a path, e.g. recorded:RUN.tar.gz or recorded:RUN_DIR")
        try:
            return Replay("recorded", rec.load(path))
        except rec.RecordedError as exc:
            raise BackendSpecError(str(exc)) from None
    if spec.startswith("vllm:"):
        name = spec.split(":", 1)[1]
        if not name:
            raise BackendSpecError("vllm: needs a model, e.g. --serve-vllm Qwen/Qwen2.5-Coder-7B-Instruct")
        return OpenAI(base_url="", model=name, temperature=temperature, max_tokens=max_tokens, serve_vllm=True)
    if spec == "openai":
        if not base_url or not model:
            raise BackendSpecError("--backend openai needs --base-url URL and --model NAME")
        return OpenAI(base_url=base_url, model=model, api_key_env=api_key_env, temperature=temperature,
                      max_tokens=max_tokens)
    if spec == "local" or spec.startswith("local:"):
        # The server runs the model itself (baseUrl "local"); the CPU needs minutes, not seconds.
        return OpenAI(base_url="local", model=spec, temperature=temperature, max_tokens=max_tokens, timeout_s=600.0,
                      name="local")
    raise BackendSpecError(
        f"unknown backend {spec!r}; use recorded:PATH, gold, identity, openai, local[:MODEL] or --serve-vllm MODEL"
    )
