"""The model worker process of the `local` backend: loads one model on the CPU and serves generation
requests one at a time over the pipe protocol in `local_protocol`.

    python -m server.backends.local_worker '<WorkerConfig JSON>'

The engine follows the spec: GGUF files on llama.cpp (`local_llama_direct`, else `local_llama`),
transformers models on torch (`local_hf`). A reader thread takes requests from stdin while the main
thread generates, so a `cancel` lands during generation: the engine checks the flag after every token.
When stdin closes (the server went away) the process exits at once, whatever it was doing.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from typing import TYPE_CHECKING

import msgspec

from server.backends.local_protocol import (
    Cancel,
    Event,
    Generate,
    LoadFailed,
    ModelUnavailable,
    Shutdown,
    WorkerConfig,
    decode_request,
    encode,
)
from server.backends.local_spec import INSTALL_HINT, dependency_problem


class Channel:
    """Events to the server on a private duplicate of stdout; fd 1 itself then points at stderr."""

    def __init__(self) -> None:
        fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self._out = os.fdopen(fd, "wb", buffering=0)
        self._lock = threading.Lock()

    def send(self, event: Event) -> None:
        data = encode(event) + b"\n"
        with self._lock:
            self._out.write(data)


class Inbox:
    """Reads requests on a thread: generation requests queue up, cancels take effect at once."""

    def __init__(self) -> None:
        self.jobs: queue.Queue[Generate | None] = queue.Queue()
        self.cancelled: set[int] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, name="inbox", daemon=True).start()

    def is_cancelled(self, job_id: int) -> bool:
        with self._lock:
            return job_id in self.cancelled

    def forget(self, job_id: int) -> None:
        with self._lock:
            self.cancelled.discard(job_id)

    def _read(self) -> None:
        for line in sys.stdin.buffer:
            try:
                req = decode_request(line)
            except msgspec.DecodeError as exc:
                print(f"local worker: ignored a bad request: {exc}", file=sys.stderr)
                continue
            if isinstance(req, Generate):
                self.jobs.put(req)
            elif isinstance(req, Cancel):
                with self._lock:
                    self.cancelled.add(req.id)
            elif isinstance(req, Shutdown):
                self.jobs.put(None)
        os._exit(0)  # the server closed the pipe: nobody is left to answer


if TYPE_CHECKING:
    from server.backends.local_hf import HFModel
    from server.backends.local_llama import LlamaModel
    from server.backends.local_llama_direct import LlamaDirect


def main(argv: list[str]) -> int:
    channel = Channel()
    if len(argv) != 1:
        print("usage: python -m server.backends.local_worker '<WorkerConfig JSON>'", file=sys.stderr)
        return 2
    cfg = msgspec.json.decode(argv[0], type=WorkerConfig)
    problem = dependency_problem(engine=cfg.engine)
    if problem:
        channel.send(LoadFailed("missing_dependency", problem))
        return 3
    if cfg.offline:
        os.environ["HF_HUB_OFFLINE"] = "1"
    inbox = Inbox()  # before loading, so a closed pipe ends a long download too
    try:
        if cfg.engine == "gguf":
            from server.backends.local_llama_direct import load_gguf

            model: LlamaDirect | LlamaModel | HFModel = load_gguf(cfg, channel)
        else:
            from server.backends.local_hf import HFModel

            model = HFModel(cfg, channel)
    except ModelUnavailable as exc:
        channel.send(LoadFailed("model_unavailable", str(exc)))
        return 4
    except ImportError as exc:
        channel.send(LoadFailed("missing_dependency", f"{exc}; install with: {INSTALL_HINT}"))
        return 3
    channel.send(model.ready)
    while True:
        req = inbox.jobs.get()
        if req is None:
            model.close()
            return 0
        try:
            channel.send(model.generate(req, inbox, channel))
        finally:
            inbox.forget(req.id)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
