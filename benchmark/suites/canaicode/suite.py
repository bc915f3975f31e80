"""Suite `canaicode` (SPEC 3.6): the can-ai-code interviews, asked through the language server.

Each question is generated on an empty document (`editFidelity.requestEdit` on "" with the rendered
prompt as the instruction and the condition as the document's language); the server extracts the code
from the model's answer, and the code is graded with upstream's checks (`evaluate`), its function
called in the sandbox. Conditions are the languages, `python` and `javascript`.

Per row a status: PASS, FAIL, NO_CODE (the answer has no code), NO_FUNCTION (no function found), and
for rows that never reach grading BAD_QUESTION (a malformed interview question), BAD_INPUT (a recorded
row that cannot be used), SANDBOX_ERROR, ERROR (the backend failed). Score = points / total per
language and overall; a row without grading scores 0 of its question's total.

`--backend recorded:EVAL.ndjson` replays a published eval file (its `code` field): the run covers that
file's interview set and rows, and the summary compares the points with the stored ones row by row.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec

from benchmark.datadir import DataError, data_dir, require
from benchmark.report import metrics
from benchmark.suite import Answer, Dataset, Reporter, Scorer, Solver, Suite, SuiteSummary, Verdict, own_proposal
from benchmark.suites.canaicode import recorded as rec_eval
from benchmark.suites.canaicode.checks import LIST_PADDING, ListPadding
from benchmark.suites.canaicode.evaluate import Evaluation, evaluate
from benchmark.suites.canaicode.function import CALL_TIMEOUT_S
from benchmark.suites.canaicode.interview import (
    LANGUAGES,
    SETS,
    InterviewQuestion,
    load_interview,
)
from benchmark.suites.canaicode.prompts import DEFAULT_TEMPLATE, PromptError, render
from benchmark.suites.canaicode.reference import reference_answer

if TYPE_CHECKING:
    from benchmark.run.records import RunConfig, SampleRecord
    from benchmark.run.session import ServerSession

NAME = "canaicode"
GRADED = ("PASS", "FAIL", "NO_CODE", "NO_FUNCTION")
BAD_QUESTION, BAD_INPUT = "bad_question", "bad_input"  # proposal errorKinds of rows that cannot be asked


class Question(msgspec.Struct, frozen=True, kw_only=True):
    """One task: an interview question with its prompt per language (or why it cannot be asked)."""

    task_id: str
    name: str
    question: InterviewQuestion | None = None
    prompts: dict[str, str] = {}
    languages: tuple[str, ...] = LANGUAGES
    error: str | None = None
    error_kind: str = BAD_QUESTION

    @property
    def before(self) -> str:
        return ""  # generation: the model writes into an empty document

    @property
    def after(self) -> str | None:
        return None  # no single gold text: the reference answer depends on the language

    def instruction(self, condition: str) -> str:
        return self.prompts.get(condition, "")


def questions_root(data: str | Path | None) -> Path:
    """DATA/canaicode; with no directory configured (the per-user cache), the first use downloads it."""
    from benchmark.suites.canaicode.download import ensure

    ensure(data)
    return require(
        data_dir(data) / "canaicode",
        "can-ai-code interviews (canaicode/; `edit-fidelity bench download canaicode` fetches them)",
    )


def known_names(root: Path) -> dict[str, set[str]]:
    return {s: {q.name for q in load_interview(root, s)} for s in SETS if (root / s).is_dir()}


class Questions(Dataset[Question]):
    """The chosen interview sets' questions with the prompt rendered per language; after a recorded eval
    file is read (`Generation.load_recorded`), that file's set and rows."""

    def __init__(self, *, interviews: tuple[str, ...] = SETS, template: str = DEFAULT_TEMPLATE) -> None:
        self.interviews = interviews
        self.template = template
        self.recorded: rec_eval.EvalFile | None = None

    def load(self, data: str | Path | None, limit: int | None) -> list[Question]:
        root = questions_root(data)
        if self.recorded is not None:
            try:
                self.recorded.bind(known_names(root))
            except rec_eval.RecordedEvalError as exc:
                raise DataError(str(exc)) from None
        sets = (self.recorded.interview,) if self.recorded is not None else self.interviews
        tasks: list[Question] = []
        for interview in sets:
            try:
                questions = load_interview(root, interview)
            except FileNotFoundError as exc:
                raise DataError(str(exc)) from None
            for q in questions:
                task = self._task(root, q)
                if self.recorded is not None:  # only the rows the file has
                    languages = self._recorded_languages(q.task_id)
                    if not languages:
                        continue
                    task = msgspec.structs.replace(task, languages=languages)
                tasks.append(task)
        if self.recorded is not None:
            for p in self.recorded.problems:
                tasks.append(
                    Question(
                        task_id=rec_eval.problem_id(p.line),
                        name=f"line {p.line}",
                        error=p.message,
                        error_kind=BAD_INPUT,
                        languages=(p.language or LANGUAGES[0],),
                    )
                )
        return tasks[:limit] if limit else tasks

    def _task(self, root: Path, q: InterviewQuestion) -> Question:
        if q.error is not None:
            return Question(task_id=q.task_id, name=q.name, question=q, error=q.error)
        try:
            prompts = {lang: render(root / "prompts_params", self.template, lang, q.fields) for lang in LANGUAGES}
        except PromptError as exc:
            return Question(task_id=q.task_id, name=q.name, question=q, error=str(exc))
        return Question(task_id=q.task_id, name=q.name, question=q, prompts=prompts)

    def _recorded_languages(self, task_id: str) -> tuple[str, ...]:
        assert self.recorded is not None
        return tuple(lang for lang in LANGUAGES if self.recorded.stored(task_id, lang) is not None)

    def task_conditions(self, task: Question, conditions: Sequence[str]) -> list[str]:
        return [c for c in conditions if c in task.languages]


