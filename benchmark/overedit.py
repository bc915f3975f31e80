"""Suite `overedit` (SPEC 3.4): the minimal-fix tasks of "When Models Edit Too Much".

Each task is a correct BigCodeBench solution with one or two injected corruptions; the document the
server opens is the corrupted program C, the gold G is the reference solution (the corruptions undone).
Conditions: `generic` ("What is wrong? Fix and complete my function.") and `explicit` (the same, plus
"but keep as much of the original code as possible"), sent with the server's prompt styles `generic`
and `minimal`. A repair M passes when the task's unittest `TestCases` run successfully, with no
errors, in the sandbox's `overedit` environment (`edit-fidelity sandbox prepare --suite overedit`).

Reported over passing repairs: excess ELev = d(M, C) - d(G, C) in the `no_comments` and
`body_no_comments` variants, and added cognitive complexity CC(M) - CC(G) (paper mode), signed mean and
mean of absolute values; all per condition, per corruption family and per number of corruptions.
Tasks whose environment lacks a module (or an NLTK resource) are listed with it, and Pass@1 is also
given over the other tasks.

Data: `DIR/overedit/corrupted_solutions_manual_easy_400.jsonl` (`--data DIR` / EDIT_FIDELITY_DATA);
without either, the per-user cache is filled from the paper's repository (checked against its
SHA-256). `--data FILE.jsonl` loads a suite made by `edit-fidelity bench make-suite`.
"""

from __future__ import annotations

import ast
import logging
import math
import os
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from benchmark import metrics
from benchmark.corruptions import Corruption
from benchmark.corruptions.testrun import TestKind, detect_kind, run_tests
from benchmark.datadir import DataError, data_dir
from benchmark.suite import Suite, Verdict

if TYPE_CHECKING:
    from benchmark.records import RunConfig, SampleRecord

logger = logging.getLogger(__name__)

NAME = "overedit"
CONDITIONS = ("generic", "explicit")
DATA_FILE = "corrupted_solutions_manual_easy_400.jsonl"
SOURCE_URL = ("https://raw.githubusercontent.com/nreHieW/over-editing/main/data/questions/"
              "corrupted_solutions_manual_easy_400.jsonl")
SOURCE_SHA256 = "9f3003bcdff3167b7de84a87dc29986570d3898bd40014343790e958f8778ef7"
URL_ENV = "EDIT_FIDELITY_OVEREDIT_URL"  # a mirror of the file (same SHA-256)
ENV = "overedit"  # the sandbox environment of the BigCodeBench tasks
ENV_OVERRIDE = "EDIT_FIDELITY_OVEREDIT_ENV"  # another environment for every task (CI: `base` for stdlib-only tasks)
TIMEOUT_S = 240.0  # BigCodeBench's own limit per task (a few train models or run tensorflow)
MEMORY_MB = 4096  # address space: pandas + matplotlib + scikit-learn (tensorflow for one task) need more than 1 GiB

NETWORK_MODULES = {"socket", "urllib", "requests", "http", "ftplib", "smtplib", "bs4", "pyquery", "mechanize"}

GENERIC_ASK = "What is wrong? Fix and complete my function."
EXPLICIT_ASK = "What is wrong? Fix and complete my function but keep as much of the original code as possible."


class Task(msgspec.Struct, frozen=True, kw_only=True):
    """One minimal-fix task: the paper's record, or one `bench make-suite` wrote (extra fields)."""

    task_id: str
    corrupted_solution: str
    canonical_solution: str
    test_code: str
    prompt: str = ""
    mutation_type: str | None = None  # the paper's file has one of these two keys
    mutation_types: list[str] | None = None
    # generated suites
    test_kind: TestKind | None = None
    env: str | None = None
    source: str | None = None
    seed: int | None = None
    corruptions: list[Corruption] = []
    gold_patch: str = ""

    @property
    def name(self) -> str:
        return self.task_id

    @property
    def before(self) -> str:
        return self.corrupted_solution

    @property
    def after(self) -> str:
        return self.canonical_solution

    @property
    def families(self) -> list[str]:
        if self.mutation_types:
            return list(self.mutation_types)
        return [self.mutation_type] if self.mutation_type else ["unknown"]

    @property
    def kind(self) -> TestKind:
        return self.test_kind or detect_kind(self.test_code)

    def instruction(self, condition: str) -> str:
        if condition not in CONDITIONS:
            raise ValueError(f"unknown overedit condition {condition!r}; known: {', '.join(CONDITIONS)}")
        ask = EXPLICIT_ASK if condition == "explicit" else GENERIC_ASK
        if not self.prompt.strip():
            return ask
        return f"I am trying to implement a function with the following specifications:\n{self.prompt}.\n\n{ask}"


