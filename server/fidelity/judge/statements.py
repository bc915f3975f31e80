"""The new statements of an edit, judged one by one (instruction only; Python).

A change unit is the smallest region that can be accepted or reverted on its own, so when a model replaces
three lines with seven, the requested fix and an extra statement are one unit: flagging the unit would
revert the fix too. The reader still wants to see the extra statement. This module finds the statements
whose lines are all new (`new_statements`) and judges those whose job can be read off the code:

- a value computed and never read (`dead_store`): an assignment to a local that no later code reads
  (flow-sensitive def-use chains from beniget: a store at the end of a loop body that the next turn
  overwrites first is dead too). Never requested, with or without an instruction.
- an early exit or a raise (`guard`): `if ...: return/continue/break` that leaves a function or loop the
  original has, when its condition tests an input case (`instruction.GUARD_TESTS`: None, a type,
  emptiness, a range, or a tolerance), and a `raise` anywhere. An exit on the code's own condition
  (`if i == j: return`) is logic the words cannot judge and is left alone. Requested when the
  instruction asks for validation or errors (and the exception matches), speaks of the case the
  condition tests ("empty", "negative"), names what the condition tests (an identifier in code, a string
  or number it quotes), speaks of stopping or skipping, or asks to rewrite the code; when the guard is
  the whole change (then it is the fix); and a raise of an exception the original already raises
  follows the code's own convention.
- an early `return` of the value the function returns anyway, as the edit's only change in a function
  the instruction does not name (`shortcut`): code skipped on the code's own condition, not the fix.
- an assertion that cannot fail (`vacuous.always_true`: `assert all(a == b for ... if a == b)`): it checks
  nothing, so it is not the check any instruction asks for, even one that asks for assertions.

Each finding is a `StatementFlag` on the unit that holds it, with its own lines on the edited side. Pure.
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from collections.abc import Collection, Iterator, Sequence

import beniget
import gast
import msgspec

from server.fidelity.judge.instruction import Scope, guard_tests
from server.fidelity.judge.vacuous import always_true
from server.fidelity.text import pyast
from server.fidelity.text.analysis import split_lines
from server.protocol.report import FidelityReport

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_EXITS = (ast.Return, ast.Break, ast.Continue, ast.Raise)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# kinds of a unit whose statements are judged here: code, not a docstring, comment or layout unit
_CODE_KINDS = frozenset({"logic", "defensive"})
# the instruction speaks of stopping or skipping: an early exit is what it asks for
EXIT_WORDS = re.compile(
    r"\b(?:stop\w*|terminat\w*|halt\w*|exit\w*|break\w*|early|skip\w*|abort\w*|short[- ]circuit\w*|bail\w*"
    r"|ignor\w*|as soon as)\b",
    re.IGNORECASE,
)
_REWRITES = frozenset({"refactor", "rewrite", "translate"})


class StatementFlag(msgspec.Struct, frozen=True):
    """A new statement nobody asked for, inside unit `unit`: its lines of the edited text (1-based,
    inclusive), the kind it is flagged for and why."""

    unit: int
    start_line: int
    end_line: int
    kinds: tuple[str, ...]
    reason: str


def new_lines(original: str, text: str) -> set[int]:
    """The 1-based lines of `text` that are not lines of `original` (by a line diff)."""
    a, b = split_lines(original), split_lines(text)
    kept: set[int] = set()
    for block in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        kept.update(range(block.b + 1, block.b + block.size + 1))
    return set(range(1, len(b) + 1)) - kept


def is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


class NewStatement(msgspec.Struct, frozen=True):
    """A statement all of whose lines are new, with what is around it: the qualified name of its function
    or class (dotted, "" at module level) and the innermost loop it sits in inside that function."""

    node: ast.stmt
    qualname: str
    loop: ast.stmt | None


def new_statements(tree: ast.Module, fresh: set[int]) -> Iterator[NewStatement]:
    """Every statement of `tree` all of whose lines are in `fresh`, definitions and docstrings excepted,
    outer first."""

    def visit(body: list[ast.stmt], around: str, loop: ast.stmt | None) -> Iterator[NewStatement]:
        for node in body:
            if isinstance(node, _DEFINITIONS):
                yield from visit(node.body, f"{around}.{node.name}" if around else node.name, None)
                continue
            lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            if not is_docstring(node) and all(n in fresh for n in lines):
                yield NewStatement(node, around, loop)
            inner_loop = node if isinstance(node, _LOOPS) else loop
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(node, field, None)
                if not isinstance(inner, list):
                    continue
                blocks = [getattr(h, "body", []) for h in inner] if field in ("handlers", "cases") else [inner]
                for block in blocks:
                    # a loop's `else` runs after the loop: a `break` there leaves an outer loop
                    yield from visit(block, around, loop if field == "orelse" and node is inner_loop else inner_loop)

    yield from visit(tree.body, "", None)


def _qualnames(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, _DEFINITIONS):
                if isinstance(node, _FUNCTIONS):
                    out.setdefault(prefix + node.name, node)
                visit(node.body, prefix + node.name + ".")
            else:
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        visit(inner, prefix)

    visit(tree.body, "")
    return out


class _Chains(beniget.DefUseChains):
    def warn(self, msg: str, node: object) -> None:
        pass  # names bound outside the function (imports, globals) are not ours to report


def dead_stores(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, set[str]]:
    """Line -> the local names stored there that no code reads afterwards (beniget's def-use chains over
    the function alone: locals do not depend on the rest of the module). Empty when the function reads
    its frame dynamically (`locals()`, `eval`, `exec`, `vars()`), where no store is provably dead."""
    declared: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC:
            return {}
    try:
        module = gast.ast_to_gast(ast.Module(body=[function], type_ignores=[]))
        chains = _Chains()
        chains.visit(module)
    except Exception:  # noqa: BLE001 - a library's failure on odd code means no finding, never a wrong one
        return {}
    out: dict[int, set[str]] = {}
    fn = module.body[0]
    for d in chains.locals.get(fn, ()):
        node = d.node
        stored = isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store)
        line = getattr(node, "lineno", None)  # gast makes some names of its own (no position): not a store of the code
        if stored and line is not None and not d.users() and d.name() not in declared and not d.name().startswith("_"):
            out.setdefault(line, set()).add(d.name())
    return out


_DYNAMIC = frozenset({"locals", "eval", "exec", "vars", "globals"})


def _stored_names(node: ast.Assign) -> list[str]:
    return [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _guard(node: ast.stmt) -> tuple[ast.expr | None, ast.stmt] | None:
    """(condition, exit) of an early exit or raise: `if c: [one statement] exit` without an else, or a
    bare `raise`; None otherwise."""
    if isinstance(node, ast.Raise):
        return None, node
    if isinstance(node, ast.If) and not node.orelse and len(node.body) <= 2 and isinstance(node.body[-1], _EXITS):
        return node.test, node.body[-1]
    return None


def shortcut(
    exit_node: ast.stmt,
    function: ast.FunctionDef | ast.AsyncFunctionDef | None,
    fresh: set[int],
    lines: tuple[int, int],
) -> bool:
    """An early `return` of the very value the function's last statement returns, in a function whose only
    new lines are the guard's (`lines`): it skips code on a condition of the code's own, an optimisation or a
    behaviour change nobody asked for, not a fix (the function's result is otherwise the original's)."""
    if function is None or not isinstance(exit_node, ast.Return) or exit_node.value is None:
        return False
    last = function.body[-1]
    if not isinstance(last, ast.Return) or last.value is None or ast.dump(last.value) != ast.dump(exit_node.value):
        return False
    span = range(function.lineno, (function.end_lineno or function.lineno) + 1)
    return all(lines[0] <= n <= lines[1] for n in fresh if n in span)


def _own_condition(condition: ast.expr | None, source: str) -> bool:
    """A condition on the code's own values: no input case (`validation_cases`) that words could ask for."""
    return condition is not None and not validation_cases(ast.get_source_segment(source, condition) or "")


