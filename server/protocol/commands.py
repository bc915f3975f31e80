"""Every command's argument and result, as sent: camelCase keys, constraints in `Meta`.

Arguments are decoded by `server.protocol.decode.convert` (one JSON object each); results are encoded
with `msgspec.to_builtins`. `report` fields hold the fidelity report (`server.protocol.report`, what
`edit-fidelity check --format json` prints).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from server.protocol.names import Command
from server.protocol.report import MAX_INT, Distance, FidelityReport, Range, TextEdit
from server.protocol.settings import Style

MAX_ID = 200
MAX_INSTRUCTION = 20_000
MAX_GOLD = 5_000_000  # a whole buffer
MAX_BASELINE = 20_000_000
MAX_SAMPLES = 64

NonEmpty = Meta(pattern=r"\S")  # the message for a blank string: "must not be empty"
Id = Annotated[str, Meta(pattern=r"\S", max_length=MAX_ID)]
Uri = Annotated[str, NonEmpty, Meta(max_length=1_000_000)]
Version = Annotated[int, Meta(ge=0, le=MAX_INT)]
BackendNames = Annotated[list[str], Meta(min_length=1, extra={"hint": "omit it to use every backend"})]


class Usage(msgspec.Struct, rename="camel", frozen=True, omit_defaults=True):
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None = None  # of the prompt, from the backend's cache (the embedded model; vLLM, OpenAI)


# ---- arguments ---------------------------------------------------------------------------------


class RequestEditArgs(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    uri: Uri
    version: Version
    instruction: Annotated[str, NonEmpty, Meta(max_length=MAX_INSTRUCTION)]
    range: Range | None = None
    backends: BackendNames | None = None
    style: Style | None = None
    n: Annotated[int, Meta(ge=1, le=MAX_SAMPLES)] | None = None  # samples per backend from one request
    answer_language: Annotated[str, NonEmpty, Meta(max_length=64)] | None = None  # a translation of the document
    gold: Annotated[str, Meta(max_length=MAX_GOLD)] | None = None  # benchmark-only: the reference whole buffer


class CompareBackendsArgs(RequestEditArgs, frozen=True, kw_only=True):
    pass


Hunks = Annotated[list[int], Meta(extra={"unique": True})]


class ApplyProposalArgs(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    id: Id
    hunks: Hunks | None = None  # change units to accept; each with its own edits
    rest: Literal["keep", "reject"] | None = None  # what becomes of the others (default: keep them pending)


class BaselineText(msgspec.Struct, frozen=True):
    text: Annotated[str, Meta(max_length=MAX_BASELINE)]


Baseline = Annotated[
    Literal["snapshot", "git"] | BaselineText, Meta(extra={"expect": '"snapshot", "git" or {"text": ...}'})
]


class CheckChangeArgs(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    uri: Uri
    baseline: Baseline
    version: Version | None = None


class IdArgs(msgspec.Struct, frozen=True, kw_only=True):
    """rejectProposal, analyzeNecessity."""

    id: Id


class UriArgs(msgspec.Struct, frozen=True, kw_only=True):
    """dismiss, takeSnapshot."""

    uri: Uri


class RevertHunksArgs(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    uri: Uri
    version: Version | None = None
    hunks: Hunks | None = None  # default: the flagged units


class SelectProposalArgs(msgspec.Struct, frozen=True, kw_only=True):
    uri: Uri
    id: Id


class LocateBugArgs(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    uri: Uri
    version: Version
    range: Range | None = None
    backends: BackendNames | None = None


class NoArgs(msgspec.Struct, frozen=True):
    """listBackends, serverStats."""


# ---- results -----------------------------------------------------------------------------------


class FlaggedStatement(msgspec.Struct, rename="camel", frozen=True):
    """A new statement nobody asked for inside a unit that is not flagged itself (the unit holds a requested
    change too): an extra `break`, a value computed and never read. In a proposal, judged on the instruction
    (`server.fidelity.judge.statements`); in `analyzeNecessity`'s record, one the tests pass without that the
    instruction asks for neither by kind nor by name (`server.fidelity.judge.parts`)."""

    hunk: int  # the unit it sits in
    start_line: int  # 1-based inclusive lines of the proposal's edited text
    end_line: int
    kinds: list[str]
    severity: int  # LSP DiagnosticSeverity
    message: str


class ProposalRecord(msgspec.Struct, rename="camel"):
    id: str
    backend: str
    status: str  # ok | error
    edits: list[TextEdit]  # every unit's edits, in unit order
    report: FidelityReport | None
    latency_ms: float
    uri: str = ""
    version: int = 0
    style: str = ""
    error: str | None = None
    error_kind: str | None = None
    flagged_hunks: list[int] = []
    hunk_messages: list[str] = []
    hunk_severities: list[int] = []  # per hunk, the LSP severity its diagnostic has (1 error .. 4 hint)
    flagged_statements: list[FlaggedStatement] = []  # unrequested statements inside units not flagged
    hunk_unrequested: list[list[str]] = []  # per hunk, the unrequested kinds it is flagged for ([]: not flagged)
    usage: Usage | None = None
    attempts: int = 0
    truncated: bool = False
    sample: int = 0
    label: str = ""  # how the editor names it: the backend, and "sample i of n" when it gave several
    heavy: bool = False  # its no_comments distance exceeds thresholds.distanceWarning


class RequestEditResult(msgspec.Struct, rename="camel"):
    proposals: list[ProposalRecord]
    warnings: list[str] = []


class ApplyResult(msgspec.Struct, rename="camel"):
    applied: bool
    reason: str | None = None  # one of names.APPLY_REASONS
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
    heavy: bool = False  # distance exceeds thresholds.distanceWarning
    flagged_statements: int = 0  # unrequested statements inside units not flagged (`ProposalRecord.flaggedStatements`)


class CompareResult(msgspec.Struct, rename="camel"):
    rows: list[CompareRow]
    warnings: list[str] = []


class Window(msgspec.Struct, rename="camel", frozen=True):
    start_line: int
    end_line: int
    baseline_end_line: int


class CheckChangeResult(msgspec.Struct, rename="camel"):
    report: FidelityReport
    baseline: str
    flagged_hunks: list[int] = []
    hunk_messages: list[str] = []
    hunk_severities: list[int] = []
    version: int | None = None
    window: Window | None = None  # the lines measured, above thresholds.largeFileLines (else null)


class RejectResult(msgspec.Struct, rename="camel", omit_defaults=True):
    rejected: bool
    reason: str | None = None  # "unknown" when there is no such proposal (omitted otherwise)


class DismissResult(msgspec.Struct):
    dismissed: bool


class SelectResult(msgspec.Struct):
    active: str


class SnapshotResult(msgspec.Struct):
    version: int


class BackendDescription(msgspec.Struct, rename="camel"):
    """What may be shown of a backend: never a key, only the variable's name."""

    name: str
    base_url: str
    model: str
    api_key_env: str | None
    style: str | None
    temperature: float
    top_p: float | None
    max_tokens: int
    timeout_s: float
    max_concurrency: int


