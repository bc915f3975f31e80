"""What the replay engine needs from a suite, in parts, as inspect_ai composes a task of a dataset, a
solver and a scorer: a `Suite` is a frozen value of its `Dataset` (the tasks), `Solver` (how the server is
asked, and what a replayed backend answers), `Scorer` (the sandbox's verdict and the numbers of a
completion) and `Reporter` (summary.json, text, comparisons, HTML), with its conditions, its sandbox
environment and what it optionally offers (a download, a report of published results).

A suite package builds its value in a factory registered in `benchmark.suites` (`make(options)`: the
`--suite-option`s chosen, so a configured suite is another value). The engine does the rest for every suite
alike: one `editFidelity.*` request per (task, condition, sample) through the real language server, the
sandbox verdict from `suite.scorer.judge`, one `SampleRecord` appended per sample, resume.

The protocols carry the default behaviour of an edit suite over Python documents with a gold `after`
(CanItEdit is the model): a part subclasses its protocol and overrides what differs. Suite-specific numbers
travel in `Verdict.metrics` / `SampleRecord.metrics` (a flat dict of JSON scalars and lists);
`Reporter.summarise` turns the records of a run into its summary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import msgspec

from benchmark.run import recorded
from benchmark.run.records import Execution, RunConfig, SampleRecord
from server.fidelity import apply_text_edits
from server.protocol.commands import ProposalRecord
from server.protocol.report import FidelityReport

if TYPE_CHECKING:
    from benchmark.run.session import ServerSession


class Task(Protocol):
    """One task of a suite. `before` is the document the server opens ("" for generation tasks);
    `after` is the reference solution: the benchmark-only `gold` field and the `gold` backend's answer."""

    @property
    def task_id(self) -> str: ...  # unique within the suite, stable across runs (the resume key)

    @property
    def name(self) -> str: ...

    @property
    def before(self) -> str: ...

    @property
    def after(self) -> str | None: ...

    def instruction(self, condition: str) -> str: ...


T = TypeVar("T", bound=Task)
T_contra = TypeVar("T_contra", bound=Task, contravariant=True)  # a part that only takes tasks


class Verdict(msgspec.Struct, kw_only=True):
    """The sandbox's judgement of one completion."""

    passed: bool
    exec_status: str  # ok | exit | timeout | memory | killed | error | compile_error | wrong_answer | ...
    exit_code: int | None = None
    stderr_tail: str = ""
    sandbox_ms: float = 0.0  # the programs' own wall time, without queueing
    sandbox_error: str | None = None  # the sandbox itself failed (not the program)
    metrics: dict[str, Any] = {}  # suite-specific numbers, copied to SampleRecord.metrics
    votes: list[bool] | None = None  # set by the engine: the verdicts of repeated runs (timing-sensitive tasks)
    error_kind: str | None = None  # with `sandbox_error`: what failed ("starved": no CPU, twice)
    executions: list[Execution] = []  # the sandbox runs behind it, with their CPU and wall time

    def ran(self, run: str, res: Any) -> None:
        """Note one sandbox run (an `ExecResult`) behind this verdict."""
        self.executions = [*self.executions, Execution.of(run, res)]
        if res.status == "error" and getattr(res, "starved_runs", 0) >= 2:
            self.error_kind = "starved"

    def fill(self, rec: SampleRecord) -> None:
        """Copy the verdict into the record (subclasses add their own fields)."""
        rec.exec_status, rec.exit_code, rec.stderr_tail = self.exec_status, self.exit_code, self.stderr_tail
        rec.executions = list(self.executions) or None
        if self.metrics:
            rec.metrics = {**rec.metrics, **self.metrics}


class Answer(msgspec.Struct, kw_only=True):
    """What the server answered for one sample: its proposal and the completion to judge."""

    proposal: ProposalRecord
    completion: str | None  # the document after applying the proposal's edits, or the raw answer


def own_proposal(
    backend: str, *, status: str = "ok", error: str | None = None, error_kind: str | None = None
) -> ProposalRecord:
    """A proposal the suite makes itself, with no edit and no report: an answer that is not an edit (BICS's
    located bug) or a task that never reaches the server (its error)."""
    return ProposalRecord(
        id="", backend=backend, status=status, edits=[], report=None, latency_ms=0.0, error=error, error_kind=error_kind
    )