def _raised(node: ast.stmt) -> str | None:
    """The exception class a `raise` names (last part of a dotted name), None for a bare re-raise."""
    if not isinstance(node, ast.Raise) or node.exc is None:
        return None
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    if isinstance(exc, ast.Attribute):
        return exc.attr
    return exc.id if isinstance(exc, ast.Name) else None


def _original_raises(original: str) -> frozenset[str]:
    return frozenset(m.group(1).split(".")[-1] for m in re.finditer(r"\braise\s+([A-Za-z_][\w.]*)", original))


def _named_by_condition(scope: Scope, condition: ast.expr | None) -> str | None:
    """What in the guard's condition the instruction names: an identifier written as code, a string or a
    number it quotes (not 0 or 1)."""
    if condition is None:
        return None
    for node in ast.walk(condition):
        if isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if scope.named_strongly(name):
                return f"`{name}`"
        if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
            value = node.value
            if isinstance(value, str) and value.strip() and _quoted(value, scope.text):
                return repr(value)
            if (
                isinstance(value, int | float)
                and value not in (0, 1, -1)
                and re.search(rf"(?<![\w.]){value}\b", scope.text)
            ):
                return str(value)
    return None


def _quoted(value: str, text: str) -> bool:
    return any(f"{q}{value}{q}" in text for q in ("'", '"', "`")) or (len(value) >= 3 and value in text)


