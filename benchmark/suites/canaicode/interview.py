"""The can-ai-code interview sets (SPEC 3.6): one YAML file per topic, one question per top-level key.

Keys starting with `.` are templates (YAML anchors merged into questions with `<<`), never questions.
A question has `Signature`, `Input`, `Output` (and optionally `Fact`, `Description`) and `Checks`: a
mapping of check name -> {assert, eq | eq-any, weight?}. Loading is PyYAML's `safe_load`, as upstream,
so merge keys and key order come out exactly as the original evaluator saw them.

A malformed question (or a file that does not parse) is not dropped: it becomes an `InterviewQuestion`
whose `error` says what is wrong, so a run reports it as one row with status BAD_QUESTION and goes on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import yaml

SETS = ("junior-dev", "junior-v2", "senior")
LANGUAGES = ("python", "javascript")


class Check(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    assert_: str = msgspec.field(name="assert")
    eq: Any = None
    eq_any: list[Any] | None = msgspec.field(default=None, name="eq-any")
    has_eq: bool = False  # `eq` given (its value may be null)
    weight: int = 1


class InterviewQuestion(msgspec.Struct, frozen=True, kw_only=True):
    """One question of one interview set; `task_id` is `SET/Name` (names repeat across sets)."""

    interview: str
    name: str
    signature: str = ""
    input: str = ""
    output: str = ""
    fact: str | None = None
    description: str = ""
    checks: tuple[Check, ...] = ()
    fields: dict[str, Any] = {}  # the question's own keys as the templates see them (Signature, Input, ...)
    source: str = ""  # the YAML file
    error: str | None = None  # why this question cannot be asked or judged

    @property
    def task_id(self) -> str:
        return f"{self.interview}/{self.name}"

    @property
    def total(self) -> int:
        """The points a perfect answer gets: the sum of the check weights."""
        return sum(c.weight for c in self.checks)


def _check(question: str, name: Any, raw: Any) -> Check:
    if not isinstance(raw, dict):
        raise ValueError(f"check {name!r} is not a mapping (got {type(raw).__name__})")  # noqa: TRY004  # one error type for a bad question
    expr = raw.get("assert")
    if not isinstance(expr, str) or not expr.strip():
        raise ValueError(f"check {name!r} has no `assert` expression")  # upstream aborts the whole run here
    try:
        compile(expr, f"<{question}.{name}>", "eval")
    except SyntaxError as exc:
        raise ValueError(f"check {name!r}: `assert` is not a Python expression: {exc.msg}") from None
    has_eq, eq_any = "eq" in raw, raw.get("eq-any")
    if not has_eq and eq_any is None:
        raise ValueError(f"check {name!r} has neither `eq` nor `eq-any`")
    if eq_any is not None and not isinstance(eq_any, list):
        raise ValueError(f"check {name!r}: `eq-any` must be a list (got {type(eq_any).__name__})")
    weight = raw.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
        raise ValueError(f"check {name!r}: `weight` must be a non-negative integer (got {weight!r})")
    return Check(name=str(name), assert_=expr, eq=raw.get("eq"), eq_any=eq_any, has_eq=has_eq, weight=weight)


def _question(interview: str, name: str, raw: Any, source: str) -> InterviewQuestion:
    base: dict[str, Any] = {"interview": interview, "name": name, "source": source}
    try:
        if not isinstance(raw, dict):
            raise ValueError(f"is not a mapping (got {type(raw).__name__})")  # noqa: TRY004
        missing = [k for k in ("Signature", "Input", "Output", "Checks") if k not in raw]
        if missing:
            raise ValueError(f"lacks {', '.join(missing)}")
        for key in ("Signature", "Input", "Output"):
            if not isinstance(raw[key], str):
                raise ValueError(f"`{key}` must be a string (got {type(raw[key]).__name__})")  # noqa: TRY004
        if not isinstance(raw["Checks"], dict) or not raw["Checks"]:
            raise ValueError("`Checks` must be a non-empty mapping")
        checks = tuple(_check(name, k, v) for k, v in raw["Checks"].items())
    except ValueError as exc:
        return InterviewQuestion(**base, error=f"{source}: question {name!r} {exc}")
    fields = {k: v for k, v in raw.items() if k != "Checks"}
    return InterviewQuestion(
        **base,
        signature=raw["Signature"],
        input=raw["Input"],
        output=raw["Output"],
        fact=raw.get("Fact"),
        description=str(raw.get("Description", "")),
        checks=checks,
        fields=fields,
    )


def parse_interview_file(interview: str, path: Path) -> list[InterviewQuestion]:
    """The questions of one YAML file, in file order; a file that does not load is one bad question."""
    source = f"{interview}/{path.name}"
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return [
            InterviewQuestion(
                interview=interview,
                name=path.stem,
                source=source,
                error=f"{source}: cannot load the YAML: {exc}".replace("\n", " "),
            )
        ]
    if not isinstance(doc, dict):
        return [
            InterviewQuestion(
                interview=interview,
                name=path.stem,
                source=source,
                error=f"{source}: the top level is not a mapping of questions",
            )
        ]
    return [_question(interview, str(key), raw, source) for key, raw in doc.items() if not str(key).startswith(".")]


def load_interview(root: Path, interview: str) -> list[InterviewQuestion]:
    """Every question of one set (`root/SET/*.yaml`, files in name order); duplicate names are errors."""
    folder = root / interview
    if not folder.is_dir():
        raise FileNotFoundError(f"interview set {interview!r} not found at {folder}")
    out: list[InterviewQuestion] = []
    seen: set[str] = set()
    for path in sorted(folder.glob("*.yaml")):
        for q in parse_interview_file(interview, path):
            if q.name in seen:
                q = msgspec.structs.replace(
                    q,
                    name=f"{q.name}@{path.stem}",
                    checks=(),
                    error=f"{q.source}: question {q.name!r} is defined twice in {interview}",
                )
            seen.add(q.name)
            out.append(q)
    return out
