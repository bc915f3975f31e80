"""The docker level: a pool of long-lived locked-down containers, one per slot, driven by the SDK.

Chosen only when `docker.from_env().ping()` answers. Containers are started once (`sleep infinity`)
and reused: each run copies its files into a fresh dir on the container's tmpfs, execs the command
under `timeout` as the unprivileged user, then kills every process of that user and removes the dir.
"""

from __future__ import annotations

import io
import shlex
import tarfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec

from sandbox.config import Limits
from sandbox.languages import PYTHON_FLAGS, Plan
from sandbox.process import Outcome
from sandbox.request import (
    COVERAGE_REPORT,
    Request,
    error_result,
    parse_coverage,
    to_result,
)
from sandbox.result import ExecResult, FileCoverage, Level

IMAGE = "edit-fidelity-sandbox:latest"
IMAGES_DIR = Path(__file__).parent / "images"
USER = "65534:65534"
WORK = "/work"
CONTAINER_PYTHON = "/opt/venv/bin/python"
LABEL = "edit-fidelity.sandbox"


def container_config(slot: int, limits: Limits, image: str = IMAGE, cpus: float = 1.0) -> dict[str, Any]:
    """Keyword arguments for `client.containers.run` (pure, so it is testable without an engine)."""
    return {
        "image": image,
        "command": ["sleep", "infinity"],
        "name": f"edit-fidelity-sandbox-{slot}-{uuid.uuid4().hex[:6]}",
        "detach": True,
        "auto_remove": False,
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {WORK: f"rw,exec,nosuid,size={limits.file_size_mb * 4}m,mode=1777",
                  "/tmp": f"rw,nosuid,nodev,size={limits.tmp_mb}m,mode=1777"},
        "user": USER,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "pids_limit": limits.nproc,
        "mem_limit": f"{limits.memory_mb + 256}m",
        "memswap_limit": f"{limits.memory_mb + 256}m",
        "nano_cpus": int(cpus * 1e9),
        "ulimits": [{"name": "core", "soft": 0, "hard": 0},
                    {"name": "nofile", "soft": limits.open_files, "hard": limits.open_files},
                    {"name": "fsize", "soft": limits.file_size_mb << 20, "hard": limits.file_size_mb << 20}],
        "environment": {"HOME": WORK, "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
                        "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg"},
        "labels": {LABEL: "1"},
        "init": True,
    }


def exec_command(cmd: list[str], run_dir: str, timeout_s: float, as_mb: int, limits: Limits) -> list[str]:
    """The shell line run by `exec`: per-run rlimits, then `timeout -s KILL` around the command."""
    ulimits = f"ulimit -t {max(1, int(timeout_s + 1))}"
    if as_mb:
        ulimits += f" && ulimit -v {as_mb * 1024}"
    inner = f"cd {shlex.quote(run_dir)} && {ulimits} && exec timeout -s KILL {timeout_s:.3f} {shlex.join(cmd)}"
    return ["/bin/sh", "-c", inner]


