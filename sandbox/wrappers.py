"""Argv wrappers that put a command inside each local isolation level.

Every level ends in the same tail: the `reaper` helper (reaper.c) sets the rlimits as root (so any
value is allowed), drops to the slot's unprivileged uid with no capabilities and no_new_privs, and
runs the program; without a C compiler, `prlimit` + `setpriv` do the same minus the rusage report. As root,
RLIMIT_NPROC is not enforced and a user namespace would map the program back to uid 0 outside, so
the uid switch must be a real one; hence no `--unshare-user` when running as root.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import math
import os
import resource
import shlex
from pathlib import Path

from sandbox.config import Limits

BWRAP = "/usr/bin/bwrap"
UNSHARE = "/usr/bin/unshare"
SETPRIV = "/usr/bin/setpriv"
PRLIMIT = "/usr/bin/prlimit"

INSIDE_WORK = "/work"
UNLIMITED = 2**64 - 1  # RLIM_INFINITY as the reaper parses it
# /etc entries programs need: alternatives (java, javac links), the JDK's conf, the loader cache,
# user and time databases. Nothing with secrets (shadow, ssh keys) is ever bound.
ETC_ENTRIES = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "passwd",
    "group",
    "nsswitch.conf",
    "java-*-openjdk",
    "ssl",
)
# Top-level directories the `unshare` level hides behind empty tmpfs (it cannot build a fresh root).
HIDDEN_BY_UNSHARE = ("/root", "/home", "/srv", "/mnt", "/media", "/opt", "/work", "/run/user")
PRIVATE_TMP = ("/tmp", "/var/tmp", "/dev/shm")


def cpu_rlimit(cpu_s: float) -> tuple[int, int]:
    """RLIMIT_CPU for a budget of `cpu_s`: the kernel counts whole seconds, so the soft limit is the
    budget rounded up (SIGXCPU, which ends a program that does not catch it: an unambiguous
    "CPU budget spent", even where no CPU figure comes back) and the hard one a second later
    (SIGKILL, for a program that catches SIGXCPU)."""
    soft = max(1, math.ceil(cpu_s - 1e-9))
    return soft, soft + 1


def rlimits(limits: Limits, as_mb: int, cpu_s: float) -> dict[int, tuple[int, int]]:
    """The rlimits of one step as (soft, hard), keyed by RLIMIT_* number."""
    mb = 1 << 20

    def both(value: int) -> tuple[int, int]:
        return value, value

    return {
        resource.RLIMIT_AS: both(as_mb * mb if as_mb else UNLIMITED),
        resource.RLIMIT_CPU: cpu_rlimit(cpu_s),
        resource.RLIMIT_NPROC: both(limits.nproc),
        resource.RLIMIT_FSIZE: both(limits.file_size_mb * mb),
        resource.RLIMIT_NOFILE: both(limits.open_files),
        resource.RLIMIT_CORE: both(0),
    }


def reaper_args(
    reaper: str, usage_fd: int, limits: Limits, as_mb: int, cpu_s: float, uid: int, netns_fd: int | None = None
) -> list[str]:
    """The C helper does limits, the uid drop and the rusage report in one exec (see reaper.c)."""
    args = [reaper, str(usage_fd)]
    if netns_fd is not None:
        args.append(f"--netns-fd={netns_fd}")
    args += [f"--rlimit={res}:{soft}:{hard}" for res, (soft, hard) in rlimits(limits, as_mb, cpu_s).items()]
    if os.geteuid() == 0:
        args += [f"--uid={uid}", "--sweep"]  # the uid is leased to this run alone
    return [*args, "--"]


def limit_args(limits: Limits, as_mb: int, cpu_s: float) -> list[str]:
    """Fallback when the reaper could not be built: util-linux prlimit."""
    mb = 1 << 20
    soft, hard = cpu_rlimit(cpu_s)
    return [
        PRLIMIT,
        f"--as={as_mb * mb}" if as_mb else "--as=unlimited",
        f"--cpu={soft}:{hard}",
        f"--nproc={limits.nproc}",
        f"--fsize={limits.file_size_mb * mb}",
        f"--nofile={limits.open_files}",
        "--core=0",
        "--",
    ]


def drop_privileges(uid: int) -> list[str]:
    """Fallback when the reaper could not be built: util-linux setpriv."""
    if os.geteuid() != 0:
        return []
    return [
        SETPRIV,
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--bounding-set=-all",
        "--inh-caps=-all",
        "--no-new-privs",
        "--",
    ]


def _parents(paths: list[str]) -> list[str]:
    """`--dir` for every ancestor of the bound paths, created 0755: bwrap would make them 0700 and
    the unprivileged uid could not traverse /etc or /var to reach what is bound below."""
    args: list[str] = []
    seen: set[str] = set()
    for path in paths:
        parts = Path(path).parts[1:-1]
        for i in range(len(parts)):
            parent = "/" + "/".join(parts[: i + 1])
            if parent not in seen:
                seen.add(parent)
                args += ["--perms", "0755", "--dir", parent]
    return args


@functools.lru_cache(maxsize=64)
def _root_fs_args(extra: tuple[str, ...]) -> tuple[str, ...]:
    """The read-only part of the sandbox's filesystem (cached: it only depends on the host layout)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    etc = [p for pattern in ETC_ENTRIES for p in sorted(glob.glob(f"/etc/{pattern}"))]
    args += _parents(etc + list(extra))
    for bound in (*etc, *extra):
        args += ["--ro-bind", bound, bound]
    return tuple(args)


