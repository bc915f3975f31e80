"""The local isolation levels (bwrap, unshare, none): one work dir per run, one uid per slot."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
import warnings
from pathlib import Path

import msgspec

from sandbox import config, envs, wrappers
from sandbox.languages import PYTHON_FLAGS, Plan
from sandbox.process import Outcome, execute, sweep_uid
from sandbox.request import (
    COVERAGE_REPORT,
    Request,
    error_result,
    parse_coverage,
    to_result,
)
from sandbox.result import ExecResult, FileCoverage, Level, Phase
from sandbox.uids import UidLease

SAFE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TMPDIR": "/tmp",
    # One thread per BLAS/OpenMP pool: threads count against RLIMIT_NPROC and the pool is sized
    # to the cores already.
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
}
_REPORT_CAP = 8 << 20
COMPILE_MIN_S = 30.0  # CPU budget of a compile step at least (javac on a cold JVM)


class LocalBackend:
    def __init__(self, level: Level) -> None:
        if level == "docker":
            raise ValueError("use DockerBackend for the docker level")
        self.level: Level = level
        self.isolated = level != "none"
        self.work_root = config.ensure_dir(config.home() / "work", 0o711)
        self._mounted: dict[int, int] = {}  # uid -> size of its work tmpfs, once set
        self._netns: dict[int, str | None] = {}  # uid -> its network namespace file
        self._mount_lock = threading.Lock()

    def probe(self) -> str | None:
        """None when this level works here, else why not (runs `true` through the full wrapper)."""
        tool = {"bwrap": wrappers.BWRAP, "unshare": wrappers.UNSHARE}.get(self.level)
        if tool and not os.access(tool, os.X_OK):
            return f"{tool} not found"
        envs.ensure_lib()
        if envs.reaper_path() is None:  # the util-linux fallback must be complete
            for tool in (wrappers.PRLIMIT, *([wrappers.SETPRIV] if os.geteuid() == 0 else [])):
                if not os.access(tool, os.X_OK):
                    return f"{tool} not found and no C compiler to build the reaper helper"
        from sandbox.config import Limits
        from sandbox.languages import LANGUAGES

        req = Request(
            files={"probe.py": b"print('ok')\n"},
            entry="probe.py",
            language=LANGUAGES["python"],
            limits=Limits(timeout_s=10),
        )
        lease = UidLease(1)
        try:
            res = self.execute(req, lease.uids[0])
        finally:
            lease.release()
        if res.status == "ok" and res.stdout.strip() == "ok":
            return None
        return f"probe failed: {res.status} {res.error or res.stderr.strip()[-300:]}"

    # -- one run ---------------------------------------------------------------------------------

    def execute(self, req: Request, uid: int) -> ExecResult:
        """Run `req` as `uid`, which the caller leased (see uids.py) and uses for nothing else now."""
        work = Path(tempfile.mkdtemp(prefix="run-", dir=self._slot_dir(uid, req.limits.work_mb)))
        try:
            return self._execute(req, uid, work)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            return error_result(
                f"{type(exc).__name__}: {exc}", level=self.level, isolated=self.isolated, language=req.language.name
            )
        finally:
            if self.level == "none":
                # No pid namespace: the reaper kills and reaps the uid's survivors; this sweep
                # covers a reaper the program killed. Under bwrap/unshare the kernel tears the whole
                # namespace down before the wrapper we waited for could exit.
                sweep_uid(uid)
            shutil.rmtree(work, ignore_errors=True)

    def _slot_dir(self, uid: int, size_mb: int) -> Path:
        """The slot's own size-capped tmpfs for its work dirs (as root): a program writing many
        files can fill its slot, never the host's disk nor another slot."""
        path = self.work_root / f"u{uid}"
        with self._mount_lock:
            if self._mounted.get(uid) == size_mb:
                return path
            config.ensure_dir(path, 0o711)
            if os.geteuid() == 0:
                options = f"size={size_mb}m,mode=0711,nosuid,nodev"
                cmd = (
                    ["mount", "-o", f"remount,{options}", str(path)]
                    if os.path.ismount(path)
                    else ["mount", "-t", "tmpfs", "-o", options, "edit-fidelity-sandbox", str(path)]
                )
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode != 0:  # e.g. no CAP_SYS_ADMIN in a container: plain dir, RLIMIT_FSIZE only
                    warnings.warn(f"sandbox: no tmpfs for {path}: {done.stderr.strip()}", RuntimeWarning, stacklevel=3)
            self._mounted[uid] = size_mb
        return path

    def _execute(self, req: Request, uid: int, work: Path) -> ExecResult:
        for name, data in req.files.items():
            target = work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if os.geteuid() == 0:
            for path in (work, *work.rglob("*")):
                os.lchown(path, uid, uid)
        os.chmod(work, 0o700)
        inside = Path(wrappers.INSIDE_WORK) if self.level == "bwrap" else work
        python = envs.python_for(req.suite)
        plan = req.language.plan(req.entry, req.limits, python)
        envs.ensure_lib()
        ro_paths = [envs.lib_dir()]
        if req.suite:
            ro_paths.append(envs.env_dir(req.suite))
        if req.command:
            cmd = [python if a == "python" else a for a in req.command]
            plan = Plan(run=cmd, compile=None, run_as_mb=plan.run_as_mb)
        if req.coverage:
            if req.language.name != "python":
                raise ValueError("coverage is only available for Python")
            driver = envs.lib_dir() / "covdriver.py"
            plan = Plan(run=[python, *PYTHON_FLAGS, str(driver), COVERAGE_REPORT, req.entry], run_as_mb=plan.run_as_mb)
        env = dict(SAFE_ENV, HOME=str(inside))
        if plan.compile:
            compile_s = max(req.limits.timeout_s, COMPILE_MIN_S)
            out = self._spawn(plan.compile, plan.compile_as_mb, compile_s, req, uid, work, ro_paths, env, stdin=None)
            if isinstance(out, ExecResult):
                return out
            if out.timed_out or out.cpu_exceeded or out.returncode != 0 or out.signal is not None:
                return self._result(out, req, "compile", compile_s)
        out = self._spawn(
            plan.run, plan.run_as_mb, req.limits.timeout_s, req, uid, work, ro_paths, env, stdin=req.stdin
        )
        if isinstance(out, ExecResult):
            return out
        result = self._result(out, req, "run", req.limits.timeout_s)
        # Coverage of a failing run is reported too (CanItEdit measures passing programs with a second,
        # traced run whose own verdict it ignores: tracing can break timing assertions).
        if req.coverage and result.status in ("ok", "failed"):
            result = msgspec.structs.replace(result, coverage=_read_coverage(work / COVERAGE_REPORT))
        return result

    def _result(self, out: Outcome, req: Request, phase: Phase, cpu_s: float) -> ExecResult:
        return to_result(
            out,
            level=self.level,
            isolated=self.isolated,
            language=req.language.name,
            phase=phase,
            signal_from_code=self.level in ("bwrap", "unshare"),
            cpu_limit_s=cpu_s,
            wall_limit_s=cpu_s * req.limits.wall_factor,
        )

    def _spawn(
        self,
        cmd: list[str],
        as_mb: int,
        cpu_s: float,
        req: Request,
        uid: int,
        work: Path,
        ro_paths: list[Path],
        env: dict[str, str],
        stdin: bytes | None,
    ) -> Outcome | ExecResult:
        reaper = envs.reaper_path()
        netns = self._slot_netns(uid) if reaper and self.level == "bwrap" else None
        opened: list[int] = []  # every fd made here, closed in `finally`
        try:
            usage_r, usage_w = os.pipe() if reaper else (-1, -1)
            opened += [usage_r, usage_w] if reaper else []
            netns_fd = os.open(netns, os.O_RDONLY | os.O_CLOEXEC) if netns else None
            opened += [netns_fd] if netns_fd is not None else []
            if reaper:
                tail = wrappers.reaper_args(str(reaper), usage_w, req.limits, as_mb, cpu_s, uid, netns_fd) + cmd
            else:
                tail = wrappers.limit_args(req.limits, as_mb, cpu_s) + wrappers.drop_privileges(uid) + cmd
            status_r = status_w = -1
            if self.level == "bwrap":
                status_r, status_w = os.pipe()
                opened += [status_r, status_w]
                argv = wrappers.bwrap(work, ro_paths, req.limits, status_w, own_netns=netns_fd is None) + tail
            elif self.level == "unshare":
                argv = wrappers.unshare(work, ro_paths, req.limits, config.home() / "fstab") + tail
            else:
                argv = tail
            if stdin is not None:
                # A regular file as stdin: no writer thread, and the program can seek it.
                with tempfile.TemporaryFile(dir=self.work_root) as stdin_file:
                    stdin_file.write(stdin)
                    stdin_file.seek(0)
                    opened.append(os.dup(stdin_file.fileno()))
            passed = tuple(fd for fd in (usage_w, status_w, netns_fd) if fd is not None and fd >= 0)
            out = execute(
                argv,
                cwd=str(work),
                env=env,
                stdin=opened[-1] if stdin is not None else subprocess.DEVNULL,
                cpu_limit_s=cpu_s,
                wall_limit_s=cpu_s * req.limits.wall_factor,
                output_limit=req.limits.output_limit,
                pass_fds=passed,
                uid=uid,
            )
            setup_error = _apply_usage(out, _read_ready(usage_r)) if reaper else None
            if setup_error:
                return error_result(
                    f"sandbox set-up failed: {setup_error}",
                    level=self.level,
                    isolated=self.isolated,
                    language=req.language.name,
                )
            # bwrap writes {"child-pid": N} once the sandbox is built; without it, setup failed.
            stopped = out.timed_out or out.cpu_exceeded
            if status_r >= 0 and b"child-pid" not in _read_ready(status_r) and not stopped:
                return error_result(
                    f"bwrap could not build the sandbox: {out.stderr.decode(errors='replace')[-500:]}",
                    level=self.level,
                    isolated=self.isolated,
                    language=req.language.name,
                )
            return out
        finally:
            for fd in opened:
                with contextlib.suppress(OSError):  # already closed by _read_ready
                    os.close(fd)

    def _slot_netns(self, uid: int) -> str | None:
        """The slot's own empty network namespace (loopback only), made once and joined by the
        reaper at each run: a fresh namespace per run costs ~3 ms of this machine's ~10 ms budget.
        None (so bwrap unshares a new one) when it cannot be made, e.g. without root."""
        if os.geteuid() != 0:
            return None
        path = str(config.home() / "netns" / f"u{uid}")
        with self._mount_lock:
            if uid in self._netns:
                return self._netns[uid]
            if not os.path.ismount(path):
                config.ensure_dir(Path(path).parent, 0o700)
                Path(path).touch()
                made = subprocess.run([wrappers.UNSHARE, f"--net={path}", "true"], capture_output=True)
                if made.returncode != 0:
                    self._netns[uid] = None
                    return None
                # Loopback up, as bwrap would do in its own namespace.
                subprocess.run(["nsenter", f"--net={path}", "ip", "link", "set", "lo", "up"], capture_output=True)
            self._netns[uid] = path
            return path


def _read_ready(fd: int) -> bytes:
    """What was written to a report pipe so far. Non-blocking: a stray process that grabbed the
    write end (via /proc) must not be able to hang the host."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:
        return b""


def _apply_usage(out: Outcome, report: bytes) -> str | None:
    """Take CPU time and peak RSS from the reaper's report (see reaper.c); returns the reaper's own
    set-up error when it sent one instead. The report is the program's own figure (no wrapper in
    it); after a kill it rarely comes, and the /proc sample may have seen more (orphans)."""
    if report.startswith(b"error "):
        return report[6:].decode(errors="replace").strip()
    try:
        utime, stime, maxrss = report.split()
        cpu = float(utime) + float(stime)
        out.cpu_s, out.peak_kb = max(out.cpu_s, cpu) if out.sampled else cpu, int(maxrss)
    except ValueError:
        pass
    return None


def _read_coverage(path: Path) -> dict[str, FileCoverage] | None:
    # The report is written by the sandboxed uid: never follow a link it may have planted.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return parse_coverage(fh.read(_REPORT_CAP))
