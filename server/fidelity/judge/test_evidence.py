"""Test-backed evidence for the judge: a unit the tests pass without, that the instruction asks for neither
by kind nor by name, is unrequested.

The instruction alone cannot tell a requested fix from an extra change of logic inside the same function
(an early `break`, a value computed and never read, a second copy of a block): both are ordinary code.
Tests can. When a check (a suite's hidden tests, the workspace's test command) accepts the edit without a
unit, the unit does nothing the tests need; unless the instruction asks for that kind of change (a
docstring, a rename, validation) or names what the unit introduces, nobody asked for it.

Rules, in order (`judge_with_tests`):
- no evidence unless the search found a passing subset that is not empty (`evidence`): tests that pass
  on the original say nothing about the change, and a failing or unresolved check says nothing at all;
- no evidence either when every unit the tests need is one the instruction flags: the tests pass on
  changes nobody asked for, so they do not test the request (a seeded test that a dropped statement
  satisfies says nothing about the requested filter);
- a unit the tests need, or one already flagged, keeps the instruction's verdict;
- tests never need a docstring, a comment or a layout change: units of only those kinds keep it too;
- asked for by kind: the instruction asks for one of the unit's kinds where the unit is (a guard the
  validation it asks for, in the function it points at), or the unit's rename is the one it names;
- asked for by name: the unit adds a definition the instruction asks for, or a word the original does
  not have (a name, a string) that the instruction uses ("a new type of intersection, 'Roundabout'",
  "filter near-zero variance" for `variances`);
- a unit in a function the instruction names, when the tests need no change of that function: they do
  not test what was asked there, so they cannot tell the ask from the extra;
- a pure insertion that repeats the lines beside it (`slid`): where the line diff cut, not a change;
- a unit that completes the code the tests need (`completes_kept`): the only reader of a new variable a
  needed unit stores, or a writer of a new variable the needed code reads later. The tests need that new
  code, and pass without this piece only because they do not reach what it does (a filter on the new
  `child` whose case no test builds): it is part of the needed change, not an extra;
- otherwise flagged: "the tests pass without it".

Pure: strings, the report and the indices of the units the tests do not need.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterator, Sequence

from server.fidelity.judge.added_code import unrequested_definitions
from server.fidelity.judge.flags import judged_units
from server.fidelity.judge.instruction import (
    _SCOPED,
    NEVER_REQUESTED,
    Scope,
    UnitFacts,
    Verdict,
    _in_scope,
    _raises_as_asked,
    _rename_reason,
)
from server.fidelity.text import pyast
from server.fidelity.text.analysis import split_lines
from server.protocol.report import FidelityReport, Hunk

# Kinds no test can need: they change no behaviour.
SILENT_KINDS = frozenset({"docstring", "comment_only", "comment_removed", "formatting_only"})
# statuses of `server.fidelity.judge.ddmin` whose `unnecessary` is evidence: a passing subset was found
EVIDENT = frozenset({"minimal", "budget"})
REASON = "not requested: the tests pass without it, and the instruction asks for it neither by kind nor by name"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING = re.compile(r"\"([^\"\n]*)\"|'([^'\n]*)'")


class _EveryFunction(Collection[str | None]):
    """`tested` for a statement inside a needed unit: its function is one the tests need, whatever it is."""

    def __contains__(self, item: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str | None]:
        return iter(())

    def __len__(self) -> int:
        return 0


EVERY_FUNCTION: Collection[str | None] = _EveryFunction()


def evidence(status: str, needed: Sequence[int], unnecessary: Sequence[int]) -> frozenset[int]:
    """The units the tests do not need, when that says something: a passing subset was found and it is
    not empty (tests that pass on the original test nothing the edit does)."""
    return frozenset(unnecessary) if status in EVIDENT and needed else frozenset()


def asked_for(scope: Scope, facts: UnitFacts, introduced: Collection[str]) -> str | None:
    """Why the instruction asks for this unit by kind or by name, or None. `introduced`: identifiers on
    the unit's edited side that the original does not have."""
    for kind in facts.kinds:
        if kind == "rename":
            why = _rename_reason(scope, facts)
            if why:
                return why
            continue
        asked = kind in scope.kinds and kind not in NEVER_REQUESTED
        if (
            asked
            and (kind not in _SCOPED or _in_scope(scope, facts))
            and (kind != "defensive" or _raises_as_asked(scope, facts))
        ):
            return f"{kind.replace('_', ' ')} asked for by the instruction ({scope.kinds[kind]!r})"
    if facts.defines:
        extra, _ = unrequested_definitions(scope, facts)
        if not extra:
            return f"the instruction asks for `{facts.defines[0]}`"
    named = sorted(n for n in introduced if len(n) >= 3 and scope.mentions(n))
    if named:
        return f"the instruction speaks of `{named[0]}`"
    return None