class ListBackendsResult(msgspec.Struct, rename="camel"):
    backends: list[BackendDescription]
    default_style: str
    problems: list[str]


class ServerStats(msgspec.Struct, rename="camel"):
    documents: int  # open
    proposals: int  # held (pending or not)
    released: int  # ids of proposals released on didClose, remembered to refuse them
    caches: dict[str, dict[str, int]]  # per analysis cache: entries, bytes (estimated), max_bytes, owners, ...
    rss_bytes: int | None
    # debug counters (observationsScheduled, observationsMeasured, actionEntriesBuilt, backgroundTasks):
    # what the server did, for tests to assert facts instead of timings
    counters: dict[str, int] = {}


class RunRecord(msgspec.Struct, rename="camel", frozen=True):
    hunks: list[int]  # the hunks kept in this run
    passed: bool | None  # None: the sandbox could not run it
    status: str  # the sandbox's status: ok | failed | timeout | memory | output_limit | error
    wall_s: float


class UnneededFlag(msgspec.Struct, rename="camel", frozen=True):
    """A unit the tests pass without that the instruction asks for neither by kind nor by name
    (`server.fidelity.judge.test_evidence`): unrequested on the tests' evidence."""

    hunk: int
    kinds: list[str]
    severity: int  # LSP DiagnosticSeverity, as the `severity` settings give the kinds
    message: str


