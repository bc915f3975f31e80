"""The sample browser's data: one row per sample for the table (parsed at load) and each sample's details
(diff, change units, verdict, numbers) in a second JSON block parsed only when a sample is opened, so a
4,200-sample run stays responsive. Originals, instructions and gold diffs are stored once per task."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from benchmark import suites
from benchmark.report.templating import env
from benchmark.run.records import RunConfig, SampleRecord

MAX_DIFF_LINES = 400  # a runaway completion still gets a readable (and bounded) diff
ERROR_OUTCOMES = ("backend_error", "server_error", "sandbox_error")


def sample_id(r: SampleRecord) -> str:
    return f"{r.task_id}:{r.condition}:{r.sample}"


def outcome_group(r: SampleRecord) -> str:
    """pass | fail | error: `no_code` is the model's failure, a backend or sandbox error the harness's."""
    return "error" if r.outcome in ERROR_OUTCOMES else "pass" if r.passed else "fail"


def unified(before: str, after: str) -> str:
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), "original", "edited", n=3, lineterm=""))
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... {len(lines) - MAX_DIFF_LINES} more diff lines left out"]
    return "\n".join(lines)


def load_tasks(config: RunConfig | None) -> dict[str, Any]:
    """The run's tasks by id (for originals, instructions, gold), or {} where the data is not at hand: the
    browser then shows the completions without a diff, never fails the report."""
    if config is None:
        return {}
    try:
        suite = suites.get(config.suite, config.options)
        return {t.task_id: t for t in suite.dataset.load(config.data_dir or None, config.limit)}
    except Exception:  # noqa: BLE001 - any missing or moved data: a report without originals, not a failure
        return {}


def _num(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def browser_data(records: Sequence[SampleRecord], tasks: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """(index, details): the index holds the table rows and per-task texts; details[i] belongs to row i."""
    rows: list[list[Any]] = []
    details: list[Any] = []
    task_info: dict[str, dict[str, Any]] = {}
    seen: dict[str, int] = {}  # diff -> the first sample with it
    strings: dict[str, int] = {}  # unit messages and number names, stored once (they repeat across samples)

    def intern(text: str) -> int:
        return strings.setdefault(text, len(strings))

    for r in records:
        t = tasks.get(r.task_id)
        info = task_info.get(r.task_id)
        if info is None:
            info = task_info[r.task_id] = {"name": r.task, "instructions": {}, "gold": None}
            if t is not None and t.after is not None:
                info["gold"] = unified(t.before, t.after)
        if t is not None and r.condition not in info["instructions"]:
            try:
                info["instructions"][r.condition] = t.instruction(r.condition)
            except Exception:  # noqa: BLE001 - a condition the task no longer offers: no instruction shown
                info["instructions"][r.condition] = ""
        units = r.units or []
        kinds = sorted({k for u in units for k in u.kinds})
        rows.append(
            [
                sample_id(r),
                r.task_id,
                r.condition,
                r.sample,
                outcome_group(r),
                r.outcome,
                _num(r.excess_lev),
                _num(r.cc_delta, 2),
                _num(r.added_cc, 2),
                r.hunks,
                r.flagged_hunks,
                kinds,
            ]
        )
        diff = None
        if r.completion is not None:
            diff = unified(t.before, r.completion) if t is not None else None
        # a diff seen before (samples often repeat one another): the index of the sample holding it
        stored_diff: str | int | None = diff
        if diff:
            first = seen.setdefault(diff, len(details))
            stored_diff = diff if first == len(details) else first
        details.append(
            {
                "diff": stored_diff,
                "completion": r.completion if diff is None else None,
                "units": [[*u.lines, u.kinds, u.flagged, u.severity, intern(u.message)] for u in units],
                "verdict": {
                    "outcome": r.outcome,
                    "exec_status": r.exec_status,
                    "exit_code": r.exit_code,
                    "stderr_tail": r.stderr_tail[-4000:],
                    "error": r.error,
                    "error_kind": r.error_kind,
                    "votes": r.votes,
                    "reused": r.reused_verdict,
                },
                "numbers": [
                    [intern(k), v]
                    for k, v in {
                        "distance d(M,C)": _num(r.distance),
                        "distance tokens": r.distance_tokens,
                        "excess ELev": _num(r.excess_lev),
                        "added CC": _num(r.added_cc, 2),
                        "CC delta": _num(r.cc_delta, 2),
                        "ExcessCode": _num(r.scores.excess_code if r.scores else None),
                        "ExcessCode strict": _num(r.scores.excess_code_strict if r.scores else None),
                        "change units": r.hunks,
                        "flagged units": r.flagged_hunks,
                        "flagged (warning)": r.flagged_warning,
                        "flagged (hint)": r.flagged_hint,
                        "identical": r.identical,
                        **{f"metric {k}": v for k, v in r.metrics.items() if isinstance(v, (int, float, str, bool))},
                    }.items()
                    if v is not None
                ],
            }
        )
    return {"rows": rows, "tasks": task_info, "strings": list(strings)}, details


def script_json(data: Any) -> str:
    """JSON for a <script type="application/json"> block: `<` escaped so no text can close the tag."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


def render_browser(
    records: Sequence[SampleRecord], run_dir: Path | None = None, config: RunConfig | None = None
) -> str:
    """The browser's HTML section (its data blocks and script included)."""
    index, details = browser_data(records, load_tasks(config))
    return (
        env()
        .get_template("browser.html.j2")
        .render(
            index_json=Markup(script_json(index)),
            details_json=Markup(script_json(details)),
            n=len(records),
            run_dir=str(run_dir or ""),
        )
    )
