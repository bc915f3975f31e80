"""A validated execution request and the helpers every backend shares to turn outcomes into results."""

from __future__ import annotations

import signal as _signal
from dataclasses import dataclass
from pathlib import PurePosixPath

import msgspec

from sandbox.config import Limits
from sandbox.languages import Language
from sandbox.process import Outcome
from sandbox.result import ExecResult, FileCoverage, Level, Phase, Status

# Messages runtimes print when an allocation fails under the address-space limit.
OOM_MARKERS = (
    b"MemoryError",
    b"std::bad_alloc",
    b"JavaScript heap out of memory",
    b"Fatal process out of memory",
    b"java.lang.OutOfMemoryError",
    b"Cannot allocate memory",
)
COVERAGE_REPORT = ".edit-fidelity-coverage.json"
# At the wall-clock ceiling with CPU budget left, a run is starved (not judged, run again alone)
# when its processes spent at least this share of the window before the ceiling waiting in a run
# queue: it was asking for CPU and not getting it when it was stopped (sandbox/README.md, "Time limits").
STARVED_WAIT_SHARE = 0.25
STARVED = "starved of CPU at the wall-clock ceiling: "


@dataclass(frozen=True)
class Request:
    files: dict[str, bytes]
    entry: str
    language: Language
    limits: Limits
    command: list[str] | None = None
    stdin: bytes | None = None
    coverage: bool = False
    suite: str | None = None


def check_path(name: str) -> str:
    """File names are relative paths inside the work dir; anything escaping it is refused."""
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or name.startswith("."):
        raise ValueError(f"file name {name!r} must be a relative path inside the work dir")
    return str(path)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def is_starved(out: Outcome, cpu_limit_s: float, wall_limit_s: float) -> bool:
    """Whether a run stopped at the wall-clock ceiling was starved of CPU rather than asleep or
    blocked. Never with the budget used up (a timeout, whatever the load). Else by the run-queue
    wait in the window before the ceiling; without the sample that opens it (a host thread that
    overslept), by the wait of the whole run; without the kernel's run-queue accounting, always
    (the two cannot be told apart)."""
    if out.cpu_s >= cpu_limit_s:
        return False
    if out.window_wait_s is not None and out.window_s > 0:
        return out.window_wait_s >= STARVED_WAIT_SHARE * out.window_s
    if out.wait_s is not None:
        return out.wait_s >= STARVED_WAIT_SHARE * min(out.wall_s, wall_limit_s)
    return True


def _figures(out: Outcome, cpu_limit_s: float) -> str:
    wait = "unknown" if out.wait_s is None else f"{out.wait_s:.2f} s"
    if out.window_wait_s is not None:
        wait += f" ({out.window_wait_s:.2f} s of the last {out.window_s:.2f} s)"
    return f"cpu {out.cpu_s:.2f} s of {cpu_limit_s:g} s, wall {out.wall_s:.2f} s, run-queue wait {wait}"


def to_result(
    out: Outcome,
    *,
    level: Level,
    isolated: bool,
    language: str,
    phase: Phase,
    signal_from_code: bool,
    cpu_limit_s: float,
    wall_limit_s: float,
) -> ExecResult:
    code, sig = out.returncode, out.signal
    # bwrap and unshare report a child killed by signal N as exit code 128 + N.
    if signal_from_code and code is not None and code > 128 and (code - 128) in _signal.valid_signals():
        sig = code - 128
    status: Status
    starved = out.timed_out and is_starved(out, cpu_limit_s, wall_limit_s)
    if starved:
        status = "error"  # Sandbox.run runs it again alone; its status if that one starves too
    elif out.timed_out or out.cpu_exceeded:
        status = "timeout"
    elif out.output_exceeded or sig == _signal.SIGXFSZ:
        status = "output_limit"
    elif code == 0 and sig is None:
        status = "ok"
    elif sig in (_signal.SIGXCPU,) or (sig == _signal.SIGKILL and out.cpu_s >= cpu_limit_s):
        status = "timeout"  # RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL at the hard one
    elif any(m in out.stderr for m in OOM_MARKERS):
        status = "memory"
    else:
        status = "failed"
    return ExecResult(
        status=status,
        exit_code=code,
        signal=sig,
        stdout=_decode(out.stdout),
        stderr=_decode(out.stderr),
        truncated=out.output_exceeded,
        wall_s=round(out.wall_s, 4),
        cpu_s=round(out.cpu_s, 4),
        cpu_limit_s=cpu_limit_s,
        wall_limit_s=wall_limit_s,
        wait_s=None if out.wait_s is None else round(out.wait_s, 4),
        starved_runs=int(starved),
        peak_memory_mb=round(out.peak_kb / 1024, 1),
        isolation=level,
        isolated=isolated,
        language=language,
        phase=phase,
        error=STARVED + _figures(out, cpu_limit_s) if starved else "",
    )


def parse_coverage(raw: bytes) -> dict[str, FileCoverage] | None:
    """The driver's report (written by the sandboxed uid, so validated, never trusted)."""
    try:
        return msgspec.json.decode(raw, type=dict[str, FileCoverage])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def error_result(
    message: str, *, level: Level, isolated: bool, language: str = "python", phase: Phase = "run"
) -> ExecResult:
    return ExecResult(status="error", error=message, isolation=level, isolated=isolated, language=language, phase=phase)