def validation_cases(test: str) -> frozenset[str]:
    """The input cases a condition tests (`instruction.GUARD_TESTS`: none, type, empty, range), a
    closeness or tolerance test counting as a range."""
    cases = guard_tests(f"if {test}:")
    return cases | {"range"} if _TOLERANCE.search(test) else cases


_TOLERANCE = re.compile(r"\b(?:is|all)close\s*\(|[<>]=?\s*(?:self\.)?\w*(?:tol|eps|epsilon|threshold|convergence)\b")
# "check that the matrices are the same size" asks for a check as much as "validate" does
_CHECK_WORDS = re.compile(r"\bcheck(?:s|ing)?\s+(?:that|whether|if)\b|\bverif(?:y|ies|ying)\b", re.IGNORECASE)


def _guard_requested(
    scope: Scope, condition: ast.expr | None, exit_node: ast.stmt, source: str, original_raises: frozenset[str]
) -> bool:
    """Whether the instruction asks for this guard. An exit whose condition is no input check (`if i == j:
    return`) is the code's own logic, which the words cannot judge: it counts as requested."""
    if scope.broad in _REWRITES:
        return True
    test = (ast.get_source_segment(source, condition) or "") if condition is not None else ""
    cases = validation_cases(test) if test else frozenset()
    if isinstance(exit_node, ast.Raise):
        raised = _raised(exit_node)
        if raised is not None and (raised in original_raises or raised in scope.exceptions):
            return True
        if scope.no_raise:
            return False
        if scope.exceptions and raised is not None:
            return False  # another exception than the ones it names
    elif not cases or EXIT_WORDS.search(scope.text):
        return True
    if "defensive" in scope.kinds or scope.general_validation or _CHECK_WORDS.search(scope.text):
        return True
    return bool(cases & scope.cases) or _named_by_condition(scope, condition) is not None


def _describe(condition: ast.expr | None, exit_node: ast.stmt, source: str) -> str:
    what = (ast.get_source_segment(source, exit_node) or type(exit_node).__name__.lower()).split("\n")[0]
    if condition is None:
        return f"`{what}`"
    test = (ast.get_source_segment(source, condition) or "").split("\n")[0]
    test = test if len(test) <= 60 else test[:57] + "..."
    return f"`{what}` when `{test}`"


