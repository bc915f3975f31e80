"""The transformers engine of the model worker: a causal LM from a model directory (`local:DIR`) or the
Hugging Face hub (`local:HUB_ID`) on torch, for models that are not GGUF files (and for the tests'
tiny random-weight model, which checks the worker protocol quickly).

A StoppingCriteria checks the cancel flag and the deadline after every token.
"""

from __future__ import annotations

import contextlib
import os
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

# what a hub download fetches: weights, config and tokenizer, not other formats (gguf, onnx...)
HUB_PATTERNS = ["*.json", "*.safetensors", "*.model", "*.txt", "*.jinja", "*.tiktoken", "merges.txt"]


def _progress_class(channel: Any) -> Any:
    """A tqdm that reports hub downloads as Loading events instead of drawing bars."""
    from tqdm import tqdm

    class PipeProgress(tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("name", None)  # huggingface_hub's own tqdm takes it, vanilla tqdm does not
            kwargs["file"] = open(os.devnull, "w")  # noqa: SIM115 - closed with the bar
            kwargs.setdefault("mininterval", 0.25)
            self._sent = 0.0  # tqdm's __init__ already displays
            super().__init__(*args, **kwargs)

        def display(self, *args: Any, **kwargs: Any) -> bool:  # type: ignore[override]  # tqdm's does; stubs: None
            if (self.desc or "").startswith("Reconstruct"):  # xet's second bar repeats the byte count
                return True
            now = time.monotonic()
            if now - self._sent < 0.25 and not (self.total and self.n >= self.total):
                return True
            self._sent = now
            desc = (self.desc or "downloading").rstrip(": ")
            total = int(self.total) if self.total else None
            if self.unit == "B":
                size = f"{self.n / 1e6:.1f}" + (f" of {total / 1e6:.1f}" if total else "") + " MB"
                channel.send(Loading("downloading", f"{desc}: {size}", int(self.n), total))
            else:
                channel.send(Loading("downloading", f"{desc}: {int(self.n)}" + (f"/{total}" if total else "")))
            return True

        def close(self) -> None:
            fp = self.fp
            super().close()
            with contextlib.suppress(OSError):
                fp.close()

    return PipeProgress


def resolve(cfg: WorkerConfig, channel: Any) -> str:
    """The model directory: the path itself, or the hub snapshot (downloaded when not cached)."""
    if cfg.source == "path":
        return cfg.model
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:  # the cache first: no network when the model is there (a cached model is used as it is)
        return snapshot_download(cfg.model, allow_patterns=HUB_PATTERNS, local_files_only=True)
    except LocalEntryNotFoundError:
        if cfg.offline:
            raise ModelUnavailable(
                f"model {cfg.model} is not in the Hugging Face cache and offline mode is on; run once without "
                "--offline (it downloads ~1 GB) or point to a directory with local:PATH"
            ) from None
    channel.send(Loading("downloading", f"downloading {cfg.model} from the Hugging Face hub (first use)"))
    try:
        return snapshot_download(cfg.model, allow_patterns=HUB_PATTERNS, tqdm_class=_progress_class(channel))
    except Exception as exc:  # noqa: BLE001 - network, auth, a wrong id: all end in one clear message
        raise ModelUnavailable(
            f"cannot download {cfg.model} from the Hugging Face hub ({type(exc).__name__}: {str(exc)[:200]}); "
            "check the model id and the network, or use local:PATH"
        ) from None


def threads_for(cfg: WorkerConfig) -> int:
    """Torch threads: as configured, else OMP_NUM_THREADS, else half the CPUs. On 2 shared cores one
    thread decoded the default model's shape at 6 tok/s and two at 1-5 tok/s (OpenMP threads spin
    against whatever else runs); half the CPUs also leaves room for the editor and the server."""
    if cfg.threads:
        return cfg.threads
    omp = os.environ.get("OMP_NUM_THREADS", "")
    if omp.isdigit() and int(omp) > 0:
        return int(omp)
    return max(1, (os.cpu_count() or 2) // 2)


class HFModel:
    def __init__(self, cfg: WorkerConfig, channel: Any) -> None:
        started = time.monotonic()
        path = resolve(cfg, channel)  # before importing torch: a missing model fails in a second, not five
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        torch.set_num_threads(threads_for(cfg))
        channel.send(Loading("loading", f"loading {cfg.model if cfg.source == 'hub' else path}"))
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            dtype = getattr(torch, cfg.dtype)
            self.model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).eval()
        except Exception as exc:  # noqa: BLE001 - a broken or foreign directory
            raise ModelUnavailable(
                f"cannot load a causal language model from {path}: {type(exc).__name__}: {str(exc)[:300]}"
            ) from None
        if not getattr(self.tokenizer, "chat_template", None):
            raise ModelUnavailable(
                f"{cfg.model} has no chat template; the local backend needs an instruction-tuned (chat) model"
            )
        gen = self.model.generation_config
        eos = gen.eos_token_id if gen.eos_token_id is not None else self.tokenizer.eos_token_id
        self.eos: set[int] = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if self.tokenizer.eos_token_id is not None:
            self.eos.add(self.tokenizer.eos_token_id)
        pad = self.tokenizer.pad_token_id
        self.pad = pad if pad is not None else min(self.eos) if self.eos else 0
        self.context: int | None = getattr(self.model.config, "max_position_embeddings", None)
        self.torch = torch
        self.ready = Ready(
            model=cfg.model,
            path=path,
            load_s=time.monotonic() - started,
            threads=torch.get_num_threads(),
            context=self.context,
            dtype=cfg.dtype,
            engine="hf",
        )

    def generate(self, req: Generate, inbox: Any, channel: Any) -> Finished | Failed:
        from transformers import (
            GenerationConfig,
            StoppingCriteria,
            StoppingCriteriaList,
        )

        torch = self.torch
        received = time.monotonic()
        deadline = received + req.timeout_s
        enc: Any = self.tokenizer.apply_chat_template(
            [{"role": r, "content": c} for r, c in req.messages],
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
        )
        n_prompt = int(enc["input_ids"].shape[1])
        max_new = req.max_new_tokens
        if self.context is not None:
            if n_prompt >= self.context:
                return Failed(
                    req.id, "too_large", f"the prompt has {n_prompt} tokens; the model's context is {self.context}"
                )
            max_new = min(max_new, self.context - n_prompt)
        channel.send(Started(req.id, n_prompt, max_new))

        class Watch(StoppingCriteria):
            """Called after every new token: progress, cancellation, deadline."""

            reason: str | None = None
            first: float | None = None
            sent = 0.0

            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                now = time.monotonic()
                done = int(input_ids.shape[1]) - n_prompt
                if self.first is None:
                    self.first = now
                if now - self.sent >= req.progress_interval_s:
                    self.sent = now
                    channel.send(Tokens(req.id, done))
                if inbox.is_cancelled(req.id):
                    self.reason = "cancelled"
                elif now > deadline:
                    self.reason = "timeout"
                stop = self.reason is not None
                return torch.full((input_ids.shape[0],), stop, dtype=torch.bool, device=input_ids.device)

        watch = Watch()
        sample = req.temperature > 0
        # a fresh config, not the model's suggested one (top_k, repetition penalty): the settings say
        # exactly how to decode, as the papers' runs do
        config = GenerationConfig(
            max_new_tokens=max_new,
            do_sample=sample,
            temperature=req.temperature if sample else None,
            top_p=req.top_p if sample else None,
            top_k=None,
            eos_token_id=sorted(self.eos) or None,
            pad_token_id=self.pad,
        )
        if sample and req.seed is not None:
            torch.manual_seed(req.seed)
        if inbox.is_cancelled(req.id):  # cancelled while it waited in the queue
            return Finished(req.id, "", n_prompt, 0, "cancelled", None, 0.0)
        try:
            with torch.inference_mode():
                out = self.model.generate(
                    **enc, generation_config=config, stopping_criteria=StoppingCriteriaList([watch])
                )
        except Exception as exc:  # noqa: BLE001 - the request fails, the worker stays
            return Failed(req.id, "bad_response", f"generation failed: {type(exc).__name__}: {str(exc)[:300]}")
        new = out[0, n_prompt:].tolist()
        reason = watch.reason
        if reason is None:
            reason = "stop" if new and new[-1] in self.eos else "length"
        while new and (new[-1] in self.eos or new[-1] == self.pad):
            new.pop()
        text = str(self.tokenizer.decode(new, skip_special_tokens=True))
        ttft = (watch.first - received) * 1000.0 if watch.first is not None else None
        return Finished(req.id, text, n_prompt, len(new), reason, ttft, (time.monotonic() - received) * 1000.0)

    def close(self) -> None:
        pass