def build_context() -> bytes:
    """The image's build context: the Dockerfile plus files generated from the same sources the
    local levels use (suite requirements, the vllm stub, the coverage driver), so they cannot drift."""
    from sandbox import envs

    files = {
        "Dockerfile": (IMAGES_DIR / "Dockerfile").read_bytes(),
        "requirements-canitedit.txt": "\n".join(envs.CANITEDIT_REQUIREMENTS).encode() + b"\n",
        "vllm_stub.py": envs.VLLM_STUB.encode(),
        "covdriver.py": (Path(__file__).parent / "covdriver.py").read_bytes(),
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _tar(files: dict[str, bytes], root: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{root}/{name}")
            info.size, info.mode, info.uid, info.gid = len(data), 0o644, 65534, 65534
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class DockerBackend:
    level: Level = "docker"
    isolated = True

    def __init__(self, slots: int, limits: Limits, image: str = IMAGE) -> None:
        import docker  # deferred: only needed when an engine answers

        self.client = docker.from_env(timeout=10)
        self.image = image
        self.limits = limits
        self._containers: dict[int, Any] = {}
        self._lock = threading.Lock()
        self.slots = slots

    @staticmethod
    def available() -> str | None:
        """None when an engine answers ping(), else the reason it does not."""
        try:
            import docker

            docker.from_env(timeout=2).ping()
            return None
        except Exception as exc:  # noqa: BLE001 - any failure means "no engine here"
            return f"no docker engine: {type(exc).__name__}: {str(exc)[:200]}"

    def build_image(self) -> None:
        self.client.images.build(fileobj=io.BytesIO(build_context()), custom_context=True,
                                 tag=self.image, rm=True)

    def _container(self, slot: int) -> Any:
        with self._lock:
            box = self._containers.get(slot)
            if box is None:
                box = self.client.containers.run(**container_config(slot, self.limits, self.image,
                                                                     cpus=1.0))
                self._containers[slot] = box
            return box

    def close(self) -> None:
        with self._lock:
            for box in self._containers.values():
                try:
                    box.remove(force=True)
                except Exception:  # noqa: BLE001 - best effort at shutdown
                    pass
            self._containers.clear()

    def execute(self, req: Request, uid: int) -> ExecResult:
        slot = uid  # one container per leased slot
        try:
            box = self._container(slot)
        except Exception as exc:  # noqa: BLE001
            return error_result(f"docker: {exc}", level="docker", isolated=True, language=req.language.name)
        run_dir = f"{WORK}/{uuid.uuid4().hex[:12]}"
        try:
            box.put_archive(WORK, _tar(req.files, run_dir.rsplit("/", 1)[1]))
            plan = req.language.plan(req.entry, req.limits, CONTAINER_PYTHON)
            if req.command:
                plan = Plan(run=[CONTAINER_PYTHON if a == "python" else a for a in req.command],
                            run_as_mb=plan.run_as_mb)
            if req.coverage:
                plan = Plan(run=[CONTAINER_PYTHON, *PYTHON_FLAGS, "/opt/edit-fidelity/covdriver.py",
                                 COVERAGE_REPORT, req.entry], run_as_mb=plan.run_as_mb)
            if plan.compile:
                out = self._exec(box, exec_command(plan.compile, run_dir, 30.0, plan.compile_as_mb, req.limits),
                                 None, 35.0, req.limits.output_limit)
                if out.timed_out or out.returncode != 0:
                    return to_result(out, level="docker", isolated=True, language=req.language.name,
                                     phase="compile", signal_from_code=True, cpu_limit_s=30.0)
            out = self._exec(box, exec_command(plan.run, run_dir, req.limits.timeout_s, plan.run_as_mb, req.limits),
                             req.stdin, req.limits.timeout_s + 5.0, req.limits.output_limit)
            # `timeout -s KILL` exits 137 when it had to kill.
            out.timed_out = out.timed_out or (out.returncode == 137 and out.wall_s >= req.limits.timeout_s)
            result = to_result(out, level="docker", isolated=True, language=req.language.name, phase="run",
                               signal_from_code=True, cpu_limit_s=req.limits.timeout_s)
            if req.coverage and result.status in ("ok", "failed"):
                result = msgspec.structs.replace(result, coverage=self._coverage(box, run_dir))
            return result
        except Exception as exc:  # noqa: BLE001 - engine errors become error results, never hangs
            return error_result(f"docker: {exc}", level="docker", isolated=True, language=req.language.name)
        finally:
            try:  # no survivors: kill every process of the user except init, then drop the dir
                box.exec_run(["/bin/sh", "-c", f"kill -9 -1; rm -rf {shlex.quote(run_dir)}"], user=USER)
            except Exception:  # noqa: BLE001
                pass

    def _coverage(self, box: Any, run_dir: str) -> dict[str, FileCoverage] | None:
        stream, _ = box.get_archive(f"{run_dir}/{COVERAGE_REPORT}")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.next()
            fh = tar.extractfile(member) if member is not None and member.isfile() else None
            return parse_coverage(fh.read()) if fh else None

    def _exec(self, box: Any, cmd: list[str], stdin: bytes | None, hard_timeout: float, cap: int) -> Outcome:
        api = self.client.api
        started = time.monotonic()
        exec_id = api.exec_create(box.id, cmd, user=USER, stdin=stdin is not None, workdir=WORK)["Id"]
        out = Outcome()
        sock = api.exec_start(exec_id, socket=stdin is not None, stream=stdin is None, demux=True)
        if stdin is not None:  # raw socket: send stdin, then read the multiplexed stream
            raw = getattr(sock, "_sock", sock)
            raw.sendall(stdin)
            raw.shutdown(1)
            from docker.utils.socket import (
                consume_socket_output,
                demux_adaptor,
                frames_iter,
            )

            stream = (demux_adaptor(*frame) for frame in frames_iter(sock, tty=False))
            chunks = consume_socket_output(stream, demux=True)
            pairs = [chunks]
        else:
            pairs = sock
        stdout, stderr = bytearray(), bytearray()
        for pair in pairs:
            o, e = pair if isinstance(pair, tuple) else (pair, None)
            stdout += o or b""
            stderr += e or b""
            if len(stdout) + len(stderr) > cap:
                out.output_exceeded = True
                break
            if time.monotonic() - started > hard_timeout:
                out.timed_out = True
                break
        info = api.exec_inspect(exec_id)
        out.returncode = info.get("ExitCode")
        out.stdout, out.stderr = bytes(stdout[:cap]), bytes(stderr[:cap])
        out.wall_s = time.monotonic() - started
        return out