def judge_with_tests(
    scope: Scope | None,
    facts: UnitFacts,
    verdict: Verdict,
    unneeded: bool,
    introduced: Collection[str],
    tested: Collection[str | None] = (),
) -> Verdict:
    """The instruction's verdict on one unit, with what the tests showed (`unneeded`: they pass without it;
    `tested`: the functions holding a unit the tests need)."""
    if verdict.flagged or not unneeded or scope is None or not scope.text.strip():
        return verdict
    if set(facts.kinds) <= SILENT_KINDS:
        return verdict
    if asked_for(scope, facts, introduced):
        return verdict
    if facts.function and facts.function not in tested and scope.mentions(facts.function.split(".")[-1]):
        return verdict  # the named target's change is untested: no evidence either way
    return Verdict(True, REASON, tuple(k for k in facts.kinds if k not in SILENT_KINDS) or ("logic",))


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# methods that change their object in place: `xs.append(x)` stores into `xs`
_MUTATORS = frozenset(
    {"append", "extend", "add", "update", "insert", "remove", "pop", "discard", "clear", "setdefault"}
    | {"appendleft", "extendleft", "sort", "reverse"}
)


def name_uses(tree: ast.AST) -> list[tuple[str, int, str]]:
    """(name, line, "load" | "store") for every plain name of `tree`; a name whose object a statement
    changes in place (`xs.append(x)`, `xs[i] = x`) is stored there, not read; `n += 1` does both."""
    out: list[tuple[str, int, str]] = []
    changed: set[int] = set()  # the names changed in place: a store, not a read
    for node in ast.walk(tree):
        base = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            base = node.func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            base = node.value
        elif isinstance(node, ast.AugAssign):
            base = node.target
            if isinstance(base, ast.Name):
                out.append((base.id, base.lineno, "load"))
        if isinstance(base, ast.Name):
            changed.add(id(base))
            out.append((base.id, base.lineno, "store"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and id(node) not in changed:
            out.append((node.id, node.lineno, "store" if isinstance(node.ctx, ast.Store | ast.Del) else "load"))
    return out


def _function_lines(tree: ast.AST, line: int) -> range | None:
    """The lines of the innermost function holding `line`."""
    best: range | None = None
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTIONS) and node.lineno <= line <= (node.end_lineno or node.lineno):
            span = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            if best is None or len(span) < len(best):
                best = span
    return best


def completes_kept(tree: ast.AST, piece: Collection[int], kept: Collection[int], new: Collection[int]) -> str | None:
    """Why the lines `piece` are part of the new code on the lines `kept` (the code the tests need), or None:
    inside one function, the piece is the only reader of a variable the kept code introduces (one that no
    line of the function outside the edit's `new` lines uses), or it changes such a variable that the kept
    code reads after it. A break on the new variable that the kept code reads anyway, or a new value
    nothing kept reads later, completes nothing."""
    if not piece:
        return None
    scope = _function_lines(tree, min(piece))
    if scope is None:
        return None
    uses = [(n, ln, how) for n, ln, how in name_uses(tree) if ln in scope]
    old = {n for n, ln, _ in uses if ln not in new and ln not in piece}
    last = max(piece)
    fresh = {n for n, ln, how in uses if how == "store" and ln in kept and ln not in piece and n not in old}
    for name in sorted(fresh):
        mine = {how for n, ln, how in uses if n == name and ln in piece}
        kept_loads = [ln for n, ln, how in uses if n == name and how == "load" and ln in kept and ln not in piece]
        if "load" in mine and not kept_loads:
            return f"the only code that reads `{name}`, which the needed change introduces"
        if "store" in mine and any(ln > last for ln in kept_loads):
            return f"it builds `{name}`, which the needed change introduces and reads"
    return None


def _string_words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for m in _STRING.finditer(text) for w in _NAME.findall(m.group(1) or m.group(2) or ""))


def known_words(original: str) -> tuple[frozenset[str], frozenset[str]]:
    """The original's words (lower case), and those of them inside its string literals."""
    return frozenset(n.lower() for n in _NAME.findall(original)), _string_words(original)


