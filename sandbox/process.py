"""Spawn one wrapped command and watch it: capped output, wall-clock deadline, rusage, clean-up.

No `preexec_fn` (unsafe in the threaded language server): the session is made by
`start_new_session`, limits and the uid switch are argv wrappers (see wrappers.py).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import IO

CHUNK = 1 << 16
DRAIN_GRACE_S = 0.5  # after the program exits, how long stray writers may keep its pipes open
STOP_GRACE_S = 5.0  # after killing the program (or its namespace init), how long the wrapper gets to
# kill and reap the rest and exit: ~10 ms per process here, and a slot holds at most `nproc` of them


@dataclass
class Outcome:
    returncode: int | None = None  # exit code, or None when killed by a signal
    signal: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    output_exceeded: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_kb: int = 0


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(c) for c in fh.read().split()]
    except (OSError, ValueError):
        return []


def _stop(proc: subprocess.Popen[bytes], pidfd: int) -> None:
    """Stop a run that is still going, leaving no zombie for the host's init to collect.

    The wrapper's children are the pid-namespace inits (bwrap's inner process, or the program under
    `unshare --fork`): killing one makes the kernel kill and reap the whole namespace, and the
    wrapper, still alive, reaps it and exits. Killing the wrapper first would orphan the namespace
    to the host's init, which may reap slowly; the slot's uid would keep zombies counted against
    its process limit. Whatever is left after a short wait gets the group kill."""
    for child in _children(proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    sel = selectors.DefaultSelector()
    sel.register(pidfd, selectors.EVENT_READ)
    exited = bool(sel.select(STOP_GRACE_S))
    sel.close()
    if not exited:
        _kill_group(proc.pid)


def uid_processes(uid: int) -> list[int]:
    """Live pids owned by `uid` (the owner of /proc/PID is the process's effective uid). Zombies
    are left out: they run nothing, and only their parent or the host's init can remove them."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid and not _zombie(name):
                    found.append(int(name))
            except OSError:
                continue
    return found


def _zombie(pid: str) -> bool:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return fh.read().rsplit(b")", 1)[1].split()[0] == b"Z"


def sweep_uid(uid: int, deadline_s: float = 2.0) -> int:
    """Kill every process of the slot's uid until none is left alive; returns how many were found.

    The slot uid belongs to nobody else, so this cannot touch host processes. It is the last line
    of defence (the `none` level has no pid namespace to tear down)."""
    if os.geteuid() != 0:
        return 0
    found = 0
    end = time.monotonic() + deadline_s
    while True:
        pids = uid_processes(uid)
        if not pids or time.monotonic() > end:
            return found
        found += len(pids)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)


def execute(
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    stdin: IO[bytes] | int,
    timeout_s: float,
    output_limit: int,
    pass_fds: tuple[int, ...] = (),
) -> Outcome:
    out = Outcome()
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        pass_fds=pass_fds,
        close_fds=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    buffers: dict[int, bytearray] = {out_fd: bytearray(), err_fd: bytearray()}
    total = 0
    pidfd = os.pidfd_open(proc.pid)
    exited_at: float | None = None
    sel = selectors.DefaultSelector()
    try:
        for pipe in (proc.stdout, proc.stderr):
            os.set_blocking(pipe.fileno(), False)
            sel.register(pipe.fileno(), selectors.EVENT_READ)
        sel.register(pidfd, selectors.EVENT_READ)
        deadline = start + timeout_s
        open_pipes = 2
        while open_pipes:
            now = time.monotonic()
            limit_at = deadline if exited_at is None else min(deadline, exited_at + DRAIN_GRACE_S)
            if now >= limit_at:
                out.timed_out = exited_at is None
                break
            for key, _ in sel.select(limit_at - now):
                fd = key.fd
                if fd == pidfd:
                    exited_at = time.monotonic()
                    sel.unregister(pidfd)
                    continue
                try:
                    data = os.read(fd, CHUNK)
                except BlockingIOError:
                    continue
                if not data:
                    sel.unregister(fd)
                    open_pipes -= 1
                    continue
                keep = max(0, output_limit - total)
                buffers[fd] += data[:keep]
                total += len(data)
                if total > output_limit:
                    out.output_exceeded = True
                    open_pipes = 0
                    break
    finally:
        sel.close()
        if exited_at is None:
            _stop(proc, pidfd)
        os.close(pidfd)
        # Then the group, always: under `none` a program's own children may still hold the pipes
        # (the caller also sweeps the slot's uid, which catches those that left the group).
        _kill_group(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)  # keeps Popen from waiting again
        proc.stdout.close()
        proc.stderr.close()
    out.wall_s = time.monotonic() - start
    out.cpu_s = usage.ru_utime + usage.ru_stime
    out.peak_kb = usage.ru_maxrss
    if os.WIFSIGNALED(status):
        out.signal = os.WTERMSIG(status)
    else:
        out.returncode = os.WEXITSTATUS(status)
    out.stdout = bytes(buffers[out_fd])
    out.stderr = bytes(buffers[err_fd])
    return out