# ------------------------------------------------------------------ data

def download(dest: Path, url: str | None = None, sha256: str = SOURCE_SHA256, timeout_s: float = 60.0) -> Path:
    """Fetch the task file into `dest` (atomically), refusing content whose SHA-256 is not `sha256`."""
    from benchmark.download import fetch

    return fetch(url or os.environ.get(URL_ENV) or SOURCE_URL, dest, sha256=sha256, what="overedit tasks",
                 timeout_s=timeout_s)


def data_file(data: str | Path | None) -> Path:
    """The task file: `data` itself when it is a file (a generated suite), else DIR/overedit/DATA_FILE,
    downloaded into the per-user cache when no data directory was given."""
    if data is not None and Path(data).is_file():
        return Path(data)
    path = data_dir(data) / "overedit" / DATA_FILE
    if path.exists():
        return path
    if data is None and not os.environ.get("EDIT_FIDELITY_DATA"):
        return download(path)
    raise DataError(f"overedit tasks not found at {path}: pass --data DIR (or a suite file from `bench make-suite`) "
                    "or set EDIT_FIDELITY_DATA to the benchmark data directory")


def parse_tasks(lines: Iterable[str], origin: str = "") -> tuple[list[Task], list[str]]:
    """Tasks from JSON lines; a bad line is an error message (with its line number), not the end of the load."""
    tasks: list[Task] = []
    errors: list[str] = []
    seen: set[str] = set()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            task = msgspec.json.decode(line, type=Task)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            errors.append(f"{origin}:{n}: not a task record: {exc}")
            continue
        if task.task_id in seen:
            errors.append(f"{origin}:{n}: duplicate task_id {task.task_id!r}; the first one is kept")
            continue
        seen.add(task.task_id)
        tasks.append(task)
    return tasks, errors


def load(data: str | Path | None = None, limit: int | None = None) -> tuple[list[Task], list[str]]:
    path = data_file(data)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"overedit tasks: cannot read {path}: {exc}") from None
    tasks, errors = parse_tasks(text.splitlines(), str(path))
    return (tasks[:limit] if limit else tasks), errors


# ------------------------------------------------------------------ judging

def imported_modules(*sources: str) -> set[str]:
    """Top-level modules a program imports (anywhere in it); empty for code that does not parse."""
    found: set[str] = set()
    for src in sources:
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def environment_gap(task: Task, missing: str | None) -> str | None:
    """`missing` when the task itself needs it (its reference solution or tests import it): then the
    environment, not the repair, is at fault. A module only a model's repair imports is the repair's."""
    if not missing:
        return None
    needed = imported_modules(task.canonical_solution, task.test_code)
    if missing.startswith("nltk_data:"):
        return missing if "nltk" in needed else None
    if missing == "network":
        return missing if needed & NETWORK_MODULES else None
    return missing if missing in needed else None


def missing_imports(task: Task, env: str) -> list[str]:
    """The modules the task imports that `sandbox prepare` found missing in `env` (none when not prepared)."""
    from sandbox import envs

    missing = envs.missing_modules(env)
    return sorted(m for m in imported_modules(task.canonical_solution, task.test_code) if m in missing)