def bwrap(work: Path, ro_paths: list[Path], limits: Limits, status_fd: int, own_netns: bool = True) -> list[str]:
    """`own_netns=False` only when the reaper joins the slot's empty network namespace itself."""
    args = [
        BWRAP,
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
        "--json-status-fd",
        str(status_fd),
    ]
    if own_netns:
        args.append("--unshare-net")
    if os.geteuid() != 0:  # unprivileged callers get uid separation from a user namespace
        args += ["--unshare-user", "--uid", "65534", "--gid", "65534"]
    args += _root_fs_args(tuple(str(p) for p in ro_paths))
    tmp_size = str(limits.tmp_mb << 20)  # /dev/shm too: multiprocessing's semaphores live there
    args += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "01777",
        "--size",
        tmp_size,
        "--tmpfs",
        "/tmp",
        "--perms",
        "01777",
        "--size",
        tmp_size,
        "--tmpfs",
        "/dev/shm",
    ]
    args += ["--bind", str(work), INSIDE_WORK, "--chdir", INSIDE_WORK, "--"]
    return args


def unshare(work: Path, keep_visible: list[Path], limits: Limits, fstab_dir: Path) -> list[str]:
    """util-linux namespaces plus one `mount --all` run as root inside them: private /tmp, hidden
    homes; the program then sees the real root read-only by permissions only (its uid owns nothing
    outside its work dir). One mount exec from a generated fstab instead of one per mount."""
    fstab = _unshare_fstab(tuple(str(p.resolve()) for p in (work.parent, *keep_visible)), limits.tmp_mb, fstab_dir)
    script = f'mount --all --fstab {shlex.quote(str(fstab))} && cd "$0" && exec "$@"'
    args = [
        UNSHARE,
        "--pid",
        "--fork",
        "--kill-child",
        "--mount-proc",
        "--net",
        "--ipc",
        "--uts",
        "--mount",
        "--propagation",
        "private",
    ]
    if os.geteuid() != 0:
        args += ["--user", "--map-root-user"]
    return [*args, "--", "/bin/sh", "-c", script, str(work)]


@functools.lru_cache(maxsize=64)
def _unshare_fstab(keep: tuple[str, ...], tmp_mb: int, fstab_dir: Path) -> Path:
    hide = [d for d in HIDDEN_BY_UNSHARE if os.path.isdir(d) and not any(k.startswith(d + "/") or k == d for k in keep)]
    lines = [f"tmpfs {t} tmpfs mode=1777,size={tmp_mb}m,nosuid,nodev 0 0" for t in PRIVATE_TMP if os.path.isdir(t)]
    lines += [f"tmpfs {d} tmpfs mode=0755,size=4k,ro 0 0" for d in hide]
    text = "\n".join(lines) + "\n"
    path = fstab_dir / f"fstab-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    if not path.exists():
        fstab_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, path)
    return path
