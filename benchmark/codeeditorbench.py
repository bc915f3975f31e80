"""Suite `codeeditorbench` (SPEC 3.7): debug, translate, polish and switch tasks judged as programs.

Data (`DATA/codeeditorbench/`): the published jsonl files with their own field names. The full set is
eight files on the Hugging Face hub (`m-a-p/CodeEditorBench`: `code_{debug,translate,polishment,switch}_
{primary,plus}.jsonl`), fetched by `python -m benchmark.codeeditorbench download`; offline there are the
paper's three few-shot tasks per kind (`cluster_*.jsonl`). The loader takes the primary set when it is
there, else the samples (`EDIT_FIDELITY_CODEEDITORBENCH_SET=primary|plus|sample` chooses); `--limit N`
takes the first N tasks of each kind.

Each task is one document for the server: debug opens the incorrect solution, translate the source
program (requestEdit's `answerLanguage` is the target language: the server asks for, and extracts,
code of that language, and the answer is judged in it), polish the original solution, switch the similar
problem's solution. Instructions are the paper's zero-shot prompts (`api_inference.py`), without the
code, which the server sends itself; conditions `KIND-3shot` add the paper's three worked examples
(its `cluster_*` tasks, minus the task asked).

Judging (`sandbox.judge`): the completion runs as a stdin/stdout program (Codeforces-style tasks) or
as a LeetCode-style function inside the judge's per-language harness, on the public and private
tests, under per-language limits. Test inputs and expected outputs come from the task; LeetCode-style
tasks publish their inputs as text (`nums = [1,2], k = 3`, scraped with Markdown escapes and a space
before each closing quote) and no private outputs: inputs are converted to one JSON line per
parameter and missing outputs come from running the task's reference (debug: the correct solution;
translate: the source program; polish: the original; switch: the target solution), which is recorded
per task; when the reference contradicts a published output, it stands in for nothing. A test whose
input cannot be read or whose reference run fails is left out, with the reason. Problems with more
than one right output are judged by a special judge (`SPECIAL_JUDGES`: the two sample problems that
need one, Codeforces 670C and 1368C); elsewhere outputs are compared as tokens (programs) or as values.

Metrics: pass@1 (fraction, as the paper) for every kind; polish OptScore per SPEC 3.7: the original
and the accepted candidate run `OPT_REPEATS` times each over the tests, interleaved in the same
sandbox; T, M, t, m are the mean CPU seconds (summed over the tests) and mean peak memory; a
candidate scores max(((T - t)/T + (M - m)/M) / 2, 0), anything not accepted 0 (`opt_score`). Noise:
`opt_score_margin` is the same with each relative gain whose size is under its noise margin counted as
0; the margin is max(5 %, 2 standard errors of the difference of the two means, relative to the
original's mean), so an unchanged program scores exactly 0 there while it may score a few hundredths
from noise in the compatible mode. Win Rate across backends: `win_rate` over several run summaries.
Fidelity (debug, polish, switch): the server's report of the edit against the original buffer, as
recorded, in the document's language; for C++/Java answers the judge adds `lang_fidelity` (token
distance, excess over the gold edit, cyclomatic and Sonar cognitive deltas, through the core's
tree-sitter layer: the paper's complexity metric is Python-only), averaged in the summary.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import hashlib
import json
import logging
import math
import os
import re
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from benchmark import metrics
from benchmark.datadir import DataError, data_dir
from benchmark.lang_fidelity import lang_fidelity
from benchmark.suite import Suite, Verdict
from sandbox.judge import (
    Checker,
    Judge,
    JudgeLimits,
    Program,
    SingleFlight,
    TestCase,
    TestResult,
    Usage,
    check,
    describe,
    detect_shape,
    guess_language,
    normalise_language,
    read_value,
)

if TYPE_CHECKING:
    from benchmark.records import RunConfig, SampleRecord

logger = logging.getLogger(__name__)

NAME = "codeeditorbench"
KINDS = ("debug", "translate", "polish", "switch")
CONDITIONS = (*KINDS, *(f"{k}-3shot" for k in KINDS))
HUB_REPO = "m-a-p/CodeEditorBench"
HUB_KIND = {"debug": "debug", "translate": "translate", "polish": "polishment", "switch": "switch"}
SETS = ("primary", "plus")
SET_ENV = "EDIT_FIDELITY_CODEEDITORBENCH_SET"
SUBDIR = "codeeditorbench"

# Per-test limits: CPU seconds with the usual online-judge allowance for slower runtimes.
TIME_LIMIT_S = 2.0
TIME_FACTOR = {"cpp": 1.0, "java": 2.0, "python": 3.0}
MEMORY_MB = 256
OPT_REPEATS = 5
OPT_MARGIN_FLOOR = 0.05
OPT_MARGIN_Z = 2.0
# Win Rate: the category metric that ranks the backends.
CATEGORY_METRIC = {"debug": "pass@1", "translate": "pass@1", "polish": "opt_score", "switch": "pass@1"}


def kind_of(condition: str) -> str:
    return condition.split("-", 1)[0]


# ---------------------------------------------------------------------------------------------------
# Published records (field names as in the jsonl files, the paper's typo `scource_lang` included)

Tests = list[str] | str  # a list, or a Python/JSON literal of one (the published files have both)


class _TestedRecord(msgspec.Struct, kw_only=True):
    """The problem and its tests, as the debug, translate and polish records name them."""

    title: str = ""
    difficulty: int | str | None = None
    public_tests_input: str = ""
    public_tests_output: str = ""
    private_tests_input: Tests = []
    private_tests_output: Tests = []


class DebugRecord(_TestedRecord, kw_only=True):
    idx: int
    code_language: str
    incorrect_solutions: str
    solutions: str
    type: str = ""


class TranslateRecord(_TestedRecord, kw_only=True):
    idx: int
    source_code: str
    source_lang: str
    target_lang: str
    target_code: str
    num: int | None = None
    id: int | None = None


class PolishRecord(_TestedRecord, kw_only=True):
    num: int
    source_code: str
    efficient_code: str
    scource_lang: str
    average_running_time: float | None = None
    average_memory: float | None = None


class SwitchRecord(msgspec.Struct, kw_only=True):
    num: int
    language: str
    similar_source_code: str
    target_source_code: str
    similar_id: int | str | None = None
    target_id: int | str | None = None
    pair_title: list[str] = []
    similar_content: str = ""
    target_content: str = ""
    public_similar_tests_input: str = ""
    public_similar_tests_output: str = ""
    public_target_tests_input: str = ""
    public_target_tests_output: str = ""
    private_target_tests_input: Tests = []
    private_target_tests_output: Tests = []


RECORDS: dict[str, type[msgspec.Struct]] = {"debug": DebugRecord, "translate": TranslateRecord,
                                              "polish": PolishRecord, "switch": SwitchRecord}


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
        return instruction(self, condition, shots)


# ---------------------------------------------------------------------------------------------------
# Loading


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
    for parse in (json.loads, ast.literal_eval):
        try:
            got = parse(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(got, (list, tuple)):
            return [str(v) for v in got]
    issues.append(f"{what}: not a list literal ({value[:60]!r}...), left out")
    return []


def _task(kind: str, rec: Any, set_name: str) -> Task:
    issues: list[str] = []
    if kind == "debug":
        lang = normalise_language(rec.code_language)
        before, after = clean_code(rec.incorrect_solutions), clean_code(rec.solutions)
        fields = {"language": rec.code_language, "input": rec.public_tests_input, "output": rec.public_tests_output}
        return _make(kind, rec.idx, set_name, lang, lang, before, after, after, lang, rec.public_tests_input,
                     rec.public_tests_output, _as_list(rec.private_tests_input, "private inputs", issues),
                     _as_list(rec.private_tests_output, "private outputs", issues), fields, issues, rec.type)
    if kind == "translate":
        src, dst = normalise_language(rec.source_lang), normalise_language(rec.target_lang)
        before, after = clean_code(rec.source_code), clean_code(rec.target_code)
        fields = {"source_lang": rec.source_lang, "target_lang": rec.target_lang, "input": rec.public_tests_input,
                  "output": rec.public_tests_output}
        return _make(kind, rec.idx, set_name, src, dst, before, after, before, src, rec.public_tests_input,
                     rec.public_tests_output, _as_list(rec.private_tests_input, "private inputs", issues),
                     _as_list(rec.private_tests_output, "private outputs", issues), fields, issues)
    if kind == "polish":
        lang = normalise_language(rec.scource_lang)
        before, after = clean_code(rec.source_code), clean_code(rec.efficient_code)
        fields = {"input": rec.public_tests_input, "output": rec.public_tests_output}
        return _make(kind, rec.num, set_name, lang, lang, before, after, before, lang, rec.public_tests_input,
                     rec.public_tests_output, _as_list(rec.private_tests_input, "private inputs", issues),
                     _as_list(rec.private_tests_output, "private outputs", issues), fields, issues)
    lang = normalise_language(rec.language)
    before, after = clean_code(rec.similar_source_code), clean_code(rec.target_source_code)
    fields = {"similar_input": rec.public_similar_tests_input, "similar_output": rec.public_similar_tests_output,
              "input": rec.public_target_tests_input, "output": rec.public_target_tests_output}
    return _make(kind, rec.num, set_name, lang, lang, before, after, after, lang, rec.public_target_tests_input,
                 rec.public_target_tests_output, _as_list(rec.private_target_tests_input, "private inputs", issues),
                 _as_list(rec.private_target_tests_output, "private outputs", issues), fields, issues)


def _make(kind: str, number: int, set_name: str, language: str, answer_language: str, before: str, after: str,
          reference: str, reference_language: str, public_input: str, public_output: str, private_inputs: list[str],
          private_outputs: list[str], fields: dict[str, str], issues: list[str], bug_type: str = "") -> Task:
    if private_outputs and len(private_outputs) != len(private_inputs):
        issues.append(f"{len(private_outputs)} private outputs for {len(private_inputs)} inputs: outputs come from "
                      "the reference instead")
        private_outputs = []
    shape = detect_shape(reference_language, reference)
    return Task(kind=kind, number=number, set=set_name, language=language, answer_language=answer_language,
                before=before, after=after, reference=reference, reference_language=reference_language, shape=shape,
                public_input=public_input, public_output=public_output, private_inputs=private_inputs,
                private_outputs=private_outputs, bug_type=bug_type, prompt_fields=fields, load_issues=issues)


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


def load(data: str | Path | None = None, limit: int | None = None,
         issues: list[LoadIssue] | None = None) -> list[Task]:
    """The tasks of every kind (the first `limit` of each); a record that cannot be read is reported
    in `issues` (file, line, error) and skipped."""
    root = data_dir(data)
    set_name = choose_set(root)
    files = data_files(root, set_name)
    missing = [str(p) for p in files.values() if not p.exists()]
    if missing:
        hint = ("run `python -m benchmark.codeeditorbench download`" if set_name != "sample" else
                "pass --data DIR or set EDIT_FIDELITY_DATA to the benchmark data directory")
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


# ---------------------------------------------------------------------------------------------------
# Prompts: the paper's zero-shot instructions (api_inference.py) and its three-shot examples

PREAMBLE = {
    "debug": "Please correct the errors in the buggy code snippet below, ensuring that your corrected code adheres "
             "to the specified programming language syntax and logic requirements. Validate your solution against "
             "the provided test cases to ensure its accuracy. Note that your solution should strictly consist of "
             "the corrected code only.",
    "translate": "Please translate the following code snippet to another programming language, ensuring that your "
                 "translated code meets the syntax and logic requirements of the target programming language. "
                 "Validate your solution against the provided test cases to confirm its accuracy. Note that your "
                 "submission should strictly contain the translated code only.",
    "polish": "Please optimize the given code snippet to enhance its execution efficiency and reduce memory usage, "
              "while ensuring the accuracy of the code remains unaffected. Validate your solution against the "
              "provided test cases to ensure its accuracy. Note that your submission should strictly consist of "
              "the optimized code only.",
    "switch": "Please modify the given code snippet to implement a new function that is related to the original "
              "function implemented by the code. Ensure your modified code adheres to the programming language's "
              "syntax and logic requirements. Validate your solution against the provided test cases to ensure its "
              "accuracy. Your submission should strictly consist of the target code only.",
}
LANGUAGE_NAMES = {"python": "Python", "cpp": "C++", "java": "Java"}


def question(task: Task, *, with_code: bool) -> str:
    """The paper's question for a task; the code itself only for a worked example (the server sends
    the asked task's code as the document)."""
    f = task.prompt_fields
    fence = task.language
    code = f"```{fence}\n{task.before}```\n\n" if with_code else ""
    if task.kind == "debug":
        return (f"Below is the {f['language']} buggy code{':' if with_code else ' (the document)'}\n{code}"
                f"Correct the code and ensure it passes the following test case:\nInput: {f['input']}\n"
                f"Output: {f['output']}")
    if task.kind == "translate":
        target = LANGUAGE_NAMES[task.answer_language]
        return (f"Below is the source code snippet in {f['source_lang']}{':' if with_code else ' (the document)'}\n"
                f"{code}Translate this code to {target}. Ensure your translated code works correctly with the test "
                f"case provided:\nInput: {f['input']}\nOutput: {f['output']}\n"
                f"Answer with the complete {target} code in a ```{task.answer_language} block.")
    if task.kind == "polish":
        return (f"Below is the source code snippet that needs optimization{':' if with_code else ' (the document)'}\n"
                f"{code}Optimize the code and ensure it passes the following test case:\nInput: {f['input']}\n"
                f"Output: {f['output']}")
    return (f"Below is the code snippet that implements a specific function{':' if with_code else ' (the document)'}\n"
            f"{code}It currently performs the operation:\nInput: {f['similar_input']}\nOutput: {f['similar_output']}\n\n"
            "You are required to modify this code to implement a new function that is related to the original one, "
            f"as detailed below:\nInput: {f['input']}\nOutput: {f['output']}\n\n"
            "Ensure your modified code passes the provided test case.")