def statement_flags(
    report: FidelityReport,
    scope: Scope | None,
    *,
    original: str | None,
    edited: str | None,
    flagged: Sequence[bool],
) -> list[StatementFlag]:
    """The new statements nobody asked for inside units not flagged already, on the edited side. `scope`
    None (an observed change, no instruction): only values never read."""
    if original is None or edited is None or report.language != "python" or not report.hunks:
        return []
    try:
        tree = pyast.parse(edited, quiet=True)
        before = pyast.parse(original, quiet=True)
    except (SyntaxError, ValueError, RecursionError):
        return []
    units = [
        (k, h.new_start_line, h.new_end_line)
        for k, h in enumerate(report.hunks)
        if not (k < len(flagged) and flagged[k]) and _CODE_KINDS & set(h.kinds) and h.new_end_line >= h.new_start_line
    ]
    if not units:
        return []
    fresh = new_lines(original, edited)
    original_lines = split_lines(original)
    functions = _qualnames(tree)
    existing = _qualnames(before)
    raises = _original_raises(original)
    whole = _only_change(report, fresh, split_lines(edited))
    dead: dict[str, dict[int, set[str]]] = {}
    before_dead: dict[str, set[str]] = {}  # per function, the names the original already stores and never reads
    out: list[StatementFlag] = []
    taken: set[int] = set()  # lines of statements flagged already (a guard inside a flagged guard)
    for found in new_statements(tree, fresh):
        node, qualname = found.node, found.qualname
        first, last = node.lineno, node.end_lineno or node.lineno
        unit = next((k for k, a, b in units if a <= first <= b), None)
        if unit is None or first in taken:
            continue
        reason: str | None = None
        kind = "added_code"
        if isinstance(node, ast.Assign) and qualname in functions:
            if qualname not in dead:
                dead[qualname] = dead_stores(functions[qualname])
                before_dead[qualname] = (
                    {n for names in dead_stores(existing[qualname]).values() for n in names}
                    if qualname in existing
                    else set()
                )
            names = _stored_names(node)
            # a store the original function already never read (the fix changed its value) is not the edit's
            if names and all(n in dead[qualname].get(first, ()) and n not in before_dead[qualname] for n in names):
                listed = ", ".join(f"`{n}`" for n in dict.fromkeys(names))
                reason = f"not requested: {listed} is assigned here and never read afterwards"
        elif (
            qualname in existing
            and qualname in functions
            and (twin := repeated_block(node, functions[qualname], fresh))
        ):
            kind = "added_code"
            reason = f"not requested: repeats the block at line {twin}, which stays: the code now does it twice"
        elif (
            scope is not None
            and qualname in functions
            and qualname not in existing
            and (kept := returned_state(node, functions[qualname]))
            and not RESULT_WORDS.search(scope.text)
        ):
            kind = "added_code"
            reason = (
                f"not requested: returns `self.{kept}`, which it updates in place; the instruction asks for no result"
            )
        elif (
            scope is not None
            and qualname in existing
            and (conversion := dropped_conversion(node, _old_side(report, unit, original_lines)))
            and not any(w.startswith(conversion[:3]) for w in scope.words)
        ):
            kind = "logic"
            reason = (
                f"not requested: drops the `{conversion}(...)` around the value, which the instruction does not ask for"
            )
        elif scope is not None and scope.text.strip() and isinstance(node, ast.Assert) and always_true(node.test):
            kind = "defensive"
            test = " ".join((ast.get_source_segment(edited, node.test) or "").split())
            reason = f"not requested: asserts `{test[:57] + '...' if len(test) > 60 else test}`, which holds whatever the input"
        elif scope is not None and scope.text.strip() and (guard := _guard(node)) is not None:
            condition, exit_node = guard
            is_fix = bool(whole) and whole <= set(range(first, last + 1))  # the guard is the whole change
            judged = _exits_old_code(exit_node, found, existing, fresh) and not is_fix
            if judged and not _guard_requested(scope, condition, exit_node, edited, raises):
                kind = "defensive"
                what = _describe(condition, exit_node, edited)
                exc = _raised(exit_node)
                reason = (
                    f"not requested: raises `{exc}` ({what}), which the instruction does not ask for"
                    if isinstance(exit_node, ast.Raise) and exc
                    else f"not requested: an early exit {what} the instruction does not ask for"
                )
            elif (
                judged
                and _own_condition(condition, edited)
                and shortcut(exit_node, functions.get(qualname), fresh, (first, last))
                and not (
                    EXIT_WORDS.search(scope.text) or scope.broad in _REWRITES or scope.mentions(qualname.split(".")[-1])
                )
            ):
                kind = "logic"
                name = qualname.split(".")[-1]
                reason = (
                    f"not requested: a shortcut {_describe(condition, exit_node, edited)} in `{name}`, the edit's "
                    "only change there, returning what the function returns anyway"
                )
        if reason is not None:
            out.append(StatementFlag(unit, first, last, (kind,), reason))
            taken.update(range(first, last + 1))
    return out


# the instruction speaks of a result: a new function's `return` may be what it asks for
RESULT_WORDS = re.compile(r"\b(?:return\w*|result\w*|output\w*|yield\w*|give\w* back|chain\w*)\b", re.IGNORECASE)


