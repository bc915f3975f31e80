"""Where the sandbox keeps its environments and work dirs, and which uids it runs programs as.

Everything the sandboxed uid must read (interpreters, suite venvs, the coverage copy) lives under
`home()`, never under /root (mode 0700, unreadable by the unprivileged uid).
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

HOME_ENV = "EDIT_FIDELITY_SANDBOX_HOME"
UID_BASE_ENV = "EDIT_FIDELITY_SANDBOX_UID_BASE"
# High, unnamed uids: one per worker slot so RLIMIT_NPROC (counted per real uid) is per slot and a
# fork bomb in one slot cannot starve another, nor anything on the host.
DEFAULT_UID_BASE = 64000
BASE_PYTHON_ENV = "EDIT_FIDELITY_SANDBOX_PYTHON"
DEFAULT_BASE_PYTHON = "/usr/bin/python3.11"


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """Per-execution limits. `timeout_s` is CPU time: the budget of all the program's processes
    together (RLIMIT_CPU per process, rounded up to whole seconds, plus the sum sampled from /proc),
    so a verdict does not depend on how loaded the machine is. A wall-clock ceiling of
    `wall_factor` x `timeout_s` stops programs that sleep or block; one stopped there while it was
    runnable but got no CPU is starved, not slow, and is run again alone (see sandbox/README.md).
    `memory_mb` bounds the address space (RLIMIT_AS) for Python and C++; runtimes that reserve
    large virtual ranges up front (node, the JVM) get their heap capped by their own flag and a
    larger address-space ceiling instead."""

    timeout_s: float = 15.0
    wall_factor: float = 5.0
    memory_mb: int = 1024
    output_limit: int = 1 << 20  # bytes of stdout + stderr kept before the run is stopped
    nproc: int = 64  # threads count as processes for RLIMIT_NPROC (the JVM needs a few dozen)
    file_size_mb: int = 64
    open_files: int = 256
    tmp_mb: int = 64
    work_mb: int = 512  # the slot's work tmpfs (all files a run writes in its work dir)

    @property
    def wall_limit_s(self) -> float:
        return self.timeout_s * self.wall_factor


def home() -> Path:
    explicit = os.environ.get(HOME_ENV)
    if explicit:
        return Path(explicit)
    if os.geteuid() == 0:
        return Path("/var/lib/edit-fidelity/sandbox")
    return Path.home() / ".cache" / "edit-fidelity" / "sandbox"


def uid_base() -> int:
    return int(os.environ.get(UID_BASE_ENV, DEFAULT_UID_BASE))


def base_python() -> str:
    return os.environ.get(BASE_PYTHON_ENV, DEFAULT_BASE_PYTHON)


def ensure_dir(path: Path, mode: int = 0o755) -> Path:
    """Create `path` with `mode`, making every parent traversable by the sandbox uid."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, mode)
    return path