def instruction(task: Task, condition: str, shots: Sequence[Task] | None = None) -> str:
    """The request for `condition` (`KIND` zero-shot, `KIND-3shot` with the paper's worked examples)."""
    kind = kind_of(condition)
    if kind != task.kind or condition not in CONDITIONS:
        raise ValueError(f"task {task.task_id} has no condition {condition!r}")
    parts = [PREAMBLE[kind]]
    if condition.endswith("-3shot"):
        examples = shots if shots is not None else few_shot_examples(kind)
        for ex in examples:
            if ex.task_id == task.task_id and ex.before == task.before:
                continue  # never the asked task itself (the samples are the paper's shots)
            answer = f"```{ex.answer_language}\n{ex.after}```"
            parts.append(f"### Question:\n{question(ex, with_code=True)}\n\n### Answer:\n{answer}")
        parts.append(f"### Question:\n{question(task, with_code=False)}")
    else:
        parts.append(question(task, with_code=False))
    return "\n\n".join(parts)


_SHOTS: dict[tuple[str, str], list[Task]] = {}


def few_shot_examples(kind: str, data: str | Path | None = None) -> list[Task]:
    """The paper's three worked examples of a kind: its `cluster_*.jsonl` tasks."""
    root = data_dir(data)
    key = (str(root), kind)
    if key not in _SHOTS:
        path = data_files(root, "sample")[kind]
        if not path.exists():
            raise DataError(f"the three-shot examples ({path}) are not there: they ship with the shared data")
        _SHOTS[key] = [_task(kind, msgspec.json.decode(line, type=RECORDS[kind]), "sample")
                       for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return _SHOTS[key]


# ---------------------------------------------------------------------------------------------------
# LeetCode-style tests: the published text as one JSON line per parameter

_MD_ESCAPE = re.compile(r"\\([\[\]_*#|<>~`])")
_SCRAPED_STRING = re.compile(r'"((?:[^"\\]|\\.)*?) "')
_NAMED = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*")


class InputError(ValueError):
    """A published test input that cannot be read as the function's arguments."""


def descrape(text: str) -> str:
    """LeetCode text as scraped into the public tests: Markdown escapes (`\\[`) undone and the space the
    scrape put before each closing quote (`"babad "`) removed."""
    return _SCRAPED_STRING.sub(lambda m: f'"{m.group(1)}"', _MD_ESCAPE.sub(r"\1", text))


def _split_top(text: str) -> list[str]:
    parts, depth, cur, quote = [], 0, [], None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch in "[({":
            depth += 1
            cur.append(ch)
        elif ch in "])}":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    if quote is not None:
        raise InputError(f"unterminated string in {text[:80]!r}")
    parts.append("".join(cur))
    return parts


def _is_text(type_text: str) -> bool:
    return bool(re.search(r"\b(?:string|String|str|char|Character)\b", type_text))


def literal(text: str, type_text: str = "") -> Any:
    """One argument value: JSON, else a Python literal, else (for a text parameter) the bare text."""
    s = text.strip()
    if not s:
        raise InputError("an empty value")
    try:
        return read_value(s)
    except ValueError:
        pass
    if _is_text(type_text) and '"' not in s and "[" not in s:
        return s
    raise InputError(f"cannot read {s[:80]!r} as a value")


def argument_lines(text: str, params: Sequence[tuple[str, str]], *, scraped: bool) -> str:
    """A published test input (`nums = [1,2], k = 3`, `[1, 2]`, `PAYPALISHIRING, 4`) as the judge's
    harness reads it: one compact JSON value per line, in parameter order."""
    s = descrape(text.strip()) if scraped else text.strip()
    if not params:
        raise InputError("the function takes no parameters")
    if _NAMED.match(s):
        pieces: list[tuple[str, str]] = []
        for part in _split_top(s):
            m = _NAMED.match(part)
            if m:
                pieces.append((m.group(1), part[m.end():]))
            elif pieces:  # a comma inside a bare value: glue it back
                pieces[-1] = (pieces[-1][0], pieces[-1][1] + "," + part)
            else:
                raise InputError(f"cannot split {s[:80]!r} into named values")
        by_name = dict(pieces)
        names = [p[0] for p in params]
        values = [by_name[n] for n in names] if set(names) <= set(by_name) else [v for _, v in pieces]
    elif len(params) == 1:
        values = [s]
    else:
        values = _split_top(s)
    if len(values) != len(params):
        raise InputError(f"{len(values)} values for {len(params)} parameters in {s[:80]!r}")
    lines = [json.dumps(literal(v, t), ensure_ascii=False, separators=(",", ":")) for v, (_, t) in
             zip(values, params, strict=True)]
    return "".join(line + "\n" for line in lines)


def expected_value(text: str, *, scraped: bool = True) -> str:
    """A published LeetCode-style output as compact JSON (the raw text when it is not a value)."""
    s = descrape(text.strip()) if scraped else text.strip()
    try:
        value = read_value(s)
    except ValueError:
        return s
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------------
# Special judges: problems with more than one right output


def check_even_picture(test_input: str, expected: str, output: str) -> tuple[bool, str]:
    """Codeforces 1368C "Even Picture": k gray cells, connected, each with an even number of gray
    neighbours, exactly n of them with all four neighbours gray, |coordinates| <= 1e9, k <= 5e5."""
    try:
        n = int(test_input.split()[0])
        tokens = output.split()
        k = int(tokens[0])
        coords = [int(t) for t in tokens[1:]]
    except (ValueError, IndexError):
        return False, "output is not k followed by k pairs of integers"
    if not 1 <= k <= 500_000 or len(coords) != 2 * k:
        return False, f"k = {k} with {len(coords) // 2} pairs"
    cells = list(zip(coords[0::2], coords[1::2], strict=True))
    if any(abs(x) > 10**9 or abs(y) > 10**9 for x, y in cells):
        return False, "a coordinate beyond 1e9"
    gray = set(cells)
    if len(gray) != k:
        return False, "a cell listed twice"
    steps = ((1, 0), (-1, 0), (0, 1), (0, -1))
    full = 0
    for x, y in gray:
        around = sum((x + dx, y + dy) in gray for dx, dy in steps)
        if around % 2:
            return False, f"cell {x} {y} has {around} gray neighbours"
        full += around == 4
    if full != n:
        return False, f"{full} cells with four gray neighbours, expected {n}"
    seen, todo = {cells[0]}, [cells[0]]
    while todo:
        x, y = todo.pop()
        for dx, dy in steps:
            c = (x + dx, y + dy)
            if c in gray and c not in seen:
                seen.add(c)
                todo.append(c)
    return (True, "") if len(seen) == k else (False, "the gray cells are not connected")


def check_cinema(test_input: str, expected: str, output: str) -> tuple[bool, str]:
    """Codeforces 670C "Cinema": any movie with the most very pleased scientists (audio language known),
    ties broken by the most almost satisfied (subtitles known); its 1-based index."""
    try:
        nums = [int(t) for t in test_input.split()]
        n = nums[0]
        known = Counter(nums[1:1 + n])
        m = nums[1 + n]
        audio, subs = nums[2 + n:2 + n + m], nums[2 + n + m:2 + n + 2 * m]
        answer = int(output.split()[0])
    except (ValueError, IndexError):
        return False, "the output is not one movie index"
    if not 1 <= answer <= m:
        return False, f"movie {answer} does not exist (m = {m})"
    best = max((known[audio[j]], known[subs[j]]) for j in range(m))
    got = (known[audio[answer - 1]], known[subs[answer - 1]])
    return (True, "") if got == best else (False, f"movie {answer} pleases {got}, the best is {best}")


SPECIAL_JUDGES: dict[str, Callable[[str, str, str], tuple[bool, str]]] = {
    "debug/707": check_cinema,
    "translate/3685": check_even_picture,
}


# ---------------------------------------------------------------------------------------------------
# Test sets: published where published, else the reference's outputs


class TaskTests(msgspec.Struct, kw_only=True):
    tests: list[TestCase]
    checker: str  # the checker's name (or "special")
    expected_from: dict[str, int]  # published | reference -> number of tests
    issues: list[str]  # tests left out, and why
    reference_agrees: bool | None  # the reference's output on the published tests matches them


def limits_for(language: str) -> JudgeLimits:
    return JudgeLimits(time_s=TIME_LIMIT_S * TIME_FACTOR[language], memory_mb=MEMORY_MB)


def checker_of(task: Task) -> Checker:
    return SPECIAL_JUDGES.get(task.task_id) or ("value" if task.shape == "function" else "numbers")


async def build_tests(judge: Judge, task: Task) -> TaskTests:
    """The task's test cases with expected outputs (see the module doc)."""
    issues = list(task.load_issues)
    checker = checker_of(task)
    ref = Program(source=task.reference, language=task.reference_language, shape=task.shape)
    inputs: list[tuple[str, str, str | None]] = []  # (name, stdin, published expected)
    if task.shape == "function":
        info = describe(ref)
        if info is None:
            return TaskTests(tests=[], checker=str(checker), expected_from={}, issues=[
                *issues, "the reference has no function to call"], reference_agrees=None)
        private_out = dict(enumerate(task.private_outputs))
        for name, text, scraped, out in [("public", task.public_input, True, task.public_output),
                                         *((f"private {i + 1}", x, False, private_out.get(i))
                                           for i, x in enumerate(task.private_inputs))]:
            try:
                stdin = argument_lines(text, info.params, scraped=scraped)
            except InputError as exc:
                issues.append(f"{name} test left out: {exc}")
                continue
            inputs.append((name, stdin, None if out is None else expected_value(out, scraped=scraped)))
    else:
        inputs.append(("public", _stdin(task.public_input), task.public_output))
        outs: list[str | None] = [*task.private_outputs] or [None] * len(task.private_inputs)
        inputs += [(f"private {i + 1}", _stdin(x), o) for i, (x, o) in enumerate(zip(task.private_inputs, outs,
                                                                                         strict=True))]
    ran = await judge.outputs(ref, [stdin for _, stdin, _ in inputs], limits_for(task.reference_language))
    results: list[TestResult | None] = [*ran.tests] or [None] * len(inputs)
    # Does the reference reproduce what is published? If not, its outputs stand in for nothing.
    agree: bool | None = None
    for (_, stdin, published), result in zip(inputs, results, strict=True):
        if published is not None and result is not None and result.verdict == "accepted":
            ok, _ = check(checker, stdin, published, result.output)
            agree = ok if agree is None else agree and ok
    tests: list[TestCase] = []
    counts: Counter[str] = Counter()
    distrusted: list[str] = []
    for (name, stdin, published), result in zip(inputs, results, strict=True):
        if published is not None:
            tests.append(TestCase(name=name, input=stdin, expected=published))
            counts["published"] += 1
        elif agree is False:
            distrusted.append(name)
        elif result is None or result.verdict != "accepted":
            why = ran.detail if result is None else f"{result.verdict}: {result.detail}"
            issues.append(f"{name} test left out: the reference failed on it ({why[:200]})")
        else:
            tests.append(TestCase(name=name, input=stdin, expected=result.output))
            counts["reference"] += 1
    if agree is False:
        issues.append("the reference's output differs from the published expected output"
                      + (f", so it stands in for none: {len(distrusted)} tests without a published output left out"
                         if distrusted else ""))
    return TaskTests(tests=tests, checker=checker if isinstance(checker, str) else "special",
                     expected_from=dict(counts), issues=issues, reference_agrees=agree)


def _stdin(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


# ---------------------------------------------------------------------------------------------------
# OptScore (SPEC 3.7) and Win Rate


def opt_score(original: Usage, candidate: Usage) -> float:
    """SPEC 3.7: max(((T - t)/T + (M - m)/M) / 2, 0) over the mean runtime and memory."""
    gain_t, gain_m = _gains(original, candidate)
    return max((gain_t + gain_m) / 2, 0.0)


def noise_margin(original: Sequence[float], candidate: Sequence[float]) -> float:
    """The smallest relative change taken for real: max(5 %, 2 standard errors of the difference of
    the two means, over the original's mean)."""
    base = sum(original) / len(original) if original else 0.0
    if base <= 0:
        return OPT_MARGIN_FLOOR

    def var(xs: Sequence[float]) -> float:
        if len(xs) < 2:
            return 0.0
        m = sum(xs) / len(xs)
        return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)

    se = math.sqrt(var(original) / max(len(original), 1) + var(candidate) / max(len(candidate), 1))
    return max(OPT_MARGIN_FLOOR, OPT_MARGIN_Z * se / base)


def opt_score_margin(original: Usage, candidate: Usage) -> float:
    """OptScore with each relative gain within its noise margin counted as 0 (a named mode)."""
    gain_t, gain_m = _gains(original, candidate)
    if abs(gain_t) < noise_margin(original.cpu_s, candidate.cpu_s):
        gain_t = 0.0
    if abs(gain_m) < noise_margin(original.memory_mb, candidate.memory_mb):
        gain_m = 0.0
    return max((gain_t + gain_m) / 2, 0.0)


def _gains(original: Usage, candidate: Usage) -> tuple[float, float]:
    T, M = original.mean_cpu_s, original.mean_memory_mb  # the paper's names
    t, m = candidate.mean_cpu_s, candidate.mean_memory_mb
    if T <= 0 or M <= 0:
        raise ValueError(f"the original's runtime and memory must be positive (T={T}, M={M})")
    return (T - t) / T, (M - m) / M


class WinRate(msgspec.Struct, kw_only=True):
    win_rate: float | None  # the mean over the categories the backend was ranked in
    scores: dict[str, float]  # per category: 1 - (rank - 1) / (N - 1)
    ranks: dict[str, float]  # per category (ties share the mean of their places)
    compared: dict[str, int]  # per category: N, the backends ranked


def win_rate(summaries: Mapping[str, Mapping[str, Any]],
             metric: Mapping[str, str] = CATEGORY_METRIC) -> dict[str, WinRate]:
    """Win Rate across the backends of one report (SPEC 3.7): per category rank the backends by the
    category's metric (higher is better; ties take the mean of their places), score each
    1 - (rank - 1)/(N - 1), average over the categories. `summaries`: label -> summary.json
    (`{"conditions": {category: {metric: value}}}`); a backend without a value in a category is not
    ranked there, and a category with fewer than two ranked backends is left out."""
    out = {label: WinRate(win_rate=None, scores={}, ranks={}, compared={}) for label in summaries}
    for category, name in metric.items():
        values = {}
        for label, s in summaries.items():
            v = ((s.get("conditions") or {}).get(category) or {}).get(name)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v):
                values[label] = float(v)
        n = len(values)
        if n < 2:
            continue
        ordered = sorted(values, key=lambda k: -values[k])
        i = 0
        while i < n:
            j = i
            while j + 1 < n and values[ordered[j + 1]] == values[ordered[i]]:
                j += 1
            rank = (i + j) / 2 + 1
            for k in ordered[i:j + 1]:
                out[k].ranks[category] = rank
                out[k].scores[category] = 1 - (rank - 1) / (n - 1)
                out[k].compared[category] = n
            i = j + 1
    for w in out.values():
        w.win_rate = sum(w.scores.values()) / len(w.scores) if w.scores else None
    return out


