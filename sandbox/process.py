"""Spawn one wrapped command and watch it: capped output, CPU budget, wall-clock ceiling, clean-up.

The time limit is CPU time: RLIMIT_CPU per process (set by the wrappers) and, from here, the CPU of
all the program's processes together (sampled from /proc once it could have reached the budget).
The wall-clock ceiling only catches programs that sleep or block; at the ceiling the kernel's
scheduler accounting (/proc/PID/task/TID/schedstat: run-queue wait) is sampled before the kill, so
the caller can tell a program that was starved of CPU from one that was not asking for it.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO

CHUNK = 1 << 16
DRAIN_GRACE_S = 0.5  # after the program exits, how long stray writers may keep its pipes open
STOP_GRACE_S = 5.0  # after killing the program (or its namespace init), how long the wrapper gets to
# kill and reap the rest and exit: ~10 ms per process here, and a slot holds at most `nproc` of them


CLK_TCK = os.sysconf("SC_CLK_TCK")
MIN_CHECK_S = 0.25  # the shortest gap between two CPU samples of one run (~1-3 ms each)


@dataclass
class Outcome:
    returncode: int | None = None  # exit code, or None when killed by a signal
    signal: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False  # stopped at the wall-clock ceiling
    cpu_exceeded: bool = False  # stopped because all its processes together used up the CPU budget
    output_exceeded: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    wait_s: float | None = None  # run-queue wait sampled at a limit; None: not sampled, or not kept
    sampled: bool = False  # cpu_s/wait_s come from a /proc sample taken before the kill
    # At the ceiling: the run-queue wait in the last `window_s` before it (None: not known).
    window_s: float = 0.0
    window_wait_s: float | None = None
    peak_kb: int = 0


@dataclass
class Sample:
    """CPU figures of a set of processes, read from /proc while they are still there."""

    cpu_s: float = 0.0  # user + system time of each, plus what its exited, reaped children used
    wait_s: float | None = None  # time their live threads spent runnable but waiting for a CPU
    processes: int = 0


Probe = Callable[[], Sample]


def window_before_ceiling(cpu_limit_s: float, wall_limit_s: float) -> float:
    """How long before the ceiling the starved rule looks: the last `cpu_limit_s` seconds (the last
    fifth of the ceiling at the default factor), at most half of it."""
    return min(cpu_limit_s, wall_limit_s / 2)


def at_ceiling(out: Outcome, got: Sample, now: float, before: tuple[float, Sample] | None) -> None:
    """Record the sample taken at the ceiling, and the wait in the window since `before`."""
    out.wait_s, out.sampled = got.wait_s, True
    if before is not None and got.wait_s is not None and before[1].wait_s is not None:
        out.window_s, out.window_wait_s = now - before[0], max(0.0, got.wait_s - before[1].wait_s)


def sample(pids: Iterable[int]) -> Sample:
    """Sum the CPU time (/proc/PID/stat utime, stime, cutime, cstime: the last two hold the reaped
    children, which are gone from /proc) and the run-queue wait (schedstat's second field, per live
    thread) of `pids`. Zombies count: their times stay readable until reaped. `wait_s` is None
    where the kernel keeps no scheduler accounting (no schedstat file, or every slice count 0)."""
    found = Sample()
    wait, kept = 0.0, False
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            tids = os.listdir(f"/proc/{pid}/task")
        except (OSError, IndexError):
            continue
        found.cpu_s += sum(int(f) for f in fields[11:15]) / CLK_TCK
        found.processes += 1
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as fh:
                    _, delay, slices = fh.read().split()
            except (OSError, ValueError):
                continue
            kept = kept or int(slices) > 0
            wait += int(delay) / 1e9
    found.wait_s = wait if kept else None
    return found


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (via each thread's children list)."""
    found, todo = [], [pid]
    while todo:
        top = todo.pop()
        found.append(top)
        try:
            tids = os.listdir(f"/proc/{top}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{top}/task/{tid}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
            except (OSError, ValueError):
                continue
    return found


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


def uid_processes(uid: int, zombies: bool = False) -> list[int]:
    """Live pids owned by `uid` (the owner of /proc/PID is the process's effective uid). Zombies
    are left out unless asked for: they run nothing, and only their parent or the host's init can
    remove them (a CPU sample wants them: their times are not yet in any parent's)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid and (zombies or not _zombie(name)):
                    found.append(int(name))
            except OSError:
                continue
    return found


def _zombie(pid: str) -> bool:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return fh.read().rsplit(b")", 1)[1].split()[0] == b"Z"


class ContainerMeter:
    """A docker container's CPU figures as this host sees them: only where the engine runs on this machine
    and in this pid namespace (the container's init, by the pid the engine gives, is in a cgroup
    named after the container). The cgroup's CPU usage covers every process a run had, reaped or
    not; the program uid's processes in that cgroup give the run-queue wait (schedstat)."""

    def __init__(self, cid: str, cgroup: str, usage: str, uid: int) -> None:
        self.cid, self.cgroup, self.usage, self.uid = cid, cgroup, usage, uid

    @classmethod
    def find(cls, cid: str, pid: int, uid: int) -> ContainerMeter | None:
        try:
            with open(f"/proc/{pid}/cgroup") as fh:
                cgroup = fh.read()
            with open("/proc/self/mountinfo") as fh:
                mounts = fh.read().splitlines()
        except OSError:
            return None
        if cid not in cgroup:
            return None  # another machine's or another pid namespace's process
        paths = {}
        for line in cgroup.splitlines():
            _, controllers, path = line.split(":", 2)
            paths[controllers] = path
        for mount in mounts:
            head, _, tail = mount.partition(" - ")
            fstype, _, options = (tail.split() + ["", "", ""])[:3]
            point = head.split()[4]
            if fstype == "cgroup" and "cpuacct" in options.split(","):
                path = next((p for c, p in paths.items() if "cpuacct" in c.split(",")), "")
                usage = f"{point}{path}/cpuacct.usage"
            elif fstype == "cgroup2":
                usage = f"{point}{paths.get('', '')}/cpu.stat"
            else:
                continue
            if cid in usage and os.path.exists(usage):
                return cls(cid, cgroup, usage, uid)
        return None

    def usage_s(self) -> float | None:
        try:
            with open(self.usage) as fh:
                text = fh.read()
        except OSError:
            return None
        if self.usage.endswith("cpuacct.usage"):
            return int(text) / 1e9
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        return None

    def pids(self) -> list[int]:
        """Processes of the program uid in this container (zombies too: their times still count)."""
        found = []
        for pid in uid_processes(self.uid, zombies=True):
            try:
                with open(f"/proc/{pid}/cgroup") as fh:
                    if fh.read() == self.cgroup:
                        found.append(pid)
            except OSError:
                continue
        return found


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


def _sampler(uid: int | None, pid: int) -> Probe:
    """What to sample: every process of the slot's uid (as root: it belongs to this run alone, and
    no process of it can escape a pid namespace's tear-down), else the wrapper's process tree."""
    if uid is not None and os.geteuid() == 0:
        return lambda: sample(uid_processes(uid, zombies=True))
    return lambda: sample(descendants(pid))


def execute(
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    stdin: IO[bytes] | int,
    cpu_limit_s: float,
    wall_limit_s: float,
    output_limit: int,
    pass_fds: tuple[int, ...] = (),
    uid: int | None = None,
) -> Outcome:
    """Run `argv` until it ends, its output passes `output_limit`, its processes together use
    `cpu_limit_s` of CPU, or `wall_limit_s` passes (sampled just before the kill)."""
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
    probe = _sampler(uid, proc.pid)
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    buffers: dict[int, bytearray] = {out_fd: bytearray(), err_fd: bytearray()}
    total = 0
    pidfd = os.pidfd_open(proc.pid)
    exited_at: float | None = None
    sel = selectors.DefaultSelector()
    # No sample is needed before the processes could have used the budget on every CPU we may use.
    cpus = len(os.sched_getaffinity(0)) or 1
    next_check = start + cpu_limit_s / cpus
    # One sample a window before the ceiling, so the starved rule can see what the run was doing
    # when the ceiling came (see request.is_starved).
    window_at = start + wall_limit_s - window_before_ceiling(cpu_limit_s, wall_limit_s)
    before: tuple[float, Sample] | None = None

    try:
        for pipe in (proc.stdout, proc.stderr):
            os.set_blocking(pipe.fileno(), False)
            sel.register(pipe.fileno(), selectors.EVENT_READ)
        sel.register(pidfd, selectors.EVENT_READ)
        deadline = start + wall_limit_s
        open_pipes = 2
        while open_pipes:
            now = time.monotonic()
            if exited_at is None and now >= window_at:
                before, window_at = (now, probe()), float("inf")
            if exited_at is None and now >= next_check:
                got = probe()
                if got.cpu_s >= cpu_limit_s:  # RLIMIT_CPU is per process; this is the whole program
                    out.cpu_exceeded, out.cpu_s, out.wait_s, out.sampled = True, got.cpu_s, got.wait_s, True
                    break
                next_check = now + max(MIN_CHECK_S, (cpu_limit_s - got.cpu_s) / cpus)
            limit_at = deadline if exited_at is None else min(deadline, exited_at + DRAIN_GRACE_S)
            if now >= limit_at:
                if exited_at is None:
                    out.timed_out = True
                    got = probe()
                    out.cpu_s = got.cpu_s
                    at_ceiling(out, got, now, before)
                break
            wake_at = limit_at if exited_at is not None else min(limit_at, next_check, window_at)
            for key, _ in sel.select(max(0.0, wake_at - now)):
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
    # After a kill, whichever saw more: the sample, or what the wrapper's waits collected.
    out.cpu_s = max(out.cpu_s, usage.ru_utime + usage.ru_stime)
    out.peak_kb = usage.ru_maxrss
    if os.WIFSIGNALED(status):
        out.signal = os.WTERMSIG(status)
    else:
        out.returncode = os.WEXITSTATUS(status)
    out.stdout = bytes(buffers[out_fd])
    out.stderr = bytes(buffers[err_fd])
    return out
