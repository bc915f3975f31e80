"""Tasks: the published records as the engine's tasks, loaded from the data directory, and the
paper's three worked examples of each kind."""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from benchmark.datadir import DataError, data_dir
from benchmark.suites.codeeditorbench.kinds import CONDITIONS, KINDS, kind_of
from benchmark.suites.codeeditorbench.prompts import compose
from benchmark.suites.codeeditorbench.records import RECORDS, Tests
from sandbox.judge import detect_shape, normalise_language
from server.fidelity.text import pyast

logger = logging.getLogger(__name__)

HUB_REPO = "m-a-p/CodeEditorBench"
HUB_KIND = {"debug": "debug", "translate": "translate", "polish": "polishment", "switch": "switch"}
SETS = ("primary", "plus")
SET_ENV = "EDIT_FIDELITY_CODEEDITORBENCH_SET"
SUBDIR = "codeeditorbench"


class Task(msgspec.Struct, frozen=True, kw_only=True):
    """One CodeEditorBench task as the engine sees it (see `benchmark.suite.Task`)."""

    kind: str
    number: int  # the record's idx (debug, translate) or num (polish, switch)
    set: str  # primary | plus | sample
    language: str  # the document's language (python | cpp | java)
    answer_language: str  # what the answer is judged as (the target language for translate)
    before: str
    after: str
    reference: str  # the program whose outputs stand in for missing expected outputs
    reference_language: str
    shape: Literal["program", "function"]  # stdin/stdout, or LeetCode-style
    public_input: str
    public_output: str
    private_inputs: list[str]
    private_outputs: list[str]
    bug_type: str = ""
    prompt_fields: dict[str, str] = {}  # what the paper's prompt shows (test case, languages)
    load_issues: list[str] = []
    data_root: str = ""  # where the three-shot examples are (the data directory it was loaded from)

    @property
    def task_id(self) -> str:
        return f"{self.kind}/{self.number}"

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.number}"

    def instruction(self, condition: str) -> str:
        shots = few_shot_examples(self.kind, self.data_root or None) if condition.endswith("-3shot") else None
        return compose(self, condition, shots)


def clean_code(text: str) -> str:
    """A published code field as plain code: the Markdown fence (also one glued to the last line, as
    in ``};```\u200b``) and a bare language tag on the first line (``python``, ``cpp``) removed."""
    s = text.replace("\r\n", "\n").strip("\n")
    s = re.sub(r"^\s*```[\w+#-]*[ \t]*\n", "", s)
    s = re.sub(r"\n?[ \t]*```[ \t]*$", "", s)
    first, _, rest = s.partition("\n")
    if first.strip().lower() in ("python", "python3", "py", "cpp", "c++", "java") and rest:
        s = rest
    return s.strip("\n") + "\n"


