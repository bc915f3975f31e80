"""Records the server sends as command results: the wire contract's Structs (server.protocol), and
the fidelity report as replies carry it."""

from __future__ import annotations

from typing import Any, overload

from server.fidelity.report import FidelityReport
from server.protocol.commands import (
    ApplyResult,
    CheckChangeResult,
    CompareResult,
    CompareRow,
    FlaggedStatement,
    ProposalRecord,
    RequestEditResult,
    ServerStats,
    Usage,
)
from server.protocol.encode import camel_keys

__all__ = [
    "ApplyResult",
    "CheckChangeResult",
    "CompareResult",
    "CompareRow",
    "FlaggedStatement",
    "ProposalRecord",
    "RequestEditResult",
    "ServerStats",
    "Usage",
    "wire_report",
]


@overload
def wire_report(report: dict[str, Any]) -> dict[str, Any]: ...
@overload
def wire_report(report: None) -> None: ...
def wire_report(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """The report (`check --format json`'s document) as it goes on the wire: every key camelCase."""
    return None if report is None else camel_keys(report, FidelityReport)
