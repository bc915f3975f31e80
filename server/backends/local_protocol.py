"""The pipe protocol between LocalBackend (server process) and its model worker process.

One JSON object per line. The server writes requests to the worker's stdin; the worker writes events
to a private copy of its stdout (its fd 1 is pointed at stderr, so a library's print cannot corrupt
the stream). Tags: `op` for requests, `ev` for events.
"""

from __future__ import annotations

from typing import Literal

import msgspec

LlamaApi = Literal["auto", "direct", "server"]


class WorkerConfig(msgspec.Struct, frozen=True):
    source: str  # default | named | file (GGUF, llama.cpp) | path | hub (transformers)
    model: str
    offline: bool = False
    # llama.cpp: None measures 1 and 2 threads at start and keeps the faster; transformers: None is
    # OMP_NUM_THREADS, else half the CPUs
    threads: int | None = None
    dtype: str = "float32"  # transformers: float32 is the fast path on most CPUs; bfloat16 halves memory
    context: int = 8192  # llama.cpp: the KV cache's tokens (prompt and answer)
    # llama.cpp's direct engine, on the same document as the previous request: also reuse the cached
    # runs of at least this many tokens after a changed range, moved into place (0: the prefix only)
    cache_reuse: int = 0
    llama_api: LlamaApi = "auto"  # GGUF: direct (C API, KV cache edits) | server (llama.cpp's server) | auto
    models_dir: str | None = None  # where named models are (None: catalog.models_dir())

    @property
    def engine(self) -> str:
        return "hf" if self.source in ("path", "hub") else "gguf"


# -- requests (server -> worker) -------------------------------------------------------------------
class Generate(msgspec.Struct, tag="generate", tag_field="op", frozen=True):
    id: int
    messages: list[tuple[str, str]]  # (role, content)
    max_new_tokens: int
    temperature: float = 0.0  # 0: greedy
    top_p: float = 0.95
    seed: int | None = None
    timeout_s: float = 60.0
    progress_interval_s: float = 0.1
    ignore_eos: bool = False  # llama.cpp: decode to the token limit (benchmarks, tests of cancellation)
    document: str | None = None  # the open document the prompt edits: moved cache runs are reused only within one


class Cancel(msgspec.Struct, tag="cancel", tag_field="op", frozen=True):
    id: int


class Shutdown(msgspec.Struct, tag="shutdown", tag_field="op", frozen=True):
    pass


Request = Generate | Cancel | Shutdown


# -- events (worker -> server) ---------------------------------------------------------------------
class Loading(msgspec.Struct, tag="loading", tag_field="ev", frozen=True):
    phase: str  # downloading | loading
    message: str
    done_bytes: int | None = None
    total_bytes: int | None = None


class Ready(msgspec.Struct, tag="ready", tag_field="ev", frozen=True):
    model: str
    path: str
    load_s: float
    threads: int
    context: int | None  # max positions of the model, when it says
    dtype: str
    engine: str = "hf"
    threads_probe: dict[int, float] = {}  # decode tokens/s measured at start per thread count
    bytes_per_token: int | None = None  # weight bytes a decoded token reads (GGUF)
    api: str = ""  # GGUF: direct (llama.cpp's C API) | server (llama.cpp's server)


class LoadFailed(msgspec.Struct, tag="load_failed", tag_field="ev", frozen=True):
    kind: str  # missing_dependency | model_unavailable
    message: str


class Started(msgspec.Struct, tag="started", tag_field="ev", frozen=True):
    id: int
    prompt_tokens: int
    max_new_tokens: int  # after fitting the model's context


class Tokens(msgspec.Struct, tag="tokens", tag_field="ev", frozen=True):
    id: int
    tokens: int  # generated so far


class Finished(msgspec.Struct, tag="finished", tag_field="ev", frozen=True):
    id: int
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # stop | length | cancelled | timeout
    ttft_ms: float | None  # prompt processing + first token
    gen_ms: float
    cached_tokens: int = 0  # prompt tokens taken from the KV cache (llama.cpp)


class Failed(msgspec.Struct, tag="failed", tag_field="ev", frozen=True):
    id: int
    kind: str  # too_large | bad_response (an exception inside generation)
    message: str


class ModelUnavailable(Exception):
    """Inside the worker: the model cannot be found, fetched or loaded (sent as LoadFailed)."""


Event = Loading | Ready | LoadFailed | Started | Tokens | Finished | Failed

encode = msgspec.json.Encoder().encode
decode_request = msgspec.json.Decoder(Request).decode
decode_event = msgspec.json.Decoder(Event).decode
