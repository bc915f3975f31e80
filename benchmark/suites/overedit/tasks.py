"""The minimal-fix tasks: the task type, its two conditions' instructions, and the loader.

Data: `DIR/overedit/corrupted_solutions_manual_easy_400.jsonl` (`--data DIR` / EDIT_FIDELITY_DATA);
without either, the per-user cache is filled from the paper's repository (checked against its
SHA-256). `--data FILE.jsonl` loads a suite made by `edit-fidelity bench make-suite`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import msgspec

from benchmark.build.corruptions import Corruption
from benchmark.datadir import DataError, data_dir
from benchmark.run.testrun import TestKind, detect_kind
from benchmark.suites.overedit.download import download

NAME = "overedit"
CONDITIONS = ("generic", "explicit")
DATA_FILE = "corrupted_solutions_manual_easy_400.jsonl"
ENV = "overedit"  # the sandbox environment of the BigCodeBench tasks

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
    raise DataError(
        f"overedit tasks not found at {path}: pass --data DIR (or a suite file from `bench make-suite`) "
        "or set EDIT_FIDELITY_DATA to the benchmark data directory"
    )


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
