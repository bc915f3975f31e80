"""Records the server sends as command results: the wire contract's Structs (server.protocol)."""

from __future__ import annotations

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
]
