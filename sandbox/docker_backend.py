"""The docker level: a pool of long-lived locked-down containers, one per slot, driven by the SDK.

Chosen only when an engine answers and the image built by `sandbox prepare --docker` from this
checkout is there (`available`); nothing is pulled. Each container's keep-alive is a root shell
(all capabilities dropped) reading the stdin this process holds open: when the owner exits, even on
SIGKILL, its stdin closes, the shell ends and the engine removes the container (`auto_remove`).
Programs never run as root: every run execs as uid 65534, so the end-of-run `kill -9 -1` (as that
uid, inside the container's pid namespace) reaches every process the run left and never the
keep-alive. Files go in and reports come out through exec streams, since the engine's archive API
refuses a read-only container and cannot see its tmpfs.

Time limits as at the local levels: `ulimit -t` is the CPU budget per process; where the engine
runs on this machine (`ContainerMeter`) the container's cgroup gives the CPU of the whole program (checked
while it runs) and host /proc the run-queue wait of its processes, sampled at the wall-clock
ceiling before they are killed; elsewhere the engine's one-shot stats give the CPU and a run stopped
at the ceiling with budget left counts as starved.
"""

from __future__ import annotations

import contextlib
import io
import os
import selectors
import shlex
import socket
import struct
import tarfile
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Any, cast

import msgspec

from sandbox import docker_image
from sandbox.config import Limits
from sandbox.languages import PYTHON_FLAGS, Plan
from sandbox.process import MIN_CHECK_S, ContainerMeter, Outcome, Sample, at_ceiling, sample, window_before_ceiling
from sandbox.request import COVERAGE_REPORT, Request, error_result, parse_coverage, to_result
from sandbox.result import ExecResult, Level, Phase
from sandbox.wrappers import cpu_rlimit

IMAGE = docker_image.IMAGE
USER = "65534:65534"
WORK = "/work"
ROOT = docker_image.ROOT_IN_IMAGE
BASE_PYTHON = "/usr/bin/python3.11"
LABEL = "edit-fidelity.sandbox"
OWNER_LABEL = "edit-fidelity.owner"
KEEPALIVE = ["/bin/sh", "-c", "read _ ; exit 0"]  # ends when the owner's attach socket closes
# kill(-1) reports success while any process is merely not ours (the root keep-alive), so the loop
# checks /proc for a live (not zombie) process of this uid other than itself and its own helpers;
# forks racing the kill get another round.
SWEEP = (
    "i=0; while :; do kill -9 -1 2>/dev/null; left=0; for p in /proc/[0-9]*; do "
    '[ "$p" = /proc/$$ ] && continue; [ -O "$p" ] || continue; '
    '{{ read -r st < "$p/stat"; }} 2>/dev/null || continue; st=${{st##*) }}; rest=${{st#* }}; '
    '[ "${{st%% *}}" = Z ] || [ "${{rest%% *}}" = $$ ] && continue; '
    "left=1; break; done; [ $left = 0 ] && break; "
    "i=$((i+1)); [ $i -ge 300 ] && exit 1; [ $i -ge 3 ] && sleep 0.01; done; rm -rf {dir}"
)
_REPORT_CAP = 8 << 20
SETUP_FAILED = 125
SETUP_MARKER = "edit-fidelity: could not write the run's files"
CONTAINER_MIN_MB = 4096
COMPILE_MIN_S = 30.0  # CPU budget of a compile step at least, as at the local levels
CPUS = 1.0  # each container's CPU quota (host_config's nano_cpus)
# The in-container `timeout` fires this long after the host's own ceiling: the host samples the
# program's scheduler figures at the ceiling, before anything is killed.
KILL_MARGIN_S = 2.0


def host_config(limits: Limits, cpus: float = CPUS) -> dict[str, Any]:
    """Keyword arguments for `api.create_host_config` (pure, so it is testable without an engine)."""
    return {
        "auto_remove": True,
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {
            WORK: f"rw,exec,nosuid,nodev,size={limits.work_mb}m,mode=1777",
            "/tmp": f"rw,nosuid,nodev,size={limits.tmp_mb}m,mode=1777",
        },
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "pids_limit": limits.nproc,
        # A backstop for the whole slot; each run's own limit is its `ulimit -v`, which may be set
        # per run above the pool's default (CanItEdit's torch programs run with 4 GiB).
        "mem_limit": f"{max(limits.memory_mb, CONTAINER_MIN_MB) + 256}m",
        "memswap_limit": f"{max(limits.memory_mb, CONTAINER_MIN_MB) + 256}m",
        "nano_cpus": int(cpus * 1e9),
        "ulimits": [
            {"Name": "core", "Soft": 0, "Hard": 0},
            {"Name": "nofile", "Soft": limits.open_files, "Hard": limits.open_files},
            {"Name": "fsize", "Soft": limits.file_size_mb << 20, "Hard": limits.file_size_mb << 20},
        ],
        "init": True,
    }