class Generation(Solver[Question]):
    """The rendered prompt on an empty document whose language is the condition."""

    language = "python"

    def __init__(self, questions: Questions) -> None:
        self.questions = questions  # a recorded eval file decides which questions the run has

    def gold_answer(self, task: Question, condition: str) -> str | None:
        if task.error is not None or task.question is None:
            return ""  # answered by `ask` with the task's own error
        return reference_answer(task.question, condition)

    def identity_answer(self, task: Question, condition: str) -> str | None:
        return ""  # the empty document: no code

    def replay_key(self, task: Question, condition: str) -> str:
        return task.before

    def answer_fence(self, task: Question, condition: str) -> str | None:
        return condition

    def load_recorded(self, path: str | Path) -> rec_eval.EvalFile:
        """A published eval file; the run then covers its interview set and rows (bound in `load`)."""
        self.questions.recorded = rec_eval.load(path)
        return self.questions.recorded

    async def ask(
        self,
        session: ServerSession,
        task: Question,
        condition: str,
        backend: str,
        *,
        name: str,
        style: str | None,
        n: int = 1,
    ) -> Answer | list[Answer]:
        """Generation: the prompt as the instruction on an empty document whose language is the condition."""
        if task.error is not None:  # never reaches the server: the row reports why
            return Answer(
                proposal=own_proposal(backend, status="error", error=task.error, error_kind=task.error_kind),
                completion=None,
            )
        from server.fidelity import apply_text_edits

        proposals = await session.request_edits(
            "", task.instruction(condition), backend, name=name, n=n, style=style, language=condition
        )
        return [
            Answer(proposal=p, completion=apply_text_edits("", p.edits) if p.status == "ok" else None)
            for p in proposals
        ]


class Grading(Scorer[Question]):
    """Upstream's checks on the answer's function, called in the sandbox."""

    def __init__(self, *, call_timeout_s: float = CALL_TIMEOUT_S, padding: ListPadding = "better") -> None:
        self.call_timeout_s = call_timeout_s
        self.padding: ListPadding = padding

    async def judge(self, box: Any, task: Question, condition: str, completion: str) -> Verdict:
        assert task.question is not None and task.error is None
        ev = await evaluate(
            task.question, condition, completion, box, timeout_s=self.call_timeout_s, padding=self.padding
        )
        return verdict(ev)


class Tables(Reporter):
    def __init__(self, padding: ListPadding) -> None:
        self.padding: ListPadding = padding

    def summarise(self, config: RunConfig, records: list[SampleRecord]) -> SuiteSummary:
        return msgspec.convert(summarise(config, records, padding=self.padding), SuiteSummary)

    def render_text(self, summary: dict[str, Any]) -> str | None:
        return render_text(summary)

    def html_sections(self, summary: dict[str, Any], records: list[SampleRecord]) -> str:
        from benchmark.suites.canaicode import html

        return html.sections(summary, records)