def fidelity(task: Task, completion: str) -> dict[str, Any]:
    """Excess ELev (no_comments, body_no_comments), the distances, and added paper cognitive complexity."""
    from server.fidelity import measure

    rep = measure(task.before, completion, gold=task.after)
    excess = rep.excess or {}
    gold = rep.gold_distance or {}
    cc = measure(task.after, completion).complexity["paper"]  # before: CC(G), after: CC(M)
    added = cc.after - cc.before if cc.after is not None and cc.before is not None else None
    return {
        "distance": rep.distance["no_comments"].normalized,
        "gold_distance": gold["no_comments"].normalized if "no_comments" in gold else None,
        "gold_distance_body": gold["body_no_comments"].normalized if "body_no_comments" in gold else None,
        "gold_distance_raw": gold["raw"].normalized if "raw" in gold else None,
        "gold_tokens": gold["no_comments"].tokens if "no_comments" in gold else None,
        "excess_lev": excess.get("no_comments"),
        "excess_lev_body": excess.get("body_no_comments"),
        "added_cc": added,
    }


def normalised_flags(task: Task, condition: str, completion: str) -> dict[str, Any]:
    """Flagged change units of a repair on the paper's footing: both sides `ast.unparse`-normalised, as
    the paper's distance compares them, so the dataset's layout differences (the corrupted program is the
    normalised reference) are not blamed on the model. The server judges the raw texts (the record's
    `flagged_warning`); it cannot judge texts no backend answered, so this is the pure core and the
    judge's own rules (`server.fidelity.flags`) at the default severity settings, with the instruction
    the model got."""
    from server.fidelity import measure, normalize
    from server.fidelity.flags import count_unit_flags

    c, m = normalize(task.before), normalize(completion)
    rep = measure(c, m)
    warn, hint = count_unit_flags(rep, task.instruction(condition), original=c, edited=m)
    return {"flagged_warning_normalised": warn, "flagged_hint_normalised": hint, "units_normalised": len(rep.hunks)}


class OverEdit(Suite):
    name: ClassVar[str] = NAME
    conditions: ClassVar[tuple[str, ...]] = CONDITIONS
    styles: ClassVar[dict[str, str]] = {"generic": "generic", "explicit": "minimal"}

    def __init__(self, *, env: str | None = None, timeout_s: float = TIMEOUT_S, memory_mb: int = MEMORY_MB) -> None:
        self.env = env or os.environ.get(ENV_OVERRIDE) or None  # overrides every task's environment
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.load_errors: list[str] = []

    def download(self, data: str | Path | None, log: Callable[[str], None]) -> Path:
        return download(data_dir(data) / "overedit" / DATA_FILE)

    def load(self, data: str | Path | None, limit: int | None) -> Sequence[Task]:
        tasks, self.load_errors = load(data, limit)
        for err in self.load_errors:
            print(f"edit-fidelity overedit: {err}", file=sys.stderr)
        gaps = {t.task_id: mods for t in tasks if (mods := missing_imports(t, self.env_for(t)))}
        if gaps:  # they still run: their records say what is missing, and Pass@1 is also given without them
            print(f"edit-fidelity overedit: {len(gaps)} task(s) import modules their sandbox environment lacks: "
                  + ", ".join(f"{tid} ({', '.join(m)})" for tid, m in gaps.items()), file=sys.stderr)
        return tasks

    def env_for(self, task: Task) -> str:
        return self.env or task.env or ENV

    def sandbox_envs(self, tasks: Sequence[Task]) -> list[str]:  # type: ignore[override]
        return sorted({self.env_for(t) for t in tasks})

    async def judge(self, box: Any, task: Task, condition: str, completion: str) -> Verdict:  # type: ignore[override]
        run = await run_tests(box, completion, task.test_code, kind=task.kind, env=self.env_for(task),
                              timeout_s=self.timeout_s, memory_mb=self.memory_mb)
        metrics: dict[str, Any] = {"families": task.families, "n_corruptions": len(task.families),
                                   "tests_run": run.tests_run, "failures": run.failures, "errors": run.errors}
        if run.missing:
            metrics["missing"] = run.missing
        gap = environment_gap(task, run.missing)
        if gap:
            metrics["env_missing"] = gap
        try:
            metrics.update(fidelity(task, completion))
        except Exception as exc:  # noqa: BLE001  # the core never raises on bad code; keep the verdict if it did
            metrics["fidelity_error"] = f"{type(exc).__name__}: {exc}"[:300]
        return Verdict(passed=run.passed, exec_status=run.status, exit_code=run.exit_code,
                       stderr_tail=run.detail[-600:], sandbox_ms=run.wall_s * 1000.0,
                       sandbox_error=run.sandbox_error, metrics=metrics)

    def completion_metrics(self, task: Task, condition: str, completion: str) -> dict[str, Any]:  # type: ignore[override]
        return normalised_flags(task, condition, completion)

    def summarise(self, config: RunConfig, records: list[SampleRecord]) -> dict[str, Any]:
        from benchmark.report import ref_free_details

        families = self._families(config, records)
        order = list(config.conditions) or sorted({r.condition for r in records})
        conditions: dict[str, Any] = {}
        details: dict[str, Any] = {}
        for cond in order:
            recs = [r for r in records if r.condition == cond]
            if not recs:
                continue
            conditions[cond], details[cond] = summarise_condition(recs, families)
            details[cond].update(ref_free_details([r for r in recs if r.passed]))  # with `bench run --necessity`
        return {"conditions": conditions, "details": details}

    def _families(self, config: RunConfig, records: list[SampleRecord]) -> dict[str, list[str]]:
        fams = {r.task_id: list(r.metrics["families"]) for r in records if r.metrics.get("families")}
        if all(r.task_id in fams for r in records):
            return fams
        try:  # records without a verdict (backend errors) carry no families: read them from the tasks
            tasks, _ = load(config.data_dir or None)
        except (DataError, OSError) as exc:
            logger.warning("overedit summary: tasks not readable (%s); families of unjudged records unknown", exc)
            return fams
        return {**{t.task_id: t.families for t in tasks}, **fams}

    def html_sections(self, summary: dict[str, Any], records: list[SampleRecord]) -> str:
        from benchmark.html import metrics_table

        return metrics_table(summary) + overedit_html_sections(summary, records)

    def within_run(self, records: list[SampleRecord]) -> tuple[dict[str, Any], str] | None:
        """`bench compare`: generic against explicit for the same backend (matched tasks)."""
        if {"generic", "explicit"} <= {r.condition for r in records}:
            cmp = compare_conditions(records)
            return cmp, render_compare(cmp)
        return None

    def render_text(self, summary: dict[str, Any]) -> str | None:
        return render_text(summary)


