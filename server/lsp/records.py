"""Records the server sends as command results (camelCase on the wire)."""

from __future__ import annotations

from typing import Any

import msgspec


class Usage(msgspec.Struct, rename="camel", frozen=True):
    prompt_tokens: int | None
    completion_tokens: int | None


class ProposalRecord(msgspec.Struct, rename="camel"):
    id: str
    backend: str
    status: str  # ok | error
    edits: list[dict[str, Any]]
    report: dict[str, Any] | None
    latency_ms: float
    uri: str = ""
    version: int = 0
    style: str = ""
    error: str | None = None
    error_kind: str | None = None
    flagged_hunks: list[int] = []
    hunk_messages: list[str] = []
    hunk_severities: list[int] = []  # per hunk, the LSP severity its diagnostic has (1 error .. 4 hint)
    usage: Usage | None = None
    attempts: int = 0
    truncated: bool = False
    sample: int = 0
    label: str = ""  # how the editor names it: the backend, and "sample i of n" when it gave several


class RequestEditResult(msgspec.Struct, rename="camel"):
    proposals: list[ProposalRecord]
    warnings: list[str] = []


class ApplyResult(msgspec.Struct, rename="camel"):
    applied: bool
    reason: str | None = None  # stale | unknown | error_proposal | closed | rejected | unsupported | nothing
    message: str | None = None
    hunks: list[int] = []
    version: int | None = None


class CompareRow(msgspec.Struct, rename="camel"):
    backend: str
    status: str
    latency_ms: float
    tokens: int | None  # prompt + completion tokens used, when the backend reports them
    distance: float | None  # normalised token distance, no_comments variant (the paper's)
    distance_tokens: int | None
    excess: float | None  # only when a gold edit is known
    complexity_delta: float | None  # cognitive complexity (paper mode) after - before
    flagged_hunks: int
    hunks: int
    well_formed: bool  # the answer had code and it parses
    syntax_error: str | None
    lazy_placeholders: int
    proposal_id: str
    error: str | None = None
    tests: dict[str, Any] | None = None


class CompareResult(msgspec.Struct, rename="camel"):
    rows: list[CompareRow]
    warnings: list[str] = []


class CheckChangeResult(msgspec.Struct, rename="camel"):
    report: dict[str, Any]
    baseline: str
    flagged_hunks: list[int] = []
    hunk_messages: list[str] = []
    hunk_severities: list[int] = []
    version: int | None = None


class ServerStats(msgspec.Struct, rename="camel"):
    documents: int  # open
    proposals: int  # held (pending or not)
    released: int  # ids of proposals released on didClose, remembered to refuse them
    caches: dict[str, dict[str, int]]  # per analysis cache: entries, bytes (estimated), max_bytes, owners, ...
    rss_bytes: int | None