def _as_list(value: Tests, what: str, issues: list[str]) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if not value.strip():
        return []
    for parse in (json.loads, pyast.literal_eval):
        try:
            got = parse(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(got, (list, tuple)):
            return [str(v) for v in got]
    issues.append(f"{what}: not a list literal ({value[:60]!r}...), left out")
    return []


def _task(kind: str, rec: Any, set_name: str) -> Task:
    """One published record as a Task: each kind names its fields its own way; the reference solution is
    the program the tests' expected outputs come from (the original for translate and polish)."""
    issues: list[str] = []
    bug_type = ""
    if kind == "debug":
        number, lang = rec.idx, normalise_language(rec.code_language)
        answer_lang = lang
        before, after = clean_code(rec.incorrect_solutions), clean_code(rec.solutions)
        reference = after
        fields = {"language": rec.code_language, "input": rec.public_tests_input, "output": rec.public_tests_output}
        bug_type = rec.type
    elif kind == "translate":
        number, lang, answer_lang = rec.idx, normalise_language(rec.source_lang), normalise_language(rec.target_lang)
        before, after = clean_code(rec.source_code), clean_code(rec.target_code)
        reference = before
        fields = {
            "source_lang": rec.source_lang,
            "target_lang": rec.target_lang,
            "input": rec.public_tests_input,
            "output": rec.public_tests_output,
        }
    elif kind == "polish":
        number, lang = rec.num, normalise_language(rec.scource_lang)
        answer_lang = lang
        before, after = clean_code(rec.source_code), clean_code(rec.efficient_code)
        reference = before
        fields = {"input": rec.public_tests_input, "output": rec.public_tests_output}
    else:  # switch: the tests are the target's
        number, lang = rec.num, normalise_language(rec.language)
        answer_lang = lang
        before, after = clean_code(rec.similar_source_code), clean_code(rec.target_source_code)
        reference = after
        fields = {
            "similar_input": rec.public_similar_tests_input,
            "similar_output": rec.public_similar_tests_output,
            "input": rec.public_target_tests_input,
            "output": rec.public_target_tests_output,
        }
    target = "_target" if kind == "switch" else ""
    return _make(
        kind,
        number,
        set_name,
        lang,
        answer_lang,
        before,
        after,
        reference,
        lang,
        getattr(rec, f"public{target}_tests_input"),
        getattr(rec, f"public{target}_tests_output"),
        _as_list(getattr(rec, f"private{target}_tests_input"), "private inputs", issues),
        _as_list(getattr(rec, f"private{target}_tests_output"), "private outputs", issues),
        fields,
        issues,
        bug_type,
    )


def _make(
    kind: str,
    number: int,
    set_name: str,
    language: str,
    answer_language: str,
    before: str,
    after: str,
    reference: str,
    reference_language: str,
    public_input: str,
    public_output: str,
    private_inputs: list[str],
    private_outputs: list[str],
    fields: dict[str, str],
    issues: list[str],
    bug_type: str = "",
) -> Task:
    if private_outputs and len(private_outputs) != len(private_inputs):
        issues.append(
            f"{len(private_outputs)} private outputs for {len(private_inputs)} inputs: outputs come from "
            "the reference instead"
        )
        private_outputs = []
    shape = detect_shape(reference_language, reference)
    return Task(
        kind=kind,
        number=number,
        set=set_name,
        language=language,
        answer_language=answer_language,
        before=before,
        after=after,
        reference=reference,
        reference_language=reference_language,
        shape=shape,
        public_input=public_input,
        public_output=public_output,
        private_inputs=private_inputs,
        private_outputs=private_outputs,
        bug_type=bug_type,
        prompt_fields=fields,
        load_issues=issues,
    )


def data_files(root: Path, set_name: str) -> dict[str, Path]:
    base = root / SUBDIR
    if set_name == "sample":
        return {k: base / f"cluster_{HUB_KIND[k]}.jsonl" for k in KINDS}
    return {k: base / f"code_{HUB_KIND[k]}_{set_name}.jsonl" for k in KINDS}


def choose_set(root: Path) -> str:
    wanted = os.environ.get(SET_ENV, "").strip().lower()
    if wanted:
        if wanted not in (*SETS, "sample"):
            raise DataError(f"{SET_ENV}={wanted!r}: use primary, plus or sample")
        return wanted
    if all(p.exists() for p in data_files(root, "primary").values()):
        return "primary"
    return "sample"


class LoadIssue(msgspec.Struct, frozen=True):
    file: str
    line: int
    error: str


def load(data: str | Path | None = None, limit: int | None = None, issues: list[LoadIssue] | None = None) -> list[Task]:
    """The tasks of every kind (the first `limit` of each); a record that cannot be read is reported
    in `issues` (file, line, error) and skipped."""
    root = data_dir(data)
    set_name = choose_set(root)
    files = data_files(root, set_name)
    missing = [str(p) for p in files.values() if not p.exists()]
    if missing:
        hint = (
            "run `python -m benchmark.suites.codeeditorbench download`"
            if set_name != "sample"
            else "pass --data DIR or set EDIT_FIDELITY_DATA to the benchmark data directory"
        )
        raise DataError(f"CodeEditorBench files not found: {', '.join(missing)}: {hint}")
    issues = issues if issues is not None else []
    tasks: list[Task] = []
    for kind, path in files.items():
        taken = 0
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if limit is not None and taken >= limit:
                    break
                if not line.strip():
                    continue
                try:
                    rec = msgspec.json.decode(line, type=RECORDS[kind])
                    task = msgspec.structs.replace(_task(kind, rec, set_name), data_root=str(root))
                except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
                    issues.append(LoadIssue(path.name, lineno, str(exc)[:300]))
                    logger.warning("%s line %d: %s", path.name, lineno, exc)
                    continue
                tasks.append(task)
                taken += 1
    if not tasks:
        raise DataError(f"no CodeEditorBench task could be read from {root / SUBDIR}")
    return tasks


_SHOTS: dict[tuple[str, str], list[Task]] = {}


def few_shot_examples(kind: str, data: str | Path | None = None) -> list[Task]:
    """The paper's three worked examples of a kind: its `cluster_*.jsonl` tasks."""
    root = data_dir(data)
    key = (str(root), kind)
    if key not in _SHOTS:
        path = data_files(root, "sample")[kind]
        if not path.exists():
            raise DataError(f"the three-shot examples ({path}) are not there: they ship with the shared data")
        _SHOTS[key] = [
            _task(kind, msgspec.json.decode(line, type=RECORDS[kind]), "sample")
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    return _SHOTS[key]


def instruction(task: Task, condition: str, shots: Sequence[Task] | None = None) -> str:
    """The request for `condition` (`KIND` zero-shot, `KIND-3shot` with the paper's worked examples,
    from the default data directory unless given)."""
    if shots is None and condition.endswith("-3shot") and condition in CONDITIONS and kind_of(condition) == task.kind:
        shots = few_shot_examples(task.kind)
    return compose(task, condition, shots)
