"""Statements inside the needed units: the second stage of the test-backed necessity search.

ddmin over change units (`server.fidelity.judge.ddmin`) stops at a unit: when a model replaces three lines
with seven, the fix and an extra `break` or a value computed and never read are one unit, and the tests
need it. This module cuts the minimal passing text T (the original with only the needed units) into its
new statements: every statement all of whose lines are new in T (not in the original), at any depth,
definitions excepted (their bodies are statements; a whole new definition is a unit of its own). A second
ddmin over those parts finds the ones the tests pass without; each is then judged like a unit
(`judge_parts`): a part the instruction asks for neither by kind nor by name is unrequested.

A dropped part is replaced by `pass` at its indentation, so a block it emptied still parses; a part that
shares a line with other code is no part (it cannot be cut by lines). Python only (the sandbox's language
for tests); elsewhere there are no parts.

Pure: strings in, line ranges, texts and verdicts out.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Collection, Sequence

import msgspec

from server.fidelity.judge.statements import is_docstring, new_lines
from server.fidelity.judge.test_evidence import EVERY_FUNCTION, completes_kept, judge_units_with_tests
from server.fidelity.measure import measure
from server.fidelity.text import pyast
from server.fidelity.text.analysis import split_lines

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TRAILING = re.compile(r"\s*(#.*)?$")


class Part(msgspec.Struct, frozen=True):
    """A statement of T that is new: its lines, 1-based inclusive, and its indentation."""

    start_line: int
    end_line: int
    indent: str


class PartVerdict(msgspec.Struct, frozen=True):
    """An unneeded part the judge flags: its lines on the edited side (1-based inclusive), the kinds and why."""

    part: int
    unit: int  # the change unit of the edit it sits in
    start_line: int
    end_line: int
    kinds: tuple[str, ...]
    reason: str


def new_parts(original: str, text: str, language: str = "python") -> list[Part]:
    """The statements of `text` whose lines are all new against `original`, in text order (outer first)."""
    if language != "python":
        return []
    try:
        tree = pyast.parse(text, quiet=True)
    except (SyntaxError, ValueError):
        return []  # a text that does not parse has no statements to cut
    fresh, lines = new_lines(original, text), split_lines(text)
    out: dict[tuple[int, int], Part] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or isinstance(node, _DEFINITIONS) or is_docstring(node):
            continue
        start, end = node.lineno, node.end_lineno or node.lineno
        if not set(range(start, end + 1)) <= fresh:
            continue
        first, last = lines[start - 1], lines[end - 1]
        head, tail = first[: node.col_offset], last[node.end_col_offset or 0 :]
        if head.strip() or not _TRAILING.match(tail.rstrip("\r\n")):
            continue  # shares a line with other code: it cannot be cut by lines
        out.setdefault((start, end), Part(start, end, head))
    return sorted(out.values(), key=lambda p: (p.start_line, -p.end_line))


def without_parts(text: str, parts: Sequence[Part], dropped: Collection[int], *, filler: bool = True) -> str:
    """`text` with the parts in `dropped` cut out, each replaced by `pass` at its indentation (`filler`) so
    an emptied block still parses; a part inside another dropped part goes with it."""
    lines = split_lines(text)
    spans = sorted((parts[i].start_line, parts[i].end_line, parts[i].indent) for i in set(dropped))
    out: list[str] = []
    line = 1
    for start, end, indent in spans:
        if start < line:
            continue  # nested in a part already cut
        out.extend(lines[line - 1 : start - 1])
        if filler:
            out.append(f"{indent}pass\n")
        line = end + 1
    out.extend(lines[line - 1 :])
    return "".join(out)


def _unit_at(unit_lines: Sequence[tuple[int, int]], line: int) -> int | None:
    return next((k for k, (a, b) in enumerate(unit_lines) if a <= line <= b), None)


def _emptied_units(
    minimal: str,
    parts: Sequence[Part],
    unneeded: Collection[int],
    where: dict[int, int],
    unit_lines: Sequence[tuple[int, int]],
    fresh: set[int],
) -> set[int]:
    """The units every new line of which (on the edited side) is in an unneeded part."""
    cut = {where[n] for i in unneeded for n in range(parts[i].start_line, parts[i].end_line + 1) if n in where}
    out = set()
    for k, (a, b) in enumerate(unit_lines):
        mine = {n for n in fresh if a <= n <= b}
        if mine and mine <= cut:
            out.add(k)
    return out


def _inside(part: Part, outer: Part) -> bool:
    return outer.start_line <= part.start_line and part.end_line <= outer.end_line and part != outer


def line_map(text: str, edited: str) -> dict[int, int]:
    """Lines of `text` that `edited` holds unchanged: text line -> edited line (1-based)."""
    a, b = split_lines(text), split_lines(edited)
    out: dict[int, int] = {}
    for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        out.update({block.a + k + 1: block.b + k + 1 for k in range(block.size)})
    return out


def branch_body(tree: ast.AST, part: Part, kept: Collection[int]) -> bool:
    """The part is the whole body of a branch the tests need: the only statement under a new `if`, `elif`
    or `else` whose test stays (on a `kept` line). The tests need the branch; that they pass with `pass`
    in place of its body says the body's effect is there anyway (a variable set to the value it already
    holds), not that nobody asked for it."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or node.lineno not in kept:
            continue
        for body in (node.body, node.orelse):
            if len(body) == 1 and body[0].lineno == part.start_line and not isinstance(body[0], ast.If):
                return True
    return False


