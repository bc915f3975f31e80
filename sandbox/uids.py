"""Leasing unprivileged uids to worker slots, across processes.

Each slot runs programs as its own uid, so RLIMIT_NPROC and the final kill-everything-of-this-uid
sweep are per slot; uids with an account (a passwd entry) are never used. Several processes (the
server, a benchmark, two test runs) may use the sandbox at once: a uid is leased by holding an flock
on its lock file, so no two slots anywhere on the machine share one. The kernel drops the lock when
the holder dies, so a crash leaks nothing.
"""

from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import threading

from sandbox import config

SPAN = 1000  # uids uid_base() .. uid_base() + SPAN - 1 are the sandbox's
MIN_UID = 10000


def _has_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def _clear_stale_runs(uid: int) -> None:
    """Remove run dirs a process left in this slot when it died holding the lease (kill -9).

    The lease is exclusive, so whatever is in the slot now belongs to no live run; left there, such
    dirs would fill the slot's size-capped tmpfs over time.
    """
    slot = config.home() / "work" / f"u{uid}"
    for leftover in slot.glob("run-*"):
        shutil.rmtree(leftover, ignore_errors=True)


class UidLease:
    def __init__(self, count: int) -> None:
        self._fds: dict[int, int] = {}
        self._lock = threading.Lock()
        locks = config.ensure_dir(config.home() / "uids", 0o700)
        base = config.uid_base()
        if base < MIN_UID:
            raise ValueError(f"sandbox uid base {base} is below {MIN_UID}: those uids belong to real users")
        for uid in range(base, base + SPAN):
            if len(self._fds) == count:
                break
            if _has_account(uid):  # a real account: its processes must never be swept
                continue
            fd = os.open(locks / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self._fds[uid] = fd
            _clear_stale_runs(uid)
        if len(self._fds) < count:
            self.release()
            raise RuntimeError(f"no free sandbox uid left in {base}..{base + SPAN - 1}")

    @property
    def uids(self) -> list[int]:
        return sorted(self._fds)

    def release(self) -> None:
        with self._lock:
            for fd in self._fds.values():
                os.close(fd)
            self._fds.clear()
