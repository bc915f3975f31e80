"""Running untrusted generated code and hidden tests with real isolation.

    from sandbox import run
    result = run({"main.py": "print(1)"}, timeout_s=5)
    result.status, result.stdout, result.isolation

See `sandbox.core.Sandbox` for pools, async use and the isolation levels.
"""

from sandbox.config import Limits
from sandbox.core import (
    IsolationUnavailable,
    Sandbox,
    arun,
    default_sandbox,
    detect,
    run,
)
from sandbox.result import LEVELS, ExecResult, FileCoverage, Level, Status

__all__ = [
    "LEVELS",
    "ExecResult",
    "FileCoverage",
    "IsolationUnavailable",
    "Level",
    "Limits",
    "Sandbox",
    "Status",
    "arun",
    "default_sandbox",
    "detect",
    "run",
]
