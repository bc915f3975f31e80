"""Stored records of a benchmark run (msgspec): the run's config and one record per scored sample."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from server.protocol.commands import ProposalRecord

Outcome = Literal["pass", "fail", "no_code", "backend_error", "server_error", "sandbox_error"]


class Execution(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One run of a program in the sandbox behind a verdict: what it used of its budget. Kept in
    results.jsonl (never in summary.json: these figures move with the machine's load, verdicts do not)."""

    run: str  # what ran: "tests", "coverage", ...
    status: str  # the sandbox status (ok, failed, timeout, memory, output_limit, error)
    cpu_s: float
    wall_s: float
    starved_runs: int = 0  # runs the sandbox did again alone because the program got no CPU

    @classmethod
    def of(cls, run: str, res: Any) -> Execution:
        """From the sandbox's `ExecResult`."""
        return cls(
            run=run,
            status=res.status,
            cpu_s=round(float(res.cpu_s), 3),
            wall_s=round(float(res.wall_s), 3),
            starved_runs=int(getattr(res, "starved_runs", 0) or 0),
        )


class RunConfig(msgspec.Struct, kw_only=True):
    """What a run was asked to do; `RUN_DIR/config.json`. Never holds a key, only its variable's name."""

    suite: str
    backend: str  # the backend spec as given (recorded:PATH, gold, identity, openai)
    samples: int
    limit: int | None = None
    conditions: list[str] = []
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    style: str = "generic"
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    options: dict[str, str] = {}  # --suite-option KEY=VALUE
    necessity_runs: int = 0  # --necessity MAX_RUNS: reference-free excess of passing completions
    serve: dict[str, str] = {}  # --serve-vllm settings (tensor parallel, seed, extra arguments)
    data_dir: str = ""
    # what else decides a verdict, so that `--resume` cannot mix two runs: a digest of the tasks and their
    # tests as loaded, the recorded run's bytes, the sandbox environments' stamps and isolation level
    tasks_digest: str = ""
    backend_digest: str = ""
    sandbox: dict[str, str] = {}
    planned: int = 0  # samples the run asks for (tasks x conditions x samples); 0: unknown
    versions: dict[str, str] = {}
    created: str = ""

    def identity(self) -> dict[str, object]:
        """The fields that must match for `--resume` to continue this run (name -> value)."""
        return {
            "suite": self.suite,
            "backend": self.backend,
            "samples": self.samples,
            "limit": self.limit,
            "conditions": list(self.conditions),
            "base_url": self.base_url,
            "model": self.model,
            "style": self.style,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "options": dict(sorted(self.options.items())),
            "necessity_runs": self.necessity_runs,
            "tasks_digest": self.tasks_digest,
            "backend_digest": self.backend_digest,
            "sandbox": dict(sorted(self.sandbox.items())),
        }


class UnitView(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One change unit of the server's proposal as the sample browser shows it (1-based inclusive lines,
    original side then edited side; an empty range is an insertion point)."""

    lines: tuple[int, int, int, int]
    kinds: list[str]
    flagged: bool = False
    severity: str | None = None  # the flagged unit's diagnostic severity (error | warning | information | hint)
    message: str = ""


_SEVERITY = {1: "error", 2: "warning", 3: "information", 4: "hint"}  # LSP DiagnosticSeverity


def unit_views(proposal: ProposalRecord) -> list[UnitView]:
    """The proposal's change units (its report's `hunks`, `flaggedHunks`, `hunkSeverities`), compactly, then
    each of its `flaggedStatements` (an unrequested statement inside a unit that is not flagged) as a unit of
    its own: its lines of the edited side, an insertion point at its unit's first original line."""
    hunks = proposal.report.hunks if proposal.report is not None else []
    flagged = set(proposal.flagged_hunks)
    sev = proposal.hunk_severities
    out = []
    for i, h in enumerate(hunks):
        s = _SEVERITY.get(sev[i]) if i < len(sev) and i in flagged else None
        out.append(
            UnitView(
                lines=(h.start_line, h.end_line, h.new_start_line, h.new_end_line),
                kinds=list(h.kinds),
                flagged=i in flagged,
                severity=s,
                message=h.message[:300],
            )
        )
    for st in proposal.flagged_statements:
        at = hunks[st.hunk].start_line if 0 <= st.hunk < len(hunks) else 1
        out.append(
            UnitView(
                lines=(at, at - 1, st.start_line, st.end_line),
                kinds=list(st.kinds),
                flagged=True,
                severity=_SEVERITY.get(st.severity),
                message=st.message[:300],
            )
        )
    return out


class ExcessCode(msgspec.Struct, kw_only=True):
    """CanItEdit's scorer's scores (`suites/canitedit/judge.py`): ExcessCode of a passing completion, its
    uncovered lines under coverage.py over its Differ line count against `before`."""

    missing_lines: list[int] | None = None  # compat: every line inside the `coverage report -m` Missing ranges
    missing_statements: list[int] | None = None  # strict: missing statements only
    differ_lines: int | None = None
    excess_code: float | None = None  # compat mode (the published ExcessCode)
    excess_code_strict: float | None = None