# ------------------------------------------------------------------ summary

def _group(recs: list[SampleRecord]) -> dict[str, Any]:
    """Pass@1 over the records' tasks and the fidelity means over their passing records."""
    by_task = metrics.by_task(recs)
    passing = [r for r in recs if r.passed]

    def values(key: str) -> list[float]:
        return [r.metrics[key] for r in passing if r.metrics.get(key) is not None]

    from benchmark.report import flag_details

    added = values("added_cc")
    return {
        "pass@1": metrics.mean([c / n for n, c in metrics.pass_counts(by_task)]),
        "excess_lev": metrics.mean(values("excess_lev")),
        "excess_lev_body": metrics.mean(values("excess_lev_body")),
        "added_cc": metrics.mean(added),
        "added_cc_abs": metrics.mean([abs(v) for v in added]),
        "n_tasks": len(by_task),
        "n_passing": len(passing),
        # flagged units: the server's judgment of the raw texts, and on the paper's footing (normalised)
        **flag_details(passing),
        **flag_details(passing, normalised=True),
    }


def summarise_condition(recs: list[SampleRecord], families: dict[str, list[str]]) -> tuple[dict, dict]:
    samples = max((r.sample for r in recs), default=0) + 1
    env_missing = {r.task_id: r.metrics["env_missing"] for r in recs if r.metrics.get("env_missing")}
    installed = [r for r in recs if r.task_id not in env_missing]
    head = _group(recs)
    head["pass@1_installed"] = _group(installed)["pass@1"] if installed else None
    head["n_samples"] = samples
    head["n_env_missing"] = len(env_missing)

    per_family: dict[str, list[SampleRecord]] = defaultdict(list)
    per_count: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in installed:
        fams = families.get(r.task_id) or ["unknown"]
        for fam in dict.fromkeys(fams):  # a task with the same family twice counts once for it
            per_family[fam].append(r)
        per_count[str(len(fams))].append(r)

    gold: dict[str, dict[str, Any]] = {}
    for r in recs:
        if r.metrics.get("gold_distance") is not None:
            gold.setdefault(r.task_id, {"nc": r.metrics["gold_distance"],
                                        "body": r.metrics.get("gold_distance_body"),
                                        "raw": r.metrics.get("gold_distance_raw"),
                                        "tokens": r.metrics.get("gold_tokens")})
    nc = [g["nc"] for g in gold.values()]
    body = [g["body"] for g in gold.values() if g["body"] is not None]
    raw = [g["raw"] for g in gold.values() if g["raw"] is not None]
    toks = [g["tokens"] for g in gold.values() if g["tokens"] is not None]
    outcomes: dict[str, int] = defaultdict(int)
    for r in recs:
        outcomes[r.outcome] += 1
    not_passing = sorted({r.task_id for r in installed if not r.passed})
    first: dict[str, SampleRecord] = {}
    for r in installed:
        if not r.passed:
            first.setdefault(r.task_id, r)
    detail = {
        "per_family": {f: _group(rs) for f, rs in sorted(per_family.items())},
        "per_corruptions": {k: _group(rs) for k, rs in sorted(per_count.items())},
        "gold_distance": {
            "n_tasks": len(nc),
            "no_comments_mean": metrics.mean(nc),
            "no_comments_median": statistics.median(nc) if nc else None,
            "no_comments_max": max(nc) if nc else None,
            "body_no_comments_mean": metrics.mean(body),
            "raw_mean": metrics.mean(raw),
            "no_comments_tokens_mean": metrics.mean(toks),
            "no_comments_tokens_min": min(toks) if toks else None,
            "no_comments_tokens_max": max(toks) if toks else None,
        },
        "env_missing": dict(sorted(env_missing.items())),
        "outcomes": dict(sorted(outcomes.items())),
        "not_passing": [{"task_id": t, "outcome": first[t].outcome, "exec_status": first[t].exec_status,
                         "error": (first[t].error or first[t].stderr_tail or "")[-300:]} for t in not_passing[:100]],
        "n_not_passing": len(not_passing),
    }
    return head, detail