class Dataset(Protocol[T]):
    """The suite's tasks."""

    def load(self, data: str | Path | None, limit: int | None) -> Sequence[T]:
        """The tasks from the data directory (`data`, else EDIT_FIDELITY_DATA, else the cache), the first
        `limit`; a `DataError` when the data is missing or damaged."""
        ...

    def task_conditions(self, task: T, conditions: Sequence[str]) -> list[str]:
        """The run's conditions that apply to this task (all, unless a task belongs to one condition)."""
        return list(conditions)


class Solver(Protocol[T_contra]):
    """How a task is asked of the server (`ask`), and what a replayed backend answers: the gold, the
    original, a recorded run. The defaults: `editFidelity.requestEdit` on `before` with the gold `after`."""

    language: str = "python"  # the documents' languageId (a task may override with `.language`)

    async def ask(
        self,
        session: ServerSession,
        task: T_contra,
        condition: str,
        backend: str,
        *,
        name: str,
        style: str | None,
        n: int = 1,
    ) -> Answer | list[Answer]:
        """One request through the server for `n` samples (an Answer each, or one Answer holding the error);
        edit suites send `editFidelity.requestEdit` with the gold."""
        proposals = await session.request_edits(
            task.before,
            task.instruction(condition),
            backend,
            name=name,
            n=n,
            gold=task.after,
            style=style,
            language=self.task_language(task),
            answer_language=self.answer_language(task),
        )
        answers = []
        for proposal in proposals:
            completion = None
            if proposal.status == "ok":
                completion = apply_text_edits(task.before, proposal.edits)
            answers.append(Answer(proposal=proposal, completion=completion))
        return answers

    def task_language(self, task: T_contra) -> str:
        return getattr(task, "language", None) or self.language

    def answer_language(self, task: T_contra) -> str | None:
        """The language the answer is written in when it is not the document's (a translation)."""
        return None

    def gold_answer(self, task: T_contra, condition: str) -> str | None:
        """The model answer that the `gold` backend replays (the full edited document by default)."""
        return task.after

    def identity_answer(self, task: T_contra, condition: str) -> str | None:
        return task.before

    def replay_key(self, task: T_contra, condition: str) -> str:
        """Text that occurs in the prompt the server sends for this task: how a replayed answer is found."""
        return task.before

    def answer_fence(self, task: T_contra, condition: str) -> str | None:
        """The code-fence tag a replayed answer is served in; None: served as it is (not code)."""
        return self.task_language(task)

    def load_recorded(self, path: str | Path) -> Any:
        """A recorded run of this suite (`recorded:PATH`): an object with `get(task_id, condition)` ->
        completions in sample order, `verdict(task_id, condition, sample)` -> bool | None, `samples`. A suite
        whose runs come in a format of its own reads that here and leaves the rest to `recorded.load`."""
        return recorded.load(path)


class EditSolver(Solver[T_contra]):
    """The solver of an edit suite: the protocol's defaults, as a class to make one of."""


class Scorer(Protocol[T_contra]):
    """The verdict on a completion (the sandbox) and the numbers read from it."""

    async def judge(self, box: Any, task: T_contra, condition: str, completion: str) -> Verdict: ...

    async def passes(self, box: Any, task: T_contra, condition: str, text: str) -> bool | None:
        """Whether `text` passes the task's tests (None: the sandbox could not tell); the necessity
        analysis asks this of sub-edits. Scorers with a costlier judge (coverage) override it."""
        v = await self.judge(box, task, condition, text)
        return None if v.sandbox_error is not None and not v.passed else v.passed

    def timing_sensitive(self, task: T_contra) -> bool:
        """Whether the task's tests compare timings, so that a verdict depends on the machine's load: the
        engine then judges it alone, by majority of up to three runs, and records a split vote as flaky."""
        return False

    def report_metrics(self, task: T_contra, report: FidelityReport) -> dict[str, Any]:
        """Numbers the suite reads from the server's report of a proposal (measured against the gold edit
        the request carried), merged into the record's metrics: the suite re-measures nothing."""
        return {}

    def completion_metrics(self, task: T_contra, condition: str, completion: str) -> dict[str, Any]:
        """Numbers of a completion computed from the texts alone (pure, no sandbox) that may depend on the
        condition, merged into the record's metrics; unlike `judge`'s, never shared across conditions."""
        return {}