# A scorer's typed scores in a record, one Struct per scorer that has its own (the rest: `metrics`). Stored
# flat, their fields as the record's own keys where `scores` stands (`encode_record`), as results.jsonl has
# always had them; a record without scores has those keys null.
Scores = ExcessCode
_SCORE_FIELDS = ExcessCode.__struct_fields__


class SampleRecord(msgspec.Struct, kw_only=True):
    """One (suite, task, condition, backend, sample): the server's proposal, the sandbox verdict, scores."""

    suite: str
    task_id: str
    task: str
    condition: str
    backend: str
    sample: int
    outcome: Outcome
    completion: str | None = None  # the document after applying the proposal's edits
    error: str | None = None  # proposal / sandbox error text (never a key)
    error_kind: str | None = None
    exec_status: str | None = None  # the sandbox status of the plain run
    exit_code: int | None = None
    stderr_tail: str = ""
    reused_verdict: bool = False  # an identical program of this task already ran in this run
    scores: Scores | None = None  # the scorer's typed scores (CanItEdit: ExcessCode of passing completions)
    # fidelity, from the server's report (edit against `before`) and the gold patch
    distance: float | None = None  # normalised no_comments token distance d(M, C)
    distance_tokens: int | None = None
    excess_lev: float | None = None  # d(M, C) - d(G, C), no_comments, normalised
    added_cc: float | None = None  # paper cognitive complexity CC(M) - CC(G)
    cc_delta: float | None = None  # CC(M) - CC(C)
    hunks: int = 0
    flagged_hunks: int = 0  # flagged units at any severity (the proposal's `flaggedHunks`)
    # ... of them at warning severity (error, warning) and at hint severity (information, hint), from the
    # proposal's `hunkSeverities`; None: a record from before the server sent severities
    flagged_warning: int | None = None
    flagged_hint: int | None = None
    # ... at warning severity per unrequested kind they are flagged for (`hunkUnrequested`, a statement's
    # kinds; a unit flagged for two kinds counts under both); None: a record from before the server said
    flagged_warning_kinds: dict[str, int] | None = None
    identical: bool = False
    units: list[UnitView] | None = None  # the change units for the sample browser; None: an older record
    # a recorded run's own verdict, when replaying one
    recorded_pass: bool | None = None
    recorded_missing: list[int] | None = None
    metrics: dict[str, Any] = {}  # suite-specific numbers (the suite's Verdict.metrics)
    # a timing-sensitive task's verdicts, one per run (majority taken); not unanimous: a flaky verdict
    votes: list[bool] | None = None
    server_ms: float = 0.0
    sandbox_ms: float = 0.0
    scoring_ms: float = 0.0
    executions: list[Execution] | None = None  # each sandbox run of the verdict, CPU and wall time

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.task_id, self.condition, self.backend, self.sample)

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def flaky(self) -> bool:
        return bool(self.votes) and len(set(self.votes)) > 1  # type: ignore[arg-type]


def is_error(rec: SampleRecord, input_kinds: frozenset[str] = frozenset()) -> bool:
    """A sample that ended without a verdict on the model: the backend did not answer, the sandbox or the
    judge failed. `input_kinds`: a suite's errorKinds for tasks it reports as unusable input (their own
    rows, as the suite's papers count them), which are not errors of the run."""
    if rec.outcome in ("sandbox_error", "server_error"):
        return True
    return rec.outcome == "backend_error" and rec.error_kind not in input_kinds


_NO_SCORES = msgspec.to_builtins(ExcessCode())


def encode_record(rec: SampleRecord, encoder: msgspec.json.Encoder | None = None) -> bytes:
    """The record as results.jsonl stores it: the scores' fields flat where `scores` stands."""
    stored: dict[str, Any] = {}
    for key, value in msgspec.to_builtins(rec).items():
        if key == "scores":
            stored.update(value if value is not None else _NO_SCORES)
        else:
            stored[key] = value
    return (encoder or _ENCODER).encode(stored)


class RecordDecoder:
    """Reads a stored record (`encode_record`'s flat form, or `scores` as an object)."""

    def __init__(self) -> None:
        self._record = msgspec.json.Decoder(SampleRecord)
        self._scores = msgspec.json.Decoder(ExcessCode)

    def decode(self, line: bytes) -> SampleRecord:
        rec = self._record.decode(line)
        if rec.scores is None:
            scores = self._scores.decode(line)  # the flat fields (a record's other keys are ignored)
            if any(getattr(scores, f) is not None for f in _SCORE_FIELDS):
                rec.scores = scores
        return rec


_ENCODER = msgspec.json.Encoder()