# ---------------------------------------------------------------------------------------------------
# The suite


class CodeEditorBench(Suite):
    name = NAME
    conditions = CONDITIONS
    default_conditions = KINDS

    def __init__(self, *, opt_repeats: int = OPT_REPEATS) -> None:
        self.opt_repeats = opt_repeats
        self.load_issues: list[LoadIssue] = []
        self._judges: dict[int, Judge] = {}
        self._tests: dict[str, TaskTests] = {}  # by task, kept for the run
        self._building_tests: SingleFlight[TaskTests] = SingleFlight()

    # -- tasks and requests ---------------------------------------------------------------------

    def download(self, data: str | Path | None, log: Callable[[str], None]) -> Path:
        _files, errors = download(data, on_file=lambda name, state: log(f"{name}: {state}"))
        if errors:
            raise DataError("; ".join(errors))
        return data_dir(data) / SUBDIR

    def load(self, data: str | Path | None, limit: int | None) -> list[Task]:
        return load(data, limit, self.load_issues)

    def task_conditions(self, task: Task, conditions: Sequence[str]) -> list[str]:  # type: ignore[override]
        return [c for c in conditions if kind_of(c) == task.kind]

    def task_language(self, task: Task) -> str:  # type: ignore[override]
        return task.language

    def answer_language(self, task: Task) -> str | None:  # type: ignore[override]
        # translate: the source program is the document; the server asks for, and reads, the target's code
        return task.answer_language if task.kind == "translate" else None

    def answer_fence(self, task: Task, condition: str) -> str | None:  # type: ignore[override]
        return task.answer_language

    # -- judging --------------------------------------------------------------------------------

    def judge_for(self, box: Any) -> Judge:
        judge = self._judges.get(id(box))
        if judge is None:
            judge = self._judges[id(box)] = Judge(box)
        return judge

    async def tests_for(self, box: Any, task: Task) -> TaskTests:
        judge = self.judge_for(box)
        key = hashlib.sha256(msgspec.json.encode(task)).hexdigest()
        tests = self._tests.get(key)
        if tests is None:  # the task's concurrent samples share one build
            tests = self._tests[key] = await self._building_tests.run(key, lambda: build_tests(judge, task))
        return tests

    async def judge(self, box: Any, task: Task, condition: str, completion: str) -> Verdict:  # type: ignore[override]
        try:
            return await self._judge(box, task, completion)
        except Exception as exc:  # a judge failure costs this sample, not the run
            logger.exception("judging %s", task.task_id)
            return Verdict(passed=False, exec_status="judge_error", sandbox_error=f"{task.task_id}: the judge failed: "
                           f"{type(exc).__name__}: {exc}"[:400], metrics={"kind": task.kind, "verdict": "judge_error"})

    async def _judge(self, box: Any, task: Task, completion: str) -> Verdict:
        judge = self.judge_for(box)
        tt = await self.tests_for(box, task)
        found: dict[str, Any] = {"kind": task.kind, "language": task.answer_language, "shape": task.shape,
                                 "tests": len(tt.tests), "expected_from": tt.expected_from, "test_issues": len(tt.issues)}
        if task.kind == "debug":
            found["bug_type"] = task.bug_type
        if not tt.tests:
            return Verdict(passed=False, exec_status="judge_error", sandbox_error=f"{task.task_id}: no usable test: "
                           + "; ".join(tt.issues)[:400], metrics={**found, "verdict": "judge_error"})
        program = Program(source=completion, language=task.answer_language, shape=task.shape)
        limits = limits_for(task.answer_language)
        # the reference read every test input, so one the answer cannot take is the answer's fault
        j = await judge.judge(program, tt.tests, limits, checker=checker_of(task), trusted_inputs=True)
        guessed = guess_language(completion)
        found.update({"verdict": j.verdict, "tests_passed": sum(t.verdict == "accepted" for t in j.tests),
                      "cpu_s": round(j.cpu_s, 4), "memory_mb": j.memory_mb,
                      "wrong_language": guessed is not None and guessed != task.answer_language})
        if task.kind == "polish":
            found.update(await self._polish(judge, task, program, tt, limits) if j.passed else
                         {"opt_score": 0.0, "opt_score_margin": 0.0})
        if task.kind != "translate" and task.language != "python":
            # C++/Java: distance and complexity delta through the core's language layer (pure, ms)
            found["lang_fidelity"] = await asyncio.to_thread(lang_fidelity, task.language, task.before, completion,
                                                             task.after)
        return Verdict(passed=j.passed, exec_status=j.verdict, stderr_tail=(j.detail or j.compile_output)[-400:],
                       sandbox_error=(j.detail[:400] or "the judge could not decide") if j.verdict == "judge_error" else None,
                       sandbox_ms=sum(t.wall_s for t in j.tests) * 1000.0, metrics=found)

    async def _polish(self, judge: Judge, task: Task, candidate: Program, tt: TaskTests,
                      limits: JudgeLimits) -> dict[str, Any]:
        """OptScore of an accepted candidate: it and the original, `opt_repeats` times, interleaved."""
        original = Program(source=task.before, language=task.language, shape=task.shape)
        orig, cand = await judge.measure([original, candidate], tt.tests, limits, repeats=self.opt_repeats)
        if orig.failures or cand.failures:
            return {"opt_score": 0.0, "opt_score_margin": 0.0,
                    "opt_error": f"measurement runs failed (original {orig.failures}, candidate {cand.failures})"}
        try:
            return polish_metrics(orig, cand)
        except ValueError as exc:  # an original measured at no time or memory at all
            return {"opt_score": 0.0, "opt_score_margin": 0.0, "opt_error": str(exc)}

    # -- summary --------------------------------------------------------------------------------

    def summarise(self, config: RunConfig, records: list[SampleRecord]) -> dict[str, Any]:
        return summarise(config, records)

    def compare(self, summaries: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], str] | None:
        """Win Rate across the compared backends (SPEC 3.7)."""
        rates = win_rate(summaries)
        lines = ["Win Rate (per category: 1 - (rank - 1)/(N - 1), averaged over the categories)",
                 f"{'backend':<48} {'win rate':>9} " + " ".join(f"{c:>9}" for c in CATEGORY_METRIC)]
        for label, w in sorted(rates.items(), key=lambda kv: -(kv[1].win_rate if kv[1].win_rate is not None else -1)):
            cells = " ".join(f"{w.scores[c]:>9.3f}" if c in w.scores else f"{'-':>9}" for c in CATEGORY_METRIC)
            lines.append(f"{label[:48]:<48} {('-' if w.win_rate is None else f'{w.win_rate:.3f}'):>9} {cells}")
        return {"win_rate": {k: msgspec.to_builtins(v) for k, v in rates.items()}}, "\n".join(lines)

    def render_text(self, summary: dict[str, Any]) -> str | None:
        return render_text(summary)


