"""`--serve-vllm MODEL`: a local vLLM OpenAI-compatible server for the length of a run.

Started as `vllm serve MODEL` (the `vllm` executable on PATH, or `EDIT_FIDELITY_VLLM`) on
127.0.0.1 with settings suited to benchmarks: a fixed seed, prefix caching (every sample of a task
shares its prompt), a high `--max-num-seqs`, and `--generation-config vllm` so the sampling is the
one the requests ask for, not the model repository's defaults. Its output goes to RUN_DIR/vllm.log;
we wait until `/health` and `/v1/models` answer (or the process dies: its log tail is the error)
and stop its whole process group at the end (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Self

EXECUTABLE_ENV = "EDIT_FIDELITY_VLLM"


class VllmError(Exception):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(
    executable: str,
    model: str,
    port: int,
    *,
    host: str = "127.0.0.1",
    tensor_parallel: int = 1,
    data_parallel: int = 1,
    seed: int = 0,
    max_num_seqs: int = 256,
    extra: list[str] | None = None,
) -> list[str]:
    # data parallel: vLLM runs N replicas behind its one endpoint and balances them itself
    dp = ["--data-parallel-size", str(data_parallel)] if data_parallel > 1 else []
    return [
        executable,
        "serve",
        model,
        "--host",
        host,
        "--port",
        str(port),
        "--tensor-parallel-size",
        str(tensor_parallel),
        *dp,
        "--seed",
        str(seed),
        "--enable-prefix-caching",
        "--max-num-seqs",
        str(max_num_seqs),
        "--generation-config",
        "vllm",
        "--served-model-name",
        model,
        *(extra or []),
    ]


class VllmServer:
    def __init__(
        self,
        model: str,
        log_path: Path,
        *,
        host: str = "127.0.0.1",  # where it listens: the cluster address when language servers run on nodes
        tensor_parallel: int = 1,
        data_parallel: int = 1,
        seed: int = 0,
        max_num_seqs: int = 256,
        extra: list[str] | None = None,
        startup_timeout_s: float = 1800.0,
        executable: str | None = None,
    ) -> None:
        exe = executable or os.environ.get(EXECUTABLE_ENV) or shutil.which("vllm")
        if not exe:
            raise VllmError(
                "--serve-vllm needs the `vllm` executable on PATH (pip install 'edit-fidelity[vllm]' on a "
                f"GPU machine) or {EXECUTABLE_ENV}=/path/to/vllm"
            )
        self.model = model
        self.host = host
        self.port = free_port()
        self.cmd = command(
            exe,
            model,
            self.port,
            host=host,
            tensor_parallel=tensor_parallel,
            data_parallel=data_parallel,
            seed=seed,
            max_num_seqs=max_num_seqs,
            extra=extra,
        )
        self.log_path = log_path
        self.startup_timeout_s = startup_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"{self._origin}/v1"

    @property
    def _origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 cluster address
        return f"http://{host}:{self.port}"

    def _get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(f"{self._origin}{path}", timeout=5) as resp:  # noqa: S310  # http, its own server
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, b""
        except (urllib.error.URLError, OSError):
            return 0, b""

    def _log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def start(self) -> Self:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            code = self.proc.poll()
            if code is not None:
                raise VllmError(
                    f"vLLM exited with status {code} before it was ready; {self.log_path}:\n{self._log_tail()}"
                )
            status, _ = self._get("/health")
            if status == 200:
                status, body = self._get("/v1/models")
                if status == 200 and any(m.get("id") == self.model for m in json.loads(body or b"{}").get("data", [])):
                    return self
            if time.monotonic() > deadline:
                self.stop()
                raise VllmError(
                    f"vLLM not ready after {self.startup_timeout_s:.0f} s; {self.log_path}:\n{self._log_tail()}"
                )
            time.sleep(0.2)

    def stop(self, grace_s: float = 30.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
