"""Suite `bics` for the replay engine: one haystack per (target length, depth, trial), asked through the
server's `editFidelity.locateBug` exactly as an editor asks it.

Conditions are the bug source: `dataset` (the paper's pre-bugged snippets, the published procedure;
the default) and `inserted` (our own inserters, every bug verified by the interpreter). A task holds
one grid cell and trial; its haystack per condition is built on first use, so `--limit` costs only
what it runs. Tasks are ordered trial first: `--limit 30` covers the default grid once.

The completion stored for a sample is the server's answer as JSON (`line`, `bugType`, `raw`,
`parseable`); the verdict compares it with the label. The grid comes from `Grid` defaults (the
paper's) or from `bench run --suite-option lengths=500,1000 --suite-option trials=5 ...`.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from benchmark.report import metrics
from benchmark.report.summary import load_summary
from benchmark.run import recorded
from benchmark.suite import Answer, Dataset, Reporter, Scorer, Solver, Suite, SuiteSummary, Verdict, own_proposal
from benchmark.suites.bics import haystack as hs
from benchmark.suites.bics import render, scoring, snippets
from server.protocol.names import Command

if TYPE_CHECKING:
    from benchmark.run.records import RunConfig, SampleRecord
    from benchmark.run.session import ServerSession

NAME = "bics"
COMMAND = Command.LOCATE_BUG.value


class GridSpecError(ValueError):
    pass


def parse_grid(spec: str) -> hs.Grid:
    """`lengths=500,1000;depths=0,0.5;trials=5;seed=1;bug_types=missing_colon,missing_comma` (any subset)."""
    fields: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        try:
            if not sep:
                raise ValueError("expected KEY=VALUE")
            if key == "lengths":
                fields[key] = tuple(int(v) for v in value.split(","))
            elif key == "depths":
                fields[key] = tuple(float(v) for v in value.split(","))
            elif key in ("trials", "seed"):
                fields[key] = int(value)
            elif key == "bug_types":
                fields[key] = tuple(v.strip() for v in value.split(","))
            else:
                raise ValueError("unknown key; use lengths, depths, trials, seed, bug_types")
        except ValueError as exc:
            raise GridSpecError(f"BICS grid {part!r}: {exc}") from None
    try:
        return hs.Grid(**fields)
    except hs.HaystackError as exc:
        raise GridSpecError(f"BICS grid: {exc}") from None


class BicsTask:
    """One trial of one grid cell; its haystack per bug source is built on first use."""

    after = None  # no gold document: the gold answer is "<line>, <bug_type>"

    def __init__(self, table: snippets.SnippetTable, grid: hs.Grid, length: int, depth: float, trial: int) -> None:
        self._table, self._grid = table, grid
        self.length, self.depth, self.trial = length, depth, trial
        prefix = f"s{grid.seed}-" if grid.seed else ""
        self.task_id = f"{prefix}{length}-{depth:g}-{trial}"
        self.name = f"length {length}, depth {depth:g}, trial {trial}"
        self._haystacks: dict[str, hs.Haystack] = {}

    def haystack(self, condition: str) -> hs.Haystack:
        h = self._haystacks.get(condition)
        if h is None:
            h = self._haystacks[condition] = hs.build(
                self._table,
                length=self.length,
                depth=self.depth,
                trial=self.trial,
                seed=self._grid.seed,
                source=condition,
                bug_types=self._grid.bug_types,
            )
        return h

    @property
    def before(self) -> str:
        return self.haystack("dataset").code

    def instruction(self, condition: str) -> str:
        return ""  # the prompt is the paper's, with no user instruction


def raw_answer(completion: str) -> str:
    """The model's own answer inside a stored completion (a completion that is not ours stays as it is)."""
    try:
        raw = json.loads(completion).get("raw")
    except (ValueError, AttributeError):
        return completion
    return raw if isinstance(raw, str) else completion


def answer_record(answer: dict) -> str:
    """The stored completion: the server's parsed answer, with the answer as received."""
    return json.dumps(
        {
            "line": answer.get("line"),
            "bugType": answer.get("bugType"),
            "raw": answer.get("raw"),
            "parseable": answer.get("status") == "ok",
            "problem": answer.get("problem"),
        }
    )