def polish_metrics(orig: Usage, cand: Usage) -> dict[str, Any]:
    return {
        "opt_score": opt_score(orig, cand), "opt_score_margin": opt_score_margin(orig, cand),
        "T_cpu_s": orig.mean_cpu_s, "M_mb": orig.mean_memory_mb, "t_cpu_s": cand.mean_cpu_s, "m_mb": cand.mean_memory_mb,
        "T_sd": orig.sd_cpu_s, "t_sd": cand.sd_cpu_s, "M_sd": orig.sd_memory_mb, "m_sd": cand.sd_memory_mb,
        "time_margin": noise_margin(orig.cpu_s, cand.cpu_s), "memory_margin": noise_margin(orig.memory_mb, cand.memory_mb),
        "repeats": len(orig.cpu_s),
    }


def _round(x: float | None, nd: int) -> float | None:
    return None if x is None else round(x, nd)


def _lang_means(passing: list[SampleRecord]) -> dict[str, Any]:
    """Means of the language-layer numbers of the passing C++/Java answers (empty when none)."""
    found = [f for r in passing if (f := (r.metrics or {}).get("lang_fidelity"))]
    if not found:
        return {}

    def mean(key: str) -> float | None:
        return metrics.mean([float(f[key]) for f in found if f.get(key) is not None])

    return {"lang_distance_mean": mean("distance"), "lang_excess_mean": mean("excess"),
            "cyclomatic_delta_mean": mean("cyclomatic_delta"), "cognitive_delta_mean": mean("cognitive_delta"),
            "added_cognitive_mean": mean("added_cognitive"), "n_lang": len(found)}