def _f(v: float | None, nd: int = 3) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def render_text(summary: dict[str, Any]) -> str:
    """The paper's table (Pass@1, excess ELev, added CC per condition), then per family and per count."""
    header = (f"{'condition':<10} {'Pass@1':>7} {'installed':>9} {'ExcessLev':>9} {'body':>7} {'AddedCC':>8} "
              f"{'|AddedCC|':>9} {'tasks':>6} {'env-missing':>11}")
    lines = [f"overedit: {summary.get('backend', '')}", header]
    for cond, m in summary.get("conditions", {}).items():
        lines.append(f"{cond:<10} {_f(m['pass@1']):>7} {_f(m['pass@1_installed']):>9} {_f(m['excess_lev'], 4):>9} "
                     f"{_f(m['excess_lev_body'], 4):>7} {_f(m['added_cc']):>8} {_f(m['added_cc_abs']):>9} "
                     f"{m['n_tasks']:>6} {m['n_env_missing']:>11}")
    lines.append(f"\n{'flagged units':<10} {'warn':>7} {'hint':>7} {'warned':>7}   {'warn':>7} {'hint':>7} {'warned':>7}"
                 f"\n{'':<10} {'raw texts (server)':^23}   {'normalised (paper)':^23}")
    for cond, m in summary.get("conditions", {}).items():
        lines.append(f"{cond:<10} {_f(m.get('flagged_warning_mean'), 2):>7} {_f(m.get('flagged_hint_mean'), 2):>7} "
                     f"{_pct(m.get('flagged_warning_rate')):>7}   {_f(m.get('flagged_warning_normalised_mean'), 2):>7} "
                     f"{_f(m.get('flagged_hint_normalised_mean'), 2):>7} {_pct(m.get('flagged_warning_normalised_rate')):>7}")
    lines.append("(per passing repair; warned: the share with a unit at warning severity, the flagged-unit rate)")
    for cond, d in summary.get("details", {}).items():
        g = d["gold_distance"]
        lines.append(f"\n[{cond}] gold d(G, C) no_comments: mean {_f(g['no_comments_mean'], 4)}, median "
                     f"{_f(g['no_comments_median'], 4)}, max {_f(g['no_comments_max'], 4)}; body_no_comments mean "
                     f"{_f(g['body_no_comments_mean'], 4)} ({g['n_tasks']} tasks)")
        lines.append(f"{'family / corruptions':<32} {'Pass@1':>7} {'ExcessLev':>9} {'AddedCC':>8} {'tasks':>6}")
        for label, m in [*d["per_family"].items(), *((f"{k} corruption(s)", v) for k, v in d["per_corruptions"].items())]:
            lines.append(f"{label:<32} {_f(m['pass@1']):>7} {_f(m['excess_lev'], 4):>9} {_f(m['added_cc']):>8} "
                         f"{m['n_tasks']:>6}")
        if d["env_missing"]:
            lines.append("environment lacks: " + ", ".join(f"{t} ({m})" for t, m in d["env_missing"].items()))
    return "\n".join(lines)