class Haystacks(Dataset[BicsTask]):
    """One task per grid cell and trial, trial first (`--limit 30` covers the default grid once)."""

    def __init__(self, grid: hs.Grid | None = None) -> None:
        self.grid = grid or hs.Grid()

    def load(self, data: str | Path | None, limit: int | None) -> list[BicsTask]:
        table = snippets.load(data)
        g = self.grid
        tasks = [
            BicsTask(table, g, length, depth, trial)
            for trial in range(g.trials)
            for length in g.lengths
            for depth in g.depths
        ]
        return tasks[:limit] if limit else tasks


class LocateBug(Solver[BicsTask]):
    """`editFidelity.locateBug` on the condition's haystack; replayed answers are `<line>, <bug_type>`."""

    def gold_answer(self, task: BicsTask, condition: str) -> str:
        h = task.haystack(condition)
        return f"{h.label_line}, {h.bug_type}"

    def identity_answer(self, task: BicsTask, condition: str) -> str:
        return task.haystack(condition).code  # echoing the document: not an answer in the format

    def replay_key(self, task: BicsTask, condition: str) -> str:
        return task.haystack(condition).numbered  # what the prompt's <context> holds

    def answer_fence(self, task: BicsTask, condition: str) -> str | None:
        return None  # answers are `<line>, <bug_type>`, not code

    async def _ask_once(
        self, session: ServerSession, task: BicsTask, condition: str, backend: str, name: str
    ) -> Answer:
        h = task.haystack(condition)
        uri = session.open(h.code, name=name, language="python")
        try:
            result = await session.execute(COMMAND, {"uri": uri, "version": 1, "backends": [backend]}, what="locateBug")
        finally:
            session.close(uri)
        answers = (result or {}).get("answers") or []
        if len(answers) != 1:
            from benchmark.run.session import ServerError

            raise ServerError(f"locateBug returned {len(answers)} answers, expected 1")
        a = answers[0]
        if a.get("status") == "error" and a.get("errorKind") == "empty":  # an empty answer is an answer
            a = {**a, "status": "unparseable", "raw": "", "problem": "the answer is empty"}
        if a.get("status") == "error":
            proposal = own_proposal(backend, status="error", error=a.get("error"), error_kind=a.get("errorKind"))
            return Answer(proposal=proposal, completion=None)
        return Answer(proposal=own_proposal(backend), completion=answer_record(a))

    async def ask(
        self,
        session: ServerSession,
        task: BicsTask,
        condition: str,
        backend: str,
        *,
        name: str,
        style: str | None,
        n: int = 1,
    ) -> list[Answer]:
        return list(
            await asyncio.gather(*(self._ask_once(session, task, condition, backend, f"{name}-{i}") for i in range(n)))
        )

    def load_recorded(self, path: str | Path) -> Any:
        """A bics run of ours (`recorded:RUN_DIR`): its answers as the model gave them (`raw`), to replay."""
        rec = recorded.load(path)
        return msgspec.structs.replace(
            rec, completions={k: [raw_answer(c) for c in v] for k, v in rec.completions.items()}
        )


class Labels(Scorer[BicsTask]):
    """The answer against the haystack's label (no sandbox)."""

    async def judge(self, box: Any, task: BicsTask, condition: str, completion: str) -> Verdict:
        h = task.haystack(condition)
        try:
            a = json.loads(completion)
            line, bug_type, parseable = a.get("line"), a.get("bugType"), bool(a.get("parseable"))
        except (ValueError, AttributeError):
            line, bug_type, parseable = None, None, False
        correct = parseable and scoring.is_correct(h.label_line, h.bug_type, line, bug_type)
        status = "unparseable" if not parseable else "correct" if correct else "wrong"
        metrics = {
            "target_length": h.target_length,
            "target_depth": h.target_depth,
            "trial": h.trial,
            "label_line": h.label_line,
            "bug_type": h.bug_type,
            "pred_line": line,
            "pred_bug_type": bug_type,
            "parseable": parseable,
            "correct": correct,
            "tokens": h.tokens,
        }
        return Verdict(passed=correct, exec_status=status, metrics=metrics)