def owner_id() -> str:
    """This process, as stamped on its containers: host, pid and start time (pids are reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _owner_gone(owner: str) -> bool:
    host, _, rest = owner.partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's containers on a shared engine: not ours to judge
    return _start_time(int(pid)) != started


def reap_stale(client: Any) -> int:
    """Remove sandbox containers whose owning process is gone (a killed run's); returns how many."""
    removed = 0
    for box in client.containers.list(all=True, filters={"label": LABEL}):
        if _owner_gone(box.labels.get(OWNER_LABEL, "")):
            try:
                box.remove(force=True)
                removed += 1
            except Exception:  # noqa: BLE001 - auto_remove may have won the race
                pass
    return removed


def exec_command(
    cmd: list[str],
    run_dir: str,
    cpu_s: float,
    as_mb: int,
    limits: Limits,
    *,
    setup: bool = False,
    stdin_file: str | None = None,
) -> list[str]:
    """The shell line run by `exec`: with `setup`, first the run's files from the tar on the exec's
    stdin (one exec fewer per run); then per-run rlimits (RLIMIT_CPU: soft the budget, hard a
    second later) and `timeout -s KILL` (the wall-clock ceiling plus a margin: the host stops the run
    at the ceiling itself) around the command, its stdin a file (like the local levels) or /dev/null."""
    soft, hard = cpu_rlimit(cpu_s)
    kill_s = cpu_s * limits.wall_factor + KILL_MARGIN_S
    ulimits = f"ulimit -t {hard} && ulimit -S -t {soft}"
    if as_mb:
        ulimits += f" && ulimit -v {as_mb * 1024}"
    prefix = ""
    if setup:
        prefix = (
            f"{{ mkdir -m 700 {shlex.quote(run_dir)} && tar -x -o -m -C {WORK} -f - ; }} || "
            f"{{ echo {shlex.quote(SETUP_MARKER)} >&2; exit {SETUP_FAILED}; }}; "
        )
    source = shlex.quote(stdin_file) if stdin_file else "/dev/null"
    inner = (
        f"{prefix}cd {shlex.quote(run_dir)} && {ulimits} && "
        f"exec timeout -s KILL {kill_s:.3f} {shlex.join(cmd)} < {source}"
    )
    return ["/bin/sh", "-c", inner]


def python_for(suite: str | None) -> str:
    return f"{ROOT}/envs/{suite}/bin/python" if suite else BASE_PYTHON


def _tar(files: dict[str, bytes], run_id: str, stdin: bytes | None) -> bytes:
    """The run's files under RUN_ID/, and its stdin as RUN_ID.in next to them."""
    buf = io.BytesIO()
    now = int(time.time())
    members = {f"{run_id}/{name}": data for name, data in files.items()}
    if stdin is not None:
        members[f"{run_id}.in"] = stdin
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, now
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class _NotStarted(Exception):
    """The engine refused the exec before anything ran (e.g. the container is gone)."""


@dataclass
class _Box:
    id: str
    keepalive: Any  # the attach socket whose closing ends the container
    meter: ContainerMeter | None = None


class DockerBackend:
    level: Level = "docker"
    isolated = True

    def __init__(self, slots: int, limits: Limits, image: str | None = None) -> None:
        import docker  # deferred: only needed when an engine answers

        self.client = docker.from_env(timeout=60)
        self.image = image = image or docker_image.image_name()
        self.limits = limits
        self.slots = slots
        self.owner = owner_id()
        labels = docker_image.image_labels(self.client, image) or {}
        self.suites = {s for s in labels.get(docker_image.SUITES_LABEL, "").split(",") if s} | {"base"}
        self._boxes: dict[int, _Box] = {}
        self._lock = threading.Lock()
        reap_stale(self.client)
        # Containers go at interpreter exit even if nobody calls close(); a SIGKILL is the keep-alive's job.
        self._finalizer = weakref.finalize(self, _remove_all, self.client, self._boxes, self._lock)

    @staticmethod
    def available(image: str | None = None) -> str | None:
        """None when an engine answers and `image` is built from this checkout, else why not."""
        try:
            import docker

            client = docker.from_env(timeout=3)
        except Exception as exc:  # noqa: BLE001 - any failure means "no engine here"
            return f"no docker engine answers: {type(exc).__name__}: {str(exc)[:160]}"
        try:
            client.ping()
            return docker_image.unusable_reason(client, image or docker_image.image_name())
        except Exception as exc:  # noqa: BLE001
            return f"no docker engine answers: {type(exc).__name__}: {str(exc)[:160]}"
        finally:
            client.close()

    def close(self) -> None:
        self._finalizer()

    def leftovers(self) -> list[str]:
        """Processes of the program uid still alive in any slot's container (tests use this)."""
        found = []
        with self._lock:
            boxes = list(self._boxes.items())
        for slot, box in boxes:
            top = self.client.api.top(box.id, ps_args="-eo pid,uid,stat,comm")
            for row in top.get("Processes") or []:
                if row[1] == USER.split(":")[0] and not row[2].startswith("Z"):
                    found.append(f"slot {slot}: pid {row[0]} ({row[3]})")
        return found

    # -- containers ------------------------------------------------------------------------------

    def _box(self, slot: int) -> _Box:
        with self._lock:
            box = self._boxes.get(slot)
            if box is None:
                box = self._boxes[slot] = self._start(slot)
            return box

    def _start(self, slot: int) -> _Box:
        api = self.client.api
        cid = api.create_container(
            self.image,
            command=KEEPALIVE,
            user="0:0",
            stdin_open=True,
            detach=False,
            name=f"edit-fidelity-sandbox-{slot}-{uuid.uuid4().hex[:8]}",
            environment={
                "HOME": WORK,
                "LANG": "C.UTF-8",
                "LC_ALL": "C.UTF-8",
                "TMPDIR": "/tmp",
                "OMP_NUM_THREADS": "1",
                "OPENBLAS_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1",
                "MPLBACKEND": "Agg",
                "PATH": "/usr/local/bin:/usr/bin:/bin",
            },
            labels={LABEL: "1", OWNER_LABEL: self.owner},
            host_config=api.create_host_config(**host_config(self.limits)),
        )["Id"]
        keepalive = api.attach_socket(cid, params={"stdin": 1, "stream": 1})
        api.start(cid)
        pid = (api.inspect_container(cid).get("State") or {}).get("Pid") or 0
        return _Box(cid, keepalive, ContainerMeter.find(cid, pid, int(USER.split(":")[0])) if pid > 0 else None)

    def _replace(self, slot: int) -> None:
        """Drop a slot's container (dead, or with processes the sweep could not kill)."""
        with self._lock:
            box = self._boxes.pop(slot, None)
        if box is not None:
            _remove(self.client, box)

    # -- one run ---------------------------------------------------------------------------------

    def execute(self, req: Request, uid: int) -> ExecResult:
        slot = uid  # one container per leased slot
        lang = req.language.name
        if req.suite and req.suite not in self.suites:
            return error_result(
                f"suite {req.suite!r} is not in image {self.image} (it has {', '.join(sorted(self.suites))}): "
                f"run `edit-fidelity sandbox prepare --docker --suite {req.suite}`",
                level="docker",
                isolated=True,
                language=lang,
            )
        if req.coverage and lang != "python":
            return error_result("coverage is only available for Python", level="docker", isolated=True, language=lang)
        run_id = uuid.uuid4().hex[:12]
        run_dir = f"{WORK}/{run_id}"
        box: _Box | None = None
        try:
            for attempt in (0, 1):  # a container found dead is replaced once
                try:
                    box = self._box(slot)
                    return self._run(box, run_dir, req, _tar(req.files, run_id, req.stdin))
                except _NotStarted:
                    self._replace(slot)
                    box = None
                    if attempt:
                        raise
            raise AssertionError("unreachable")
        except Exception as exc:  # noqa: BLE001 - engine errors become error results, never hangs
            return error_result(
                f"docker: {type(exc).__name__}: {str(exc)[:300]}", level="docker", isolated=True, language=lang
            )
        finally:
            if box is not None:
                self._sweep(slot, box, run_dir)

    def _run(self, box: _Box, run_dir: str, req: Request, files: bytes) -> ExecResult:
        python = python_for(req.suite)
        plan = req.language.plan(req.entry, req.limits, python)
        if req.command:
            plan = Plan(run=[python if a == "python" else a for a in req.command], run_as_mb=plan.run_as_mb)
        if req.coverage:
            plan = Plan(
                run=[python, *PYTHON_FLAGS, f"{ROOT}/covdriver.py", COVERAGE_REPORT, req.entry],
                run_as_mb=plan.run_as_mb,
            )
        lang = req.language.name
        stdin_file = f"{run_dir}.in" if req.stdin is not None else None
        if plan.compile:
            compile_s = max(req.limits.timeout_s, COMPILE_MIN_S)
            line = exec_command(plan.compile, run_dir, compile_s, plan.compile_as_mb, req.limits, setup=True)
            out = self._step(box, line, files, compile_s, req.limits)
            self._check_setup(out)
            files = b""
            if out.timed_out or out.cpu_exceeded or out.returncode != 0:
                return self._result(out, lang, "compile", compile_s, req.limits)
        budget = req.limits.timeout_s
        line = exec_command(
            plan.run, run_dir, budget, plan.run_as_mb, req.limits, setup=bool(files), stdin_file=stdin_file
        )
        out = self._step(box, line, files or None, budget, req.limits)
        if files:
            self._check_setup(out)
        result = self._result(out, lang, "run", budget, req.limits)
        if req.coverage and result.status in ("ok", "failed"):
            report = self._exec(box, ["cat", f"{run_dir}/{COVERAGE_REPORT}"], None, 30.0, _REPORT_CAP)
            coverage = parse_coverage(report.stdout) if report.returncode == 0 else None
            result = msgspec.structs.replace(result, coverage=coverage)
        return result

    def _step(self, box: _Box, cmd: list[str], stdin: bytes | None, cpu_s: float, limits: Limits) -> Outcome:
        """One compile or run exec under its CPU budget and wall-clock ceiling; `cpu_s` of the
        outcome is what the container used meanwhile (its cgroup, else the engine's stats)."""
        ceiling = cpu_s * limits.wall_factor
        before = self._cpu_used(box)
        out = self._exec(box, cmd, stdin, ceiling, limits.output_limit, budget=(cpu_s, before))
        if not out.sampled:
            after = self._cpu_used(box) if before is not None else None
            out.cpu_s = max(0.0, after - before) if after is not None and before is not None else 0.0
        # The in-container `timeout` fired (the host missed its own ceiling, e.g. a stalled thread).
        out.timed_out = out.timed_out or (out.returncode == 137 and out.wall_s >= ceiling)
        return out

    @staticmethod
    def _result(out: Outcome, lang: str, phase: Phase, cpu_s: float, limits: Limits) -> ExecResult:
        return to_result(
            out,
            level="docker",
            isolated=True,
            language=lang,
            phase=phase,
            signal_from_code=True,
            cpu_limit_s=cpu_s,
            wall_limit_s=cpu_s * limits.wall_factor,
        )

    def _cpu_used(self, box: _Box) -> float | None:
        """The container's CPU seconds so far: its cgroup file, else the engine's one-shot stats
        (a round trip: used only where the engine is on another machine)."""
        if box.meter is not None:
            return box.meter.usage_s()
        try:
            stats = self.client.api.stats(box.id, stream=False, one_shot=True)
            return int(stats["cpu_stats"]["cpu_usage"]["total_usage"]) / 1e9
        except Exception:  # noqa: BLE001 - no figure is better than a failed run
            return None

    @staticmethod
    def _check_setup(out: Outcome) -> None:
        if out.returncode == SETUP_FAILED and SETUP_MARKER.encode() in out.stderr:
            raise RuntimeError(f"could not write the files: {out.stderr.decode(errors='replace')[-300:]}")

    def _sweep(self, slot: int, box: _Box, run_dir: str) -> None:
        """Kill every process of the program uid in the container (loop until `kill -1` finds none,
        so forks racing the kill are caught too) and remove the run dir. A container where that
        fails, or where the exec cannot even start (pids exhausted), is replaced."""
        try:
            out = self._exec(
                box,
                ["/bin/sh", "-c", SWEEP.format(dir=f"{shlex.quote(run_dir)} {shlex.quote(run_dir)}.in")],
                None,
                15.0,
                1 << 16,
            )
            if out.returncode == 0:
                return
        except Exception:  # noqa: BLE001 - handled by replacing the container
            pass
        self._replace(slot)

    def _exec(
        self,
        box: _Box,
        cmd: list[str],
        stdin: bytes | None,
        hard_timeout: float,
        cap: int,
        budget: tuple[float, float | None] | None = None,
    ) -> Outcome:
        """One exec as the program uid, read through its raw stream with a deadline and an output
        cap; on either, the stream is closed at once (the sweep then kills what still runs). With
        `budget` (CPU seconds, the container's CPU before the exec) and a meter, the container's
        CPU is checked against it while the exec runs and the figures are sampled at the deadline."""
        import docker.errors

        api = self.client.api
        started = time.monotonic()
        try:
            exec_id = api.exec_create(box.id, cmd, user=USER, stdin=stdin is not None, workdir=WORK)["Id"]
        except docker.errors.APIError as exc:
            raise _NotStarted(str(exc)) from exc
        conn = api.exec_start(exec_id, socket=True)
        raw = cast(socket.socket, getattr(conn, "_sock", conn))  # the socket inside docker's SocketIO
        out = Outcome()
        buffers = {1: bytearray(), 2: bytearray()}
        total = 0
        pending = memoryview(stdin or b"")
        pending_header = bytearray()
        frame_left = frame_stream = 0
        raw.setblocking(False)
        sel = selectors.DefaultSelector()
        sel.register(raw, selectors.EVENT_READ | (selectors.EVENT_WRITE if stdin is not None else 0))
        if stdin is not None and not pending:
            raw.shutdown(socket.SHUT_WR)
            sel.modify(raw, selectors.EVENT_READ)
        meter = box.meter if budget is not None else None
        cpu_s, base = budget if budget is not None else (0.0, None)
        inf = float("inf")
        watched = meter is not None and base is not None
        next_check = started + cpu_s / CPUS if watched else inf
        window_at = started + hard_timeout - window_before_ceiling(cpu_s, hard_timeout) if watched else inf
        window: tuple[float, Sample] | None = None
        try:
            while True:
                now = time.monotonic()
                if meter is not None and base is not None:
                    if now >= window_at:
                        window, window_at = (now, sample(meter.pids())), inf
                    if now >= next_check:
                        used = (meter.usage_s() or base) - base
                        if used >= cpu_s:  # `ulimit -t` is per process; this is the whole program
                            out.cpu_exceeded, out.cpu_s, out.sampled = True, used, True
                            break
                        next_check = now + max(MIN_CHECK_S, (cpu_s - used) / CPUS)
                left = started + hard_timeout - now
                if left <= 0:
                    out.timed_out = True
                    if meter is not None and base is not None:
                        got = sample(meter.pids())
                        out.cpu_s = max((meter.usage_s() or base) - base, got.cpu_s)
                        at_ceiling(out, got, now, window)
                    break
                events = sel.select(min(left, next_check - now, window_at - now))
                if any(mask & selectors.EVENT_WRITE for _, mask in events):
                    try:
                        pending = pending[raw.send(pending[: 1 << 16]) :]
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:  # the program closed its stdin
                        pending = memoryview(b"")
                    if not pending:
                        with contextlib.suppress(OSError):
                            raw.shutdown(socket.SHUT_WR)
                        sel.modify(raw, selectors.EVENT_READ)
                if not any(mask & selectors.EVENT_READ for _, mask in events):
                    continue
                try:
                    data = raw.recv(1 << 16)
                except (BlockingIOError, InterruptedError):
                    continue
                if not data:
                    break
                # The engine multiplexes stdout and stderr: 8-byte headers (stream, 0, 0, 0, size).
                view = memoryview(data)
                while view:
                    if frame_left == 0:
                        need = 8 - len(pending_header)
                        pending_header += view[:need]
                        view = view[need:]
                        if len(pending_header) == 8:
                            frame_stream, frame_left = pending_header[0], struct.unpack(">I", pending_header[4:])[0]
                            pending_header.clear()
                        continue
                    piece = view[:frame_left]
                    view, frame_left = view[len(piece) :], frame_left - len(piece)
                    keep = max(0, cap - total)
                    buffers[2 if frame_stream == 2 else 1] += piece[:keep]
                    total += len(piece)
                if total > cap:
                    out.output_exceeded = True
                    break
        finally:
            sel.close()
            conn.close()
            raw.close()
        out.wall_s = time.monotonic() - started
        out.stdout, out.stderr = bytes(buffers[1]), bytes(buffers[2])
        if not (out.timed_out or out.output_exceeded):
            out.returncode = _exit_code(api, exec_id)
        return out


def _exit_code(api: Any, exec_id: str) -> int | None:
    """The exec's exit code; the engine may mark it finished a moment after the stream ends."""
    for _ in range(200):
        info = api.exec_inspect(exec_id)
        if not info.get("Running"):
            return info.get("ExitCode")
        time.sleep(0.005)
    return None


def _remove(client: Any, box: _Box) -> None:
    with contextlib.suppress(Exception):  # best effort
        box.keepalive.close()
    with contextlib.suppress(Exception):  # auto_remove may have removed it already
        client.api.remove_container(box.id, force=True)


def _remove_all(client: Any, boxes: dict[int, _Box], lock: threading.Lock) -> None:
    with lock:
        taken = list(boxes.values())
        boxes.clear()
    for box in taken:
        _remove(client, box)
    client.close()