# ------------------------------------------------------------------ HTML and comparison

def overedit_html_sections(summary: dict[str, Any], records: list[SampleRecord]) -> str:
    """Per-condition and per-family plots (pass rate against excess, as in the paper's figures), inline SVG."""
    from benchmark.html import bars, scatter

    conds = summary.get("conditions", {})
    parts = ["<section><h2>Over-editing: pass rate against excess</h2>"]
    points = [(c, m["pass@1"], m["excess_lev"]) for c, m in conds.items()
              if m.get("pass@1") is not None and m.get("excess_lev") is not None]
    parts.append(scatter("conditions: Pass@1 against excess ELev", points, "Pass@1", "excess ELev (no_comments)"))
    parts.append(bars("Pass@1 per condition", [(c, m.get("pass@1")) for c, m in conds.items()]))
    parts.append(bars("added cognitive complexity per condition", [(c, m.get("added_cc")) for c, m in conds.items()]))
    parts.append(bars("flagged-unit rate, normalised (% of passing repairs warned)",
                      [(c, None if m.get("flagged_warning_normalised_rate") is None
                        else 100 * m["flagged_warning_normalised_rate"]) for c, m in conds.items()]))
    for cond, d in summary.get("details", {}).items():
        fam = d.get("per_family", {})
        short = {f: f.removeprefix("mutate_").replace("_", " ") for f in fam}
        fpoints = [(short[f], m["pass@1"], m["excess_lev"]) for f, m in fam.items()
                   if m.get("pass@1") is not None and m.get("excess_lev") is not None]
        parts.append(f"<h3>{_esc(cond)}: per corruption family</h3>")
        parts.append(scatter(f"{cond}: Pass@1 against excess ELev per family", fpoints, "Pass@1", "excess ELev"))
        parts.append(bars(f"{cond}: Pass@1 per family", [(short[f], m.get("pass@1")) for f, m in fam.items()]))
        parts.append(bars(f"{cond}: excess ELev per family", [(short[f], m.get("excess_lev")) for f, m in fam.items()]))
        count = d.get("per_corruptions", {})
        parts.append(bars(f"{cond}: Pass@1 per number of corruptions", [(k, m.get("pass@1")) for k, m in count.items()]))
        if d.get("env_missing"):
            parts.append("<p>Environment lacks (not counted in the per-family figures): "
                         + ", ".join(f"{_esc(t)} ({_esc(m)})" for t, m in d["env_missing"].items()) + "</p>")
    parts.append("<p>Excess ELev: d(M, C) - d(G, C), normalised token Levenshtein, no_comments; added CC: paper "
                 "cognitive complexity CC(M) - CC(G); both over passing repairs. Flagged units (table above): "
                 "unrequested change units at warning and at hint severity per passing repair, as the server judged "
                 "the raw texts and on the paper's footing (both sides normalised, `_normalised`); the rate is the "
                 "share of passing repairs with a unit at warning severity.</p></section>")
    return "".join(parts)