def returned_state(node: ast.stmt, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The attribute a new method returns (`return self.table`) after updating it in place (`self.table[k] =
    v`, `self.table.append(v)`), or None: the update is the method's work, the result an extra."""
    if not (
        isinstance(node, ast.Return)
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "self"
        and function.body
        and function.body[-1] is node
    ):
        return None
    attr = node.value.attr

    def is_state(e: ast.expr) -> bool:
        while isinstance(e, ast.Subscript):
            e = e.value
        return (
            isinstance(e, ast.Attribute) and e.attr == attr and isinstance(e.value, ast.Name) and e.value.id == "self"
        )

    for n in ast.walk(function):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
        if any(isinstance(t, ast.Subscript) and is_state(t) for t in targets):
            return attr
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and is_state(n.func.value):
            return attr
    return None


_CONVERSIONS = frozenset({"int", "float", "str", "bool", "list", "tuple", "set", "frozenset", "dict"})


def _old_side(report: FidelityReport, unit: int, lines: list[str]) -> str:
    h = report.hunks[unit]
    return "".join(lines[h.start_line - 1 : h.end_line]) if h.end_line >= h.start_line else ""


def dropped_conversion(node: ast.stmt, old: str) -> str | None:
    """The conversion (`int(...)`) the unit's one original statement wraps its value in and the new statement
    (a `return` or an assignment to the same target, its value otherwise the same call or expression kind)
    no longer has, or None. Dropping it changes the value's type wherever the inner value is not already one."""
    value = getattr(node, "value", None)
    if not isinstance(node, ast.Return | ast.Assign) or value is None or not old.strip():
        return None
    try:
        before = pyast.parse(textwrap.dedent(old), quiet=True).body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if len(before) != 1 or type(before[0]) is not type(node):
        return None
    if isinstance(node, ast.Assign) and [ast.dump(t) for t in getattr(before[0], "targets", [])] != [
        ast.dump(t) for t in node.targets
    ]:
        return None  # another assignment
    was = getattr(before[0], "value", None)
    if not (
        isinstance(was, ast.Call)
        and isinstance(was.func, ast.Name)
        and was.func.id in _CONVERSIONS
        and len(was.args) == 1
        and not was.keywords
    ):
        return None
    inner = was.args[0]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == was.func.id:
        return None  # still converted
    if type(inner) is not type(value):
        return None  # another expression, not the same one unwrapped
    if isinstance(inner, ast.Call) and isinstance(value, ast.Call) and ast.dump(inner.func) != ast.dump(value.func):
        return None  # another call
    return was.func.id


def _head(node: ast.stmt) -> str | None:
    """What a block statement runs on: an `if`'s or `while`'s test, a `for`'s target and iterable."""
    if isinstance(node, ast.If | ast.While):
        return ast.dump(node.test)
    if isinstance(node, ast.For | ast.AsyncFor):
        return ast.dump(node.target) + ast.dump(node.iter)
    return None


REPEATED_STATEMENTS = 2  # copied statements that make a new block a repeat of a kept one


def repeated_block(node: ast.stmt, function: ast.FunctionDef | ast.AsyncFunctionDef, fresh: set[int]) -> int | None:
    """The line of a block of the original that a new block repeats, or None: the same head (`if`/`while`
    test, `for` target and iterable) and at least two of its statements, with the original block still
    there (its head line kept; only its kept statements count). The code then does the work twice."""
    head = _head(node)
    if head is None or not function.lineno <= node.lineno <= (function.end_lineno or function.lineno):
        return None  # not a block, or in another definition of the same name (a redefinition)
    body = [ast.dump(s) for s in getattr(node, "body", [])]
    for other in ast.walk(function):
        if other is node or not isinstance(other, ast.stmt) or other.lineno in fresh or _head(other) != head:
            continue
        theirs = {ast.dump(s) for s in ast.walk(other) if isinstance(s, ast.stmt) and s.lineno not in fresh}
        copied = sum(1 for d in body if d in theirs)
        if copied >= REPEATED_STATEMENTS and 2 * copied >= len(body):
            return other.lineno
    return None


def _exits_old_code(exit_node: ast.stmt, found: NewStatement, existing: Collection[str], fresh: set[int]) -> bool:
    """A raise anywhere; a `break`/`continue` that leaves a loop the original has (its header line is not
    new); a `return` that leaves a function the original has. An exit of new code is its own logic."""
    if isinstance(exit_node, ast.Raise):
        return True
    if isinstance(exit_node, ast.Return):
        return found.qualname in existing
    return found.loop is not None and found.loop.lineno not in fresh and found.qualname in existing


def _only_change(report: FidelityReport, fresh: set[int], lines: list[str]) -> set[int]:
    """The new code lines of the edit's one code change when it is a single unit that only inserts lines
    (then a guard that holds them all is the fix itself); empty otherwise."""
    code = [h for h in report.hunks if _CODE_KINDS & set(h.kinds) or {"deletion", "signature_change"} & set(h.kinds)]
    if len(code) != 1 or code[0].end_line >= code[0].start_line:  # several changes, or code replaced
        return set()
    h = code[0]
    return {
        n
        for n in range(h.new_start_line, h.new_end_line + 1)
        if n in fresh and n <= len(lines) and lines[n - 1].strip() and not lines[n - 1].lstrip().startswith("#")
    }