class Tables(Reporter):
    def summarise(self, config: RunConfig, records: list[SampleRecord]) -> SuiteSummary:
        by_cond = metrics.by_condition(records)
        conditions, details = {}, {}
        for cond in [c for c in config.conditions if c in by_cond] + sorted(
            c for c in by_cond if c not in config.conditions
        ):
            recs = by_cond[cond]
            trials = [trial_of(r) for r in recs if r.metrics.get("label_line") is not None]
            d = scoring.summarise(trials)
            d["errors"] = sum(1 for r in recs if r.metrics.get("label_line") is None)
            d["error_kinds"] = dict(
                sorted(_count(r.error_kind or r.outcome for r in recs if r.metrics.get("label_line") is None).items())
            )
            details[cond] = d
            conditions[cond] = {
                "accuracy": d["parseable"]["accuracy"],
                "accuracy_without_longest": d["parseable"]["accuracy_without_longest"],
                "accuracy_all": d["all"]["accuracy"],
                "accuracy_all_without_longest": d["all"]["accuracy_without_longest"],
                "trials": d["trials"],
                "unparseable": d["unparseable"],
                "errors": d["errors"],
            }
        return SuiteSummary(conditions=conditions, details=details)

    def render_text(self, summary: dict[str, Any]) -> str:
        return render.render_text(entries_of(summary), title=f"Bug In The Code Stack: {summary.get('backend', '')}")

    def html_sections(self, summary: dict[str, Any], records: list[SampleRecord]) -> str:
        """Our part of `bench report --format html`: tables and one heatmap per condition and view."""
        return render.render_sections(entries_of(summary))


def _download(data: str | Path | None, log: Callable[[str], None]) -> Path:
    from benchmark.suites.bics import download

    return download.download(data, log=log)


def make(options: Mapping[str, str] | None = None, *, grid: hs.Grid | None = None) -> Suite[BicsTask]:
    """`--suite-option lengths=500,1000 --suite-option trials=5 ...` (any of parse_grid's keys) choose the grid."""
    if options:
        grid = parse_grid(";".join(f"{k}={v}" for k, v in options.items()))
    return Suite(
        name=NAME,
        conditions=hs.SOURCES,
        default_conditions=("dataset",),
        dataset=Haystacks(grid),
        solver=LocateBug(),
        scorer=Labels(),
        reporter=Tables(),
        judge_by_condition=True,  # the same answer is right for one bug source's haystack, not the other's
        necessity=False,  # answers, not edits of a document
        download=_download,
        published_report=published_report,
    )


def trial_of(r: SampleRecord) -> scoring.Trial:
    m = r.metrics
    return scoring.Trial(
        length=m["target_length"],
        depth=m["target_depth"],
        trial=m["trial"],
        label_line=m["label_line"],
        bug_type=m["bug_type"],
        pred_line=m.get("pred_line"),
        pred_type=m.get("pred_bug_type"),
        parseable=bool(m.get("parseable")),
        correct=bool(m.get("correct")),
    )


def _count(items: Iterable[object]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for x in items:
        out[str(x)] += 1
    return out


def entries_of(summary: dict[str, Any]) -> list[dict]:
    """Our run's summary as report entries, one per condition."""
    backend = summary.get("backend", "run")
    return [
        {"name": f"{backend} [{cond}]", "source": "ours", **d} for cond, d in (summary.get("details") or {}).items()
    ]


def published_report(stats_dir: str | Path, fmt: str = "text", runs: Sequence[str | Path] = ()) -> str:
    """`bench report --published bics DIR [RUN_DIR...]`: the published runs (DIR = bics/stats) and ours,
    side by side, in `fmt` (text, json or html)."""
    from benchmark.suites.bics import published

    entries = []
    for run in published.read_stats(stats_dir):
        entries.append({"name": run.model, **published.summary(run)})
    for run_dir in runs:
        summary = load_summary(Path(run_dir))
        if summary.get("suite") != NAME:
            raise ValueError(f"{run_dir}: a {summary.get('suite')} run, not a {NAME} run")
        entries.extend(entries_of(summary))
    return render.render(entries, fmt)
