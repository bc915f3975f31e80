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
    ProposalRecord,
    RequestEditResult,
    ServerStats,
    Usage,
)
from server.protocol.encode import with_camel_keys

__all__ = [
    "ApplyResult",
    "CheckChangeResult",
    "CompareResult",
    "CompareRow",
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
    """The report (`check --format json`'s document) with a camelCase twin beside each snake_case key:
    camelCase on the wire, and the keys scripts read stay."""
    return None if report is None else with_camel_keys(report, FidelityReport)