def judge_parts(
    minimal: str,
    parts: Sequence[Part],
    unneeded: Collection[int],
    instruction: str | None,
    *,
    original: str,
    edited: str,
    unit_lines: Sequence[tuple[int, int]],
) -> list[PartVerdict]:
    """The unneeded parts the judge flags: each part measured as its own change (T without it -> T) and
    judged with the tests' evidence (`test_evidence.judge_units_with_tests`) and the original's words; a
    part lies inside a needed unit, so its function is one the tests need. Lines mapped onto `edited`;
    `unit_lines`: the edit's units as lines of `edited` (1-based inclusive). A part that belongs to the new
    code the tests need (the whole body of a needed new branch, `branch_body`; the only reader or a builder
    of a variable the needed code introduces, `test_evidence.completes_kept`) is judged with that code.

    A unit whose new lines are all unneeded statements is left alone: the tests accept it reduced to a
    deletion of the original's code, so they do not test what replaced it (a filter whose every line can
    go, and the tests still pass, is untested, not unrequested)."""
    where = line_map(minimal, edited)
    emptied = _emptied_units(minimal, parts, unneeded, where, unit_lines, new_lines(original, edited))
    tree = pyast.parse(minimal, quiet=True)
    cut = {n for i in unneeded for n in range(parts[i].start_line, parts[i].end_line + 1)}
    fresh = new_lines(original, minimal)
    kept = fresh - cut
    out: list[PartVerdict] = []
    for i in sorted(unneeded):
        part = parts[i]
        if any(_inside(part, parts[j]) for j in unneeded if j != i):
            continue  # the statement around it is unneeded too: judged as one
        if part.start_line not in where or part.end_line not in where:
            continue  # not in the edited text as it is: nothing to point at
        unit = _unit_at(unit_lines, where[part.start_line])
        if unit is None or unit in emptied:
            continue
        lines = range(part.start_line, part.end_line + 1)
        if branch_body(tree, part, kept) or completes_kept(tree, lines, kept, fresh):
            continue  # part of the new code the tests need (`branch_body`, `test_evidence.completes_kept`)
        before = without_parts(minimal, parts, [i], filler=False)
        report = measure(before, minimal)
        if not report.hunks:
            continue
        verdicts = judge_units_with_tests(
            report,
            instruction,
            range(len(report.hunks)),
            original=before,
            edited=minimal,
            words_of=original,
            tested=EVERY_FUNCTION,
        )
        flagged = [v for v in verdicts if v.flagged]
        if flagged:
            kinds = tuple(dict.fromkeys(k for v in flagged for k in v.unrequested))
            out.append(PartVerdict(i, unit, where[part.start_line], where[part.end_line], kinds, flagged[0].reason))
    return out