class SuiteSummary(msgspec.Struct, kw_only=True):
    """A suite's figures of a run (summary.json's `conditions` and `details`, the run's state beside them)."""

    conditions: dict[str, dict[str, Any]]  # per condition: the suite's headline metrics (the tables' columns)
    details: dict[str, Any]  # per condition (or other key): the figures behind them, in the suite's layout


class Reporter(Protocol):
    """A run's records into summary.json, and the suite's own tables, comparisons and HTML sections."""

    def summarise(self, config: RunConfig, records: list[SampleRecord]) -> SuiteSummary:
        """The figures of the records with a verdict (errors are the run's state, counted beside them)."""
        ...

    def render_text(self, summary: dict[str, Any]) -> str | None:
        """A terminal table in the suite's papers' layout; None: the generic table."""
        return None

    def compare(self, summaries: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], str] | None:
        """`bench compare` of several runs of this suite (label -> summary): extra figures across the
        runs (JSON, text), e.g. CodeEditorBench's Win Rate; None: the table alone."""
        return None

    def compare_table(self, summaries: list[dict[str, Any]]) -> str | None:
        """`bench compare`'s table of this suite's runs in the suite's own layout (e.g. CanItEdit's paper
        table); None: one column per summary metric."""
        return None

    def within_run(self, records: list[SampleRecord]) -> tuple[dict[str, Any], str] | None:
        """`bench compare`: figures that compare the conditions of one run (JSON, text); None: none."""
        return None

    def html_sections(self, summary: dict[str, Any], records: list[SampleRecord]) -> str | None:
        """The suite's part of the HTML report (tables, inline SVG plots); None: the generic table."""
        return None


# `bench download SUITE`: fetch the suite's data into the data directory; its path
Download = Callable[[str | Path | None, Callable[[str], None]], Path]
# `bench report --published SUITE DIR RUN_DIR...`: the suite's published results beside our runs, in a format
PublishedReport = Callable[[str | Path, str, Sequence[Path]], str]


@dataclass(frozen=True, kw_only=True)
class Suite(Generic[T]):
    """A suite: its parts, its conditions and its sandbox environment (a value; another configuration is
    another value, made by the suite's factory)."""

    name: str
    conditions: tuple[str, ...]
    dataset: Dataset[T]
    solver: Solver[T]
    scorer: Scorer[T]
    reporter: Reporter
    default_conditions: tuple[str, ...] | None = None  # None: all conditions
    # the sandbox environment (`edit-fidelity sandbox prepare --suite NAME`) the scorer runs programs in, or
    # the environment of each task; None: no environment of its own
    sandbox_env: str | Callable[[T], str] | None = None
    # a prompt style of the server (server/backends/prompts.py) per condition; absent: the backend's own
    styles: Mapping[str, str] = field(default_factory=dict)
    # True when a completion's verdict depends on the condition (e.g. the condition is the language)
    judge_by_condition: bool = False
    # completions are edits of `before` whose units the tests can be asked about (`bench run --necessity`)
    necessity: bool = True
    # proposal errorKinds of tasks the suite reports as unusable input (a row of their own): not run errors
    input_error_kinds: frozenset[str] = frozenset()
    download: Download | None = None
    published_report: PublishedReport | None = None

    def sandbox_envs(self, tasks: Sequence[T]) -> list[str]:
        """The sandbox environments these tasks are judged in (the run's preflight checks each is prepared)."""
        env = self.sandbox_env
        if env is None:
            return []
        return [env] if isinstance(env, str) else sorted({env(t) for t in tasks})


def no_options(name: str, options: Mapping[str, str]) -> None:
    """A suite that takes no `--suite-option`: a ValueError naming what it got."""
    if options:
        raise ValueError(f"suite {name} takes no options (got {', '.join(sorted(options))})")