def introduced_names(
    hunk: Hunk, edited_lines: list[str], known: tuple[frozenset[str], frozenset[str]]
) -> frozenset[str]:
    """The words on the unit's edited lines that the original lacks, and the words inside its strings that
    no string of the original holds (a new token `"for"` where the code already loops with `for`);
    compared in lower case (`known`: `known_words(original)`)."""
    text = "".join(edited_lines[hunk.new_start_line - 1 : max(hunk.new_end_line, hunk.new_start_line - 1)])
    words, in_strings = known
    names = {n for n in _NAME.findall(text) if n.lower() not in words}
    strings = {m.group(1) or m.group(2) or "" for m in _STRING.finditer(text)}
    names.update(w for s in strings for w in _NAME.findall(s) if w.lower() not in in_strings)
    return frozenset(names)


def judge_units_with_tests(
    report: FidelityReport,
    instruction: str | None,
    unneeded: Collection[int],
    *,
    original: str,
    edited: str,
    words_of: str | None = None,
    tested: Collection[str | None] | None = None,
) -> list[Verdict]:
    """A verdict per unit: the instruction's (`flags.judged_units`), with the units in `unneeded` (the tests
    pass without them, `evidence`) judged by `judge_with_tests`. `words_of`: the text whose words count as
    known (default `original`); `tested`: the functions the tests need (default: those of the other units)."""
    scope, facts, verdicts = judged_units(report, instruction, original=original, edited=edited)
    if not unneeded or scope is None:
        return verdicts
    needed = [v for i, v in enumerate(verdicts) if i not in unneeded]
    if needed and all(v.flagged for v in needed):
        return verdicts  # the tests pass on unrequested changes alone: they do not test the request
    lines = split_lines(edited)
    known = known_words(original if words_of is None else words_of)
    if tested is None:
        tested = {f.function for i, f in enumerate(facts) if i not in unneeded}
    tree = _tree(edited) if report.language == "python" else None
    kept = {n for i, h in enumerate(report.hunks) if i not in unneeded for n in _new_side(h)}
    new = {n for h in report.hunks for n in _new_side(h)}
    out = []
    for i, (h, f, v) in enumerate(zip(report.hunks, facts, verdicts, strict=True)):
        if (
            i in unneeded
            and not slid(h, report.hunks, lines)
            and not (tree is not None and completes_kept(tree, _new_side(h), kept, new))
        ):
            v = judge_with_tests(scope, f, v, True, introduced_names(h, lines, known), tested)
        out.append(v)
    return out


def _inserts(hunk: Hunk) -> bool:
    return hunk.end_line < hunk.start_line and hunk.new_end_line >= hunk.new_start_line


def slid(hunk: Hunk, hunks: Sequence[Hunk], edited_lines: Sequence[str]) -> bool:
    """A pure insertion at the head of an inserted block whose first lines repeat the lines right after
    the block (or at its tail, repeating the lines right before it): the line diff could as well have
    inserted those, so the unit is where the diff cut, not a change of its own (a new copy of a function
    cut off at `return x`, which the original's next line repeats). Without it the text is the same as
    without the original's lines, so the tests' verdict is on those."""
    if not _inserts(hunk):
        return False
    block = [h for h in hunks if _inserts(h) and h.start_line == hunk.start_line]
    first, last = min(h.new_start_line for h in block), max(h.new_end_line for h in block)
    if sum(h.new_end_line - h.new_start_line + 1 for h in block) != last - first + 1:
        return False  # not one run of lines
    text = [ln.rstrip() for ln in edited_lines]
    inserted = text[first - 1 : last]
    head = 0
    while head < len(inserted) and last + head < len(text) and inserted[head] == text[last + head]:
        head += 1  # the block's first `head` lines repeat the lines after it
    tail = 0
    while tail < len(inserted) and first - 2 - tail >= 0 and inserted[-1 - tail] == text[first - 2 - tail]:
        tail += 1  # its last `tail` lines repeat the lines before it
    mine = range(hunk.new_start_line, hunk.new_end_line + 1)
    in_head = mine[-1] < first + head
    in_tail = mine[0] > last - tail
    return any(inserted[n - first].strip() for n in mine) and (in_head or in_tail)


def _new_side(hunk: Hunk) -> range:
    return range(hunk.new_start_line, hunk.new_end_line + 1)


def _tree(text: str) -> ast.Module | None:
    try:
        return pyast.parse(text, quiet=True)
    except (SyntaxError, ValueError, RecursionError):
        return None