def _esc(x: object) -> str:
    import html

    return html.escape(str(x))


def _signed_rank_p(diffs: Sequence[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank p-value, normal approximation with tie correction (zeros dropped)."""
    d = [x for x in diffs if x != 0]
    n = len(d)
    if n < 6:
        return None
    order = sorted(range(n), key=lambda i: abs(d[i]))
    ranks = [0.0] * n
    i = 0
    tie_term = 0.0
    while i < n:
        j = i
        while j + 1 < n and abs(d[order[j + 1]]) == abs(d[order[i]]):
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        t = j - i + 1
        tie_term += t ** 3 - t
        i = j + 1
    w_plus = sum(r for r, x in zip(ranks, d) if x > 0)
    mean = n * (n + 1) / 4
    var = n * (n + 1) * (2 * n + 1) / 24 - tie_term / 48
    if var <= 0:
        return None
    z = (w_plus - mean) / math.sqrt(var)
    return math.erfc(abs(z) / math.sqrt(2))


def compare_conditions(records: list[SampleRecord], base: str = "generic", other: str = "explicit") -> dict[str, Any]:
    """`other` against `base` for one backend: Pass@1 and means of each, and matched pairs (tasks whose
    repair passed under both) with the mean change of excess ELev and added CC and a signed-rank p-value."""
    def first_by_task(cond: str) -> dict[str, SampleRecord]:
        out: dict[str, SampleRecord] = {}
        for r in sorted(records, key=lambda r: r.sample):
            if r.condition == cond:
                out.setdefault(r.task_id, r)
        return out

    a, b = first_by_task(base), first_by_task(other)
    both = sorted(set(a) & set(b))
    pairs = [(a[t], b[t]) for t in both if a[t].passed and b[t].passed]

    def diffs(key: str) -> list[float]:
        return [y.metrics[key] - x.metrics[key] for x, y in pairs
                if x.metrics.get(key) is not None and y.metrics.get(key) is not None]

    lev, cc = diffs("excess_lev"), diffs("added_cc")
    stats = {cond: _group([r for r in records if r.condition == cond]) for cond in (base, other)}
    base_cc = stats[base]["added_cc"]
    return {
        "base": base, "other": other, "conditions": stats, "n_tasks_both": len(both), "n_pairs": len(pairs),
        "pass@1_change": (stats[other]["pass@1"] - stats[base]["pass@1"])
        if stats[other]["pass@1"] is not None and stats[base]["pass@1"] is not None else None,
        "excess_lev_change": metrics.mean(lev), "excess_lev_p": _signed_rank_p(lev),
        "added_cc_change": metrics.mean(cc), "added_cc_p": _signed_rank_p(cc),
        "added_cc_relative_change": (stats[other]["added_cc"] - base_cc) / base_cc
        if base_cc and stats[other]["added_cc"] is not None else None,
    }


def render_compare(cmp: dict[str, Any]) -> str:
    base, other = cmp["base"], cmp["other"]
    lines = [f"{'condition':<10} {'Pass@1':>7} {'ExcessLev':>9} {'AddedCC':>8} {'warned':>7} {'tasks':>6}"]
    for cond in (base, other):
        m = cmp["conditions"][cond]
        lines.append(f"{cond:<10} {_f(m['pass@1']):>7} {_f(m['excess_lev'], 4):>9} {_f(m['added_cc']):>8} "
                     f"{_pct(m.get('flagged_warning_normalised_rate')):>7} {m['n_tasks']:>6}")
    p = cmp["excess_lev_p"]
    lines.append(f"{other} - {base}: Pass@1 {_f(cmp['pass@1_change'])}; over {cmp['n_pairs']} tasks passing under both: "
                 f"excess ELev {_f(cmp['excess_lev_change'], 4)} (signed-rank p {'-' if p is None else f'{p:.2g}'}), "
                 f"added CC {_f(cmp['added_cc_change'])}")
    lines.append("warned: share of passing repairs with a unit at warning severity (normalised footing)")
    return "\n".join(lines)
