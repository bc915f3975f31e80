"""Fixtures for the sandbox tests: one pool per isolation level, and leftover-process checks."""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Callable, Iterator

import pytest

from sandbox import Sandbox
from sandbox.local import LocalBackend
from sandbox.process import uid_processes

WORKERS = 2
WRAPPERS = {"bwrap", "unshare", "prlimit", "setpriv", "reaper", "sh"}


def find_leftovers(box: Sandbox) -> list[str]:
    """Processes a run may have left: anything of the box's uids, or a wrapper this process started."""
    found = [f"uid {uid}: pid {pid}" for uid in box.uids for pid in uid_processes(uid)]
    me = str(os.getpid())
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as fh:
                    head, tail = fh.read().rsplit(")", 1)
            except OSError:
                continue
            state, ppid = tail.split()[:2]
            comm = head.split("(", 1)[1]
            if ppid == me and state != "Z" and comm in WRAPPERS:
                found.append(f"child {name} ({comm})")
    return found


def _box(level: str) -> Sandbox:
    reason = LocalBackend(level).probe()  # type: ignore[arg-type]
    if reason is not None:
        if level == "bwrap" and os.environ.get("CI") and shutil.which("apt-get"):
            pytest.fail(f"bwrap must work in CI (scripts/setup installs it): {reason}")
        pytest.skip(f"isolation level {level} does not work here: {reason}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return Sandbox(level, workers=WORKERS)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def bwrap_box() -> Iterator[Sandbox]:
    box = _box("bwrap")
    yield box
    box.close()


@pytest.fixture(scope="session", params=["unshare", "none"])
def any_box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """The weaker levels (bwrap has its own fixture and the full language matrix)."""
    box = _box(request.param)
    yield box
    box.close()


@pytest.fixture(scope="session")
def leftovers() -> Callable[[Sandbox], list[str]]:
    """`leftovers(box)`: the processes a run left behind (must be empty after every run)."""
    return find_leftovers