def summarise(config: RunConfig, records: list[SampleRecord]) -> dict[str, Any]:
    """conditions[cond]: pass@1 (a fraction, as the paper), n_tasks, n_samples, and for polish opt_score
    and opt_score_margin; details[cond]: verdict classes, outcomes, fidelity over passing edits, tasks."""
    from benchmark.report import flag_details

    by_cond = metrics.by_condition(records)
    conditions: dict[str, dict[str, Any]] = {}
    details: dict[str, dict[str, Any]] = {}
    for cond in config.conditions or sorted(by_cond):
        recs = by_cond.get(cond, [])
        per_task = metrics.by_task(recs)
        counts = metrics.pass_counts(per_task)
        n = min((c[0] for c in counts), default=0)
        p1 = metrics.suite_pass_at_k(counts, 1)
        row: dict[str, Any] = {"pass@1": _round(None if p1 is None else p1 / 100, 4), "n_tasks": len(per_task),
                               "n_samples": n}
        d: dict[str, Any] = {"pass@1_exact": None if p1 is None else p1 / 100,
                             "verdicts": dict(Counter((r.metrics or {}).get("verdict") or r.exec_status or r.outcome
                                                      for r in recs)),
                             "outcomes": dict(Counter(r.outcome for r in recs))}
        if kind_of(cond) == "polish":
            for key in ("opt_score", "opt_score_margin"):
                per = [sum(float((r.metrics or {}).get(key) or 0.0) for r in v) / len(v) for v in per_task.values()]
                row[key] = _round(metrics.mean(per), 4)
                d[f"{key}_exact"] = metrics.mean(per)
            d["measurement_errors"] = [{"task": r.task_id, "error": r.metrics["opt_error"]} for r in recs
                                       if (r.metrics or {}).get("opt_error")]
        if kind_of(cond) != "translate":
            passing = [r for r in recs if r.passed]
            d["fidelity"] = {
                "distance_mean": metrics.mean([r.distance for r in passing if r.distance is not None]),
                "excess_lev_mean": metrics.mean([r.excess_lev for r in passing if r.excess_lev is not None]),
                "flagged_hunks_mean": metrics.mean([float(r.flagged_hunks) for r in passing]),
                **flag_details(passing),
                "hunks_mean": metrics.mean([float(r.hunks) for r in passing]),
                "added_cc_mean": metrics.mean([r.added_cc for r in passing if r.added_cc is not None]),
                **_lang_means(passing),
                "n_passing": len(passing),
                "note": "the server's report of the edit against the original buffer, in the document's language "
                        "(C++/Java through the tree-sitter layer); C++/Java complexity: cyclomatic and Sonar "
                        "cognitive deltas (the paper's metric is Python-only)",
            }
        d["tasks"] = [{"task": t, "passed": sum(r.passed for r in v), "n": len(v),
                       "verdicts": [(r.metrics or {}).get("verdict") or r.outcome for r in v],
                       **({"opt_score": metrics.mean([float((r.metrics or {}).get("opt_score") or 0.0) for r in v])}
                          if kind_of(cond) == "polish" else {}),
                       "test_issues": max(int((r.metrics or {}).get("test_issues") or 0) for r in v)}
                      for t, v in sorted(per_task.items())]
        d["wrong_language"] = sum(bool((r.metrics or {}).get("wrong_language")) for r in recs)
        conditions[cond] = row
        details[cond] = d
    return {"conditions": conditions, "details": details}