OPTIONS = ("interviews", "template", "padding")


def _download(data: str | Path | None, log: Callable[[str], None]) -> Path:
    from benchmark.suites.canaicode import download

    return download.download(data, log=log)


def make(
    options: Mapping[str, str] | None = None,
    *,
    interviews: tuple[str, ...] = SETS,
    template: str = DEFAULT_TEMPLATE,
    call_timeout_s: float = CALL_TIMEOUT_S,
    padding: ListPadding = "better",
) -> Suite[Question]:
    """`--suite-option interviews=junior-v2,senior --suite-option template=... --suite-option padding=worse`."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"suite {NAME}: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(OPTIONS))}")
    if "interviews" in options:
        interviews = tuple(v.strip() for v in options["interviews"].split(","))
    template = options.get("template", template)
    padding = cast(ListPadding, options.get("padding", padding))
    bad = [s for s in interviews if s not in SETS]
    if bad or padding not in LIST_PADDING:
        raise ValueError(
            f"unknown interview set(s) {bad} (known: {', '.join(SETS)})"
            if bad
            else f"unknown list padding {padding!r}; known: {', '.join(LIST_PADDING)}"
        )
    questions = Questions(interviews=interviews, template=template)
    return Suite(
        name=NAME,
        conditions=LANGUAGES,
        dataset=questions,
        solver=Generation(questions),
        scorer=Grading(call_timeout_s=call_timeout_s, padding=padding),
        reporter=Tables(padding),
        judge_by_condition=True,  # the same code is judged as Python or as JavaScript
        necessity=False,  # answers, not edits of a document
        input_error_kinds=frozenset({BAD_QUESTION, BAD_INPUT}),  # rows of their own, as upstream scores them
        # the rendered template is the whole prompt, as can-ai-code sends it; the first code block is the answer
        styles={"python": "bare", "javascript": "bare"},
        download=_download,
    )


def verdict(ev: Evaluation) -> Verdict:
    exec_status = {"NO_CODE": "no_code", "NO_FUNCTION": "no_function"}.get(ev.status) or (
        "timeout" if ev.timeouts else "ok"
    )
    errors = [f"{c.name}: {c.got}" for c in ev.checks if c.error is not None]
    v = Verdict(
        passed=ev.status == "PASS",
        exec_status=exec_status,
        stderr_tail="; ".join(errors)[-400:],
        sandbox_ms=ev.sandbox_ms,
        sandbox_error=ev.sandbox_error,
        metrics={
            "status": ev.status,
            "points": ev.points,
            "total": ev.total,
            "function": ev.function,
            "args": ev.args,
            "calls": ev.calls,
            "timeouts": ev.timeouts,
            "checks": msgspec.to_builtins(ev.checks),
        },
    )
    return v


# -- summary -------------------------------------------------------------------------------------------


def row_status(r: SampleRecord) -> str:
    status = (r.metrics or {}).get("status")
    if r.outcome == "sandbox_error":
        return "SANDBOX_ERROR"
    if status in GRADED:
        return status
    if r.outcome == "no_code":
        return "NO_CODE"
    if r.error_kind == BAD_QUESTION:
        return "BAD_QUESTION"
    if r.error_kind == BAD_INPUT:
        return "BAD_INPUT"
    return "ERROR"


def _score(points: int, total: int) -> float | None:
    return points / total if total else None


def summarise(config: RunConfig, records: list[SampleRecord], *, padding: str = "better") -> dict[str, Any]:
    root = data_dir(config.data_dir or None) / "canaicode"
    totals = {q.task_id: q.total for s in SETS if (root / s).is_dir() for q in load_interview(root, s)}
    stored = _recorded_for(config, root)
    conditions: dict[str, dict[str, Any]] = {}
    details: dict[str, Any] = {}
    by_cond = metrics.by_condition(records)
    all_points = all_total = 0
    for cond in config.conditions or sorted(by_cond):
        rows = []
        per_set: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in sorted(by_cond.get(cond, []), key=lambda x: (x.task_id, x.sample)):
            m = r.metrics or {}
            points = int(m.get("points") or 0)
            total = int(m["total"]) if isinstance(m.get("total"), int) else totals.get(r.task_id, 0)
            row: dict[str, Any] = {
                "task": r.task_id,
                "sample": r.sample,
                "status": row_status(r),
                "points": points,
                "total": total,
            }
            if r.error:
                row["error"] = r.error[:300]
            if stored is not None and (s := stored.stored(r.task_id, cond)) is not None:
                row["stored_points"], row["stored_status"] = s.passed, s.status
            rows.append(row)
            acc = per_set[r.task_id.split("/", 1)[0]]
            acc[0] += points
            acc[1] += total
        points, total = sum(x["points"] for x in rows), sum(x["total"] for x in rows)
        all_points, all_total = all_points + points, all_total + total
        conditions[cond] = {
            "points": points,
            "total": total,
            "score": _score(points, total),
            "n_questions": len({x["task"] for x in rows}),
        }
        d: dict[str, Any] = {
            "statuses": dict(Counter(x["status"] for x in rows)),
            "interviews": {k: {"points": v[0], "total": v[1], "score": _score(v[0], v[1])} for k, v in per_set.items()},
            "rows": rows,
        }
        compared = [x for x in rows if "stored_points" in x]
        if stored is not None:
            differ = [x for x in compared if x["stored_points"] != x["points"] or x["stored_status"] != x["status"]]
            d["recorded"] = {
                "rows": len(compared),
                "same_points": sum(x["stored_points"] == x["points"] for x in compared),
                "stored_points": sum(x["stored_points"] or 0 for x in compared),
                "agreement": 1.0 - len(differ) / len(compared) if compared else None,
                "disagreements": differ,
            }
        details[cond] = d
    details["overall"] = {
        "points": all_points,
        "total": all_total,
        "score": _score(all_points, all_total),
        "list_padding": padding,
    }
    if stored is not None:
        details["overall"]["recorded_file"] = stored.source
        details["overall"]["recorded_problems"] = [p.message for p in stored.problems]
    return {"conditions": conditions, "details": details}


def _recorded_for(config: RunConfig, root: Path) -> rec_eval.EvalFile | None:
    if not config.backend.startswith("recorded:"):
        return None
    path = Path(config.backend.split(":", 1)[1])
    if path.suffix != ".ndjson" or not path.is_file():
        return None  # our own results file replayed: nothing published to compare with
    try:
        ev = rec_eval.load(path)
        ev.bind(known_names(root))
    except (rec_eval.RecordedEvalError, FileNotFoundError):
        return None
    return ev


def render_text(summary: dict[str, Any]) -> str:
    lines = [f"suite {summary['suite']}   backend {summary['backend']}", ""]
    head = (
        f"{'language':<12} {'points':>7} {'total':>6} {'score':>7}  "
        + " ".join(f"{s:>11}" for s in GRADED)
        + f" {'other':>6} {'as stored':>10}"
    )
    lines += [head, "-" * len(head)]
    details = summary.get("details", {})
    for cond, m in summary["conditions"].items():
        d = details.get(cond, {})
        st = d.get("statuses", {})
        other = sum(v for k, v in st.items() if k not in GRADED)
        rec = d.get("recorded")
        agree = "-" if not rec or not rec["rows"] else f"{rec['same_points']}/{rec['rows']}"
        score = "-" if m["score"] is None else f"{m['score']:.4f}"
        lines.append(
            f"{cond:<12} {m['points']:>7} {m['total']:>6} {score:>7}  "
            + " ".join(f"{st.get(s, 0):>11}" for s in GRADED)
            + f" {other:>6} {agree:>10}"
        )
    o = details.get("overall")
    if o:
        lines.append(
            f"{'overall':<12} {o['points']:>7} {o['total']:>6} "
            f"{'-' if o['score'] is None else format(o['score'], '.4f'):>7}"
        )
    grid: dict[str, dict[str, str]] = defaultdict(dict)
    for cond in summary["conditions"]:
        for row in details.get(cond, {}).get("rows", []):
            grid[row["task"]][cond] = f"{row['status']} {row['points']}/{row['total']}"
    if grid:
        conds = list(summary["conditions"])
        width = max(len(t) for t in grid)
        lines += ["", f"{'question':<{width}} " + " ".join(f"{c:<22}" for c in conds)]
        for task, cells in grid.items():
            lines.append(f"{task:<{width}} " + " ".join(f"{cells.get(c, '-'):<22}" for c in conds))
    return "\n".join(lines)
