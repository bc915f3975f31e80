"""Records returned by the sandbox: the outcome of one execution, serialisable with msgspec."""

from __future__ import annotations

from typing import Literal

import msgspec

Status = Literal["ok", "failed", "timeout", "memory", "output_limit", "error"]
Level = Literal["docker", "bwrap", "unshare", "none"]
Phase = Literal["compile", "run"]

# Levels from strongest to weakest; `none` is never isolation, only limits.
LEVELS: tuple[Level, ...] = ("docker", "bwrap", "unshare", "none")


class FileCoverage(msgspec.Struct, frozen=True):
    """Line coverage of one file, as coverage.py's analysis reports it (1-based line numbers)."""

    executed: list[int]
    missing: list[int]
    excluded: list[int] = []


class ExecResult(msgspec.Struct, frozen=True, kw_only=True):
    """What happened to one program: the status first, the evidence after it.

    `status` is `ok` only for exit code 0 within every limit. `failed` is the program's own failure
    (non-zero exit, a signal, a compile error with `phase="compile"`); `timeout` means it used up
    its CPU budget (`cpu_limit_s`), or slept or blocked until the wall-clock ceiling
    (`wall_limit_s`); `error` means the sandbox could not run or judge it (bad request, missing
    tool, or starved of CPU twice: `starved_runs == 2`), so it says nothing about the program.
    `cpu_s` and `wall_s` are always filled for a run that started, including one killed at a limit.
    """

    status: Status
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    cpu_limit_s: float = 0.0  # the CPU budget of the phase reported (`phase`)
    wall_limit_s: float = 0.0  # its wall-clock ceiling
    wait_s: float | None = None  # run-queue wait sampled at the ceiling (None: not stopped there, or not kept)
    starved_runs: int = 0  # runs of this request stopped at the ceiling while starved of CPU
    peak_memory_mb: float = 0.0
    isolation: Level = "none"
    isolated: bool = False
    language: str = "python"
    phase: Phase = "run"
    error: str = ""
    coverage: dict[str, FileCoverage] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> bytes:
        return msgspec.json.encode(self)