def render_text(summary: dict[str, Any]) -> str:
    lines = [f"suite {summary['suite']}   backend {summary['backend']}", ""]
    head = f"{'condition':<16} {'pass@1':>7} {'OptScore':>9} {'margin':>7} {'tasks':>6} {'n':>3}  verdicts"
    lines += [head, "-" * len(head)]

    def fmt(x: Any, nd: int = 3) -> str:
        return "-" if x is None else f"{x:.{nd}f}"

    for cond, m in summary["conditions"].items():
        verdicts = summary["details"].get(cond, {}).get("verdicts", {})
        shown = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items(), key=lambda kv: -kv[1]))
        lines.append(f"{cond:<16} {fmt(m.get('pass@1')):>7} {fmt(m.get('opt_score')):>9} "
                     f"{fmt(m.get('opt_score_margin')):>7} {m['n_tasks']:>6} {m['n_samples']:>3}  {shown}")
    lines += ["", ("pass@1 and OptScore as fractions (the paper's scale); margin: OptScore with gains inside the "
                   "measurement noise counted as 0.")]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# Download of the full data set


class DownloadError(Exception):
    pass


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def hub_url(filename: str, *, endpoint: str | None = None, revision: str = "main") -> str:
    return f"{endpoint or hub_endpoint()}/datasets/{HUB_REPO}/resolve/{revision}/{filename}"


