"""Published can-ai-code eval files (`eval_INTERVIEW_LANGUAGES_TEMPLATE_..._MODEL_TS.ndjson`): one JSON row
per (question, language) with the model's `answer`, the evaluator's extracted `code`, its per-check
results and the row's `passed` / `total` / `status`.

Replaying one (`--backend recorded:EVAL.ndjson`) serves each row's `code` as the model's answer; the
stored points are kept so the summary can compare them row by row. A row that cannot be used (not
JSON, no name, an unknown question or language) is kept as a problem with its line number: the suite
turns it into a BAD_INPUT row of the run instead of dropping it.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from benchmark.run.recorded import RecordedError
from benchmark.suites.canaicode.interview import LANGUAGES, SETS


class StoredRow(msgspec.Struct, frozen=True, kw_only=True):
    line: int
    name: str
    language: str
    code: str | None
    status: str | None = None
    passed: int | None = None
    total: int | None = None


class RowProblem(msgspec.Struct, frozen=True, kw_only=True):
    line: int
    language: str | None
    message: str


class EvalFile(msgspec.Struct, kw_only=True):
    """A recorded run for the engine: `get(task_id, condition)` -> [code], `verdict(...)`, `samples` (1).

    `bind(known)` (the suite's `load`, which knows the data directory) resolves the interview set and
    the task ids; before it, the file is only parsed."""

    source: str
    parsed: list[StoredRow]
    parse_problems: list[RowProblem] = []
    interview: str = ""
    rows: dict[str, StoredRow] = {}  # key: f"{task_id}/{language}"
    problems: list[RowProblem] = []

    def bind(self, known: dict[str, set[str]]) -> None:
        """`known`: question names per interview set (to tell the set and to flag unknown questions)."""
        self.interview = interview_of(Path(self.source), {r.name for r in self.parsed}, known)
        self.rows, self.problems = {}, list(self.parse_problems)
        for r in self.parsed:
            key = f"{self.interview}/{r.name}/{r.language}"
            if r.name not in known[self.interview]:
                self.problems.append(
                    RowProblem(
                        line=r.line,
                        language=r.language,
                        message=f"line {r.line}: {r.name}: no such question in {self.interview}",
                    )
                )
            elif key in self.rows:
                self.problems.append(
                    RowProblem(
                        line=r.line,
                        language=r.language,
                        message=(f"line {r.line}: {r.name} ({r.language}) repeats line {self.rows[key].line}"),
                    )
                )
            else:
                self.rows[key] = r

    def get(self, task_id: str, condition: str) -> list[str]:
        row = self.rows.get(f"{task_id}/{condition}")
        if row is None:
            # a problem row has no code but must reach the suite, which reports its error as the row's
            return [""] if task_id in {problem_id(p.line) for p in self.problems} else []
        return [row.code or ""]

    def verdict(self, task_id: str, condition: str, sample: int) -> bool | None:
        row = self.rows.get(f"{task_id}/{condition}")
        return None if row is None or sample != 0 or row.status is None else row.status == "PASS"

    def stored(self, task_id: str, condition: str) -> StoredRow | None:
        return self.rows.get(f"{task_id}/{condition}")

    @property
    def samples(self) -> int:
        return 1


class RecordedEvalError(RecordedError, ValueError):
    """An eval file that cannot be replayed at all (a bad row is a problem of the run, not this)."""


def problem_id(line: int) -> str:
    """The task id of an unusable row: it shows up in the run as that row, with its error."""
    return f"recorded/line-{line}"


def interview_of(path: Path, names: set[str], known: dict[str, set[str]]) -> str:
    """The interview set of a file: the name says it (`eval_SET_...`), else the only set holding every row."""
    parts = path.name.split("_")
    if len(parts) > 1 and parts[1] in known:
        return parts[1]
    holding = [s for s in SETS if s in known and names <= known[s]]
    if len(holding) == 1:
        return holding[0]
    raise RecordedEvalError(
        f"{path}: cannot tell the interview set (the name is not eval_SET_..., and "
        f"{'several' if holding else 'no'} set(s) hold all its questions)"
    )


def load(path: str | Path) -> EvalFile:
    """Parse an eval file; unusable rows become problems (with their line), usable ones are kept."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordedEvalError(f"recorded eval file {p}: not found") from None
    except IsADirectoryError:
        raise RecordedEvalError(f"recorded eval file {p}: is a directory; pass a can-ai-code eval_*.ndjson") from None
    except UnicodeDecodeError as exc:
        raise RecordedEvalError(
            f"recorded eval file {p}: not UTF-8 text (byte {exc.start}); pass a can-ai-code eval_*.ndjson"
        ) from None
    except OSError as exc:
        raise RecordedEvalError(f"recorded eval file {p}: cannot read: {exc.strerror or exc}") from None
    rows: list[StoredRow] = []
    problems: list[RowProblem] = []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError as exc:
            problems.append(RowProblem(line=i, language=None, message=f"line {i}: not JSON ({exc})"))
            continue
        if not isinstance(raw, dict):
            problems.append(RowProblem(line=i, language=None, message=f"line {i}: not a JSON object"))
            continue
        name, language, code = raw.get("name"), raw.get("language"), raw.get("code")
        lang = language if language in LANGUAGES else None
        if not isinstance(name, str) or not name:
            problems.append(RowProblem(line=i, language=lang, message=f"line {i}: no question `name`"))
        elif lang is None:
            problems.append(
                RowProblem(line=i, language=None, message=f"line {i}: {name}: unknown language {language!r}")
            )
        elif code is not None and not isinstance(code, str):
            problems.append(RowProblem(line=i, language=lang, message=f"line {i}: {name}: `code` is not a string"))
        else:
            rows.append(
                StoredRow(
                    line=i,
                    name=name,
                    language=lang,
                    code=code,
                    status=raw.get("status"),
                    passed=_int(raw.get("passed")),
                    total=_int(raw.get("total")),
                )
            )
    if not rows:
        raise RecordedEvalError(f"{p}: no usable rows" + (f" ({problems[0].message})" if problems else ""))
    return EvalFile(source=str(p), parsed=rows, parse_problems=problems)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