class NecessityRecord(msgspec.Struct, rename="camel", frozen=True):
    """analyzeNecessity's result."""

    id: str
    # minimal | budget | full_fails | unresolved | no_hunks (server.fidelity.judge.ddmin), or
    # command_failed: the test command could not start (a module or program missing), whatever the hunks
    status: str
    message: str
    hunks: int
    needed: list[int]
    unnecessary: list[int]
    runs: int
    max_runs: int
    cache_hits: int
    one_minimal: bool
    distance: dict[str, Distance] | None  # d(proposal, original) per variant
    d_min: dict[str, Distance] | None  # d(minimal passing sub-edit, original)
    excess_ref_free: dict[str, float] | None  # distance - d_min (normalised)
    probes: list[RunRecord]
    test_command: list[str]
    isolation: str
    environment: str | None  # the sandbox environment the runs used
    requirements: list[str]  # what the server's own environment holds ([] for a configured one)
    files: int  # workspace files copied into each run
    elapsed_ms: float
    # the unnecessary units nothing in the instruction asks for (the proposal's own flags left out)
    unrequested: list[UnneededFlag] = []
    # the second stage: new statements inside the needed units that the tests pass without
    parts: int = 0  # statements searched
    part_runs: int = 0  # test runs of that search (within max_runs)
    unrequested_parts: list[FlaggedStatement] = []


class BugAnswer(msgspec.Struct, rename="camel", kw_only=True):
    backend: str
    status: str  # ok | unparseable | error
    line: int | None = None  # 1-based document line, as answered
    bug_type: str | None = None  # lower-cased, as answered
    known_type: bool = False  # one of the seven BICS bug types
    raw: str | None = None  # the answer as received (None when the backend failed)
    problem: str | None = None  # why an answer is unparseable
    in_range: bool = False  # the line is one the model was shown: it has a diagnostic
    error: str | None = None
    error_kind: str | None = None
    latency_ms: float = 0.0
    usage: Usage | None = None
    attempts: int = 0


class LocateBugResult(msgspec.Struct, rename="camel", kw_only=True):
    answers: list[BugAnswer]
    uri: str
    version: int
    first_line: int  # the numbered lines the model was shown (1-based, inclusive)
    last_line: int
    warnings: list[str] = []


# command name -> (argument type, result type): what the generator writes and the handlers decode.

COMMANDS: dict[Command, tuple[type, type]] = {
    Command.REQUEST_EDIT: (RequestEditArgs, RequestEditResult),
    Command.APPLY_PROPOSAL: (ApplyProposalArgs, ApplyResult),
    Command.COMPARE_BACKENDS: (CompareBackendsArgs, CompareResult),
    Command.CHECK_CHANGE: (CheckChangeArgs, CheckChangeResult),
    Command.REJECT_PROPOSAL: (IdArgs, RejectResult),
    Command.REVERT_HUNKS: (RevertHunksArgs, ApplyResult),
    Command.SELECT_PROPOSAL: (SelectProposalArgs, SelectResult),
    Command.DISMISS: (UriArgs, DismissResult),
    Command.TAKE_SNAPSHOT: (UriArgs, SnapshotResult),
    Command.LIST_BACKENDS: (NoArgs, ListBackendsResult),
    Command.SERVER_STATS: (NoArgs, ServerStats),
    Command.ANALYZE_NECESSITY: (IdArgs, NecessityRecord),
    Command.LOCATE_BUG: (LocateBugArgs, LocateBugResult),
}