def download_file(url: str, dest: Path, *, token: str | None = None, chunk: int = 1 << 20,
                  on_progress: Callable[[int, int | None], None] | None = None) -> Path:
    """Stream `url` to `dest` through `dest.part` (resumed with a Range request when one is there),
    checking the hub's sha256 (`X-Linked-Etag`/`ETag`) when it sends one; atomic rename at the end."""
    part = dest.with_name(dest.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": "edit-fidelity"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if have:
        headers["Range"] = f"bytes={have}-"
    req = urllib.request.Request(url, headers=headers)
    try:
        resp = urllib.request.urlopen(req, timeout=60)  # https, or the endpoint the user configured
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # the part is already complete
            part.unlink()
            return download_file(url, dest, token=token, chunk=chunk, on_progress=on_progress)
        raise DownloadError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise DownloadError(f"{url}: {getattr(exc, 'reason', exc)}") from None
    with resp:
        resumed = resp.status == 206
        digest = hashlib.sha256()
        if resumed:
            with part.open("rb") as fh:
                for block in iter(lambda: fh.read(chunk), b""):
                    digest.update(block)
        else:
            have = 0
        length = resp.headers.get("Content-Length")
        total = have + int(length) if length and length.isdigit() else None
        etag = (resp.headers.get("X-Linked-Etag") or resp.headers.get("ETag") or "").strip('W/"')
        dest.parent.mkdir(parents=True, exist_ok=True)
        with part.open("ab" if resumed else "wb") as out:
            while True:
                try:
                    block = resp.read(chunk)
                except OSError as exc:
                    raise DownloadError(f"{url}: connection lost after {have} bytes ({exc}); run again to resume") \
                        from None
                if not block:
                    break
                out.write(block)
                digest.update(block)
                have += len(block)
                if on_progress:
                    on_progress(have, total)
    if total is not None and have != total:
        raise DownloadError(f"{url}: {have} of {total} bytes arrived; run again to resume")
    if re.fullmatch(r"[0-9a-f]{64}", etag) and digest.hexdigest() != etag:
        part.unlink()
        raise DownloadError(f"{url}: sha256 {digest.hexdigest()} differs from the hub's {etag}; the partial file was removed")
    part.replace(dest)
    return dest


def download(data: str | Path | None = None, *, sets: Sequence[str] = ("primary",), endpoint: str | None = None,
             revision: str = "main", force: bool = False, token: str | None = None,
             on_file: Callable[[str, str], None] | None = None) -> tuple[list[Path], list[str]]:
    """Fetch the full jsonl files into DATA/codeeditorbench; (files there, errors per file). One file
    failing does not stop the others."""
    root = data_dir(data) / SUBDIR
    token = token or os.environ.get("HF_TOKEN")
    done, errors = [], []
    for set_name in sets:
        if set_name not in SETS:
            errors.append(f"unknown set {set_name!r}; known: {', '.join(SETS)}")
            continue
        for path in data_files(root.parent, set_name).values():
            if path.exists() and not force:
                done.append(path)
                if on_file:
                    on_file(path.name, "present")
                continue
            try:
                done.append(download_file(hub_url(path.name, endpoint=endpoint, revision=revision), path, token=token))
                if on_file:
                    on_file(path.name, "downloaded")
            except DownloadError as exc:
                errors.append(str(exc))
                if on_file:
                    on_file(path.name, f"failed: {exc}")
    return done, errors


# ---------------------------------------------------------------------------------------------------
# `python -m benchmark.codeeditorbench`: download, and the acceptance check of the judge on the data


def expected_rejection(task: Task) -> set[str]:
    """The verdicts an incorrect debug solution should get for its published bug type."""
    kind = task.bug_type.split(":", 1)[0].strip().lower()
    if kind.startswith("syntax"):
        return {"compile_error"}
    if kind.startswith("reference"):
        return {"runtime_error"} if task.language == "python" else {"compile_error"}
    if kind.startswith("logic"):
        return {"wrong_answer", "runtime_error", "time_limit"}
    if kind.startswith("performance"):
        return {"time_limit", "memory_limit"}
    return {"wrong_answer", "runtime_error", "time_limit", "memory_limit", "compile_error"}


async def check_tasks(tasks: Sequence[Task], *, workers: int = 2, repeats: int = OPT_REPEATS,
                      emit: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """For each task: the reference answer's verdict (and OptScore for polish), and for debug the
    incorrect solution's verdict against the class its bug type predicts."""
    from sandbox import Sandbox

    suite = CodeEditorBench(opt_repeats=repeats)
    box = Sandbox(workers=workers)
    rows = []
    try:
        for task in tasks:
            t0 = time.perf_counter()
            tt = await suite.tests_for(box, task)
            gold = await suite.judge(box, task, task.kind, task.after)
            row: dict[str, Any] = {"task": task.task_id, "language": task.answer_language, "shape": task.shape,
                                   "tests": len(tt.tests), "expected_from": tt.expected_from,
                                   "reference_agrees": tt.reference_agrees, "issues": tt.issues,
                                   "gold": gold.exec_status, "gold_detail": gold.stderr_tail[-200:]}
            if task.kind == "debug":
                bad = await suite.judge(box, task, task.kind, task.before)
                row.update({"incorrect": bad.exec_status, "expected_rejection": sorted(expected_rejection(task)),
                            "incorrect_detail": bad.stderr_tail[-200:]})
            if task.kind == "polish":
                row.update({k: gold.metrics.get(k) for k in ("opt_score", "opt_score_margin", "T_cpu_s", "t_cpu_s",
                                                             "M_mb", "m_mb", "opt_error")})
            row["seconds"] = round(time.perf_counter() - t0, 1)
            rows.append(row)
            if emit:
                emit(row)
    finally:
        box.close()
    return rows


def _main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark.codeeditorbench", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    dl = sub.add_parser("download", help="fetch the full data set from the Hugging Face hub")
    dl.add_argument("--data", help="data directory (default: EDIT_FIDELITY_DATA, else the per-user cache)")
    dl.add_argument("--set", choices=[*SETS, "all"], default="primary")
    dl.add_argument("--endpoint", help="hub endpoint (default: HF_ENDPOINT, else https://huggingface.co)")
    dl.add_argument("--revision", default="main")
    dl.add_argument("--force", action="store_true", help="download files that are already there again")
    ck = sub.add_parser("check", help="judge every task's reference (and debug's incorrect solution)")
    ck.add_argument("--data")
    ck.add_argument("--limit", type=int, help="the first N tasks of each kind")
    ck.add_argument("--workers", type=int, default=2)
    ck.add_argument("--repeats", type=int, default=OPT_REPEATS)
    ck.add_argument("--json", action="store_true", help="one JSON line per task")
    args = parser.parse_args(argv)
    if args.command == "download":
        sets = SETS if args.set == "all" else (args.set,)
        _, errors = download(args.data, sets=sets, endpoint=args.endpoint, revision=args.revision,
                                 force=args.force, on_file=lambda name, state: print(f"{name}: {state}", file=sys.stderr))
        if errors:
            print(f"error: {len(errors)} file(s) not downloaded (see above); run again to retry", file=sys.stderr)
        return 1 if errors else 0
    issues: list[LoadIssue] = []
    try:
        tasks = load(args.data, args.limit, issues)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for issue in issues:
        print(f"unreadable record {issue.file}:{issue.line}: {issue.error}", file=sys.stderr)
    t0 = time.perf_counter()

    def emit(row: dict[str, Any]) -> None:
        if args.json:
            print(json.dumps(row), flush=True)
            return
        extra = ""
        if "incorrect" in row:
            ok = "ok" if row["incorrect"] in row["expected_rejection"] else "UNEXPECTED"
            extra = f"  incorrect -> {row['incorrect']} ({ok}: expected {'/'.join(row['expected_rejection'])})"
        if row.get("T_cpu_s") is not None:
            extra += (f"  OptScore {row['opt_score']:.3f} (margin mode {row['opt_score_margin']:.3f}; "
                      f"T {row['T_cpu_s']:.4f}s t {row['t_cpu_s']:.4f}s M {row['M_mb']:.1f} m {row['m_mb']:.1f} MiB)")
        elif row.get("opt_error"):
            extra += f"  OptScore not measured: {row['opt_error']}"
        print(f"{row['task']:<16} {row['language']:<6} {row['shape']:<8} tests {row['tests']:>2} "
              f"({', '.join(f'{k} {v}' for k, v in row['expected_from'].items())}) reference {row['gold']}{extra} "
              f"[{row['seconds']} s]", flush=True)
        for issue in row["issues"]:
            print(f"    note: {issue}", flush=True)
        if row["gold"] != "accepted":
            print(f"    reference: {row['gold_detail']}", flush=True)

    rows = asyncio.run(check_tasks(tasks, workers=args.workers, repeats=args.repeats, emit=emit))
    accepted = sum(r["gold"] == "accepted" for r in rows)
    debug = [r for r in rows if "incorrect" in r]
    rejected_right = sum(r["incorrect"] in r["expected_rejection"] for r in debug)
    print(f"\nreferences accepted {accepted}/{len(rows)}; incorrect debug solutions rejected with the predicted "
          f"verdict class {rejected_right}/{len(debug)}; {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from benchmark.datadir import run_script

    sys.exit(run_script(_main))
