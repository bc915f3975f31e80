"""Applying corruptions to the first function of a program, and undoing them (the gold patch).

`functions="all"` takes targets from every function instead (each walked without the functions nested
in it, which are walked on their own): class-based code such as CanItEdit's often starts with an
`__init__` that offers nothing to corrupt.

`corrupt` picks how many corruptions (1..N), the order in which families are tried and the target of
each from a `Chooser`, so one seed and key always give the same program. A corruption is kept only if
it changes the code and no function signature; the caller then keeps the program only if its tests
fail. Each `Corruption` records where it was made (a path of AST fields from the function) and the
target's text before and after, which is all `invert` needs to put the original back.
"""

from __future__ import annotations

import ast
import copy
import difflib
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Literal

import msgspec

from benchmark.build.corruptions.choice import Chooser
from benchmark.build.corruptions.families import Family, Steps
from server.fidelity.text import pyast

Function = ast.FunctionDef | ast.AsyncFunctionDef


class CorruptionError(Exception):
    """A program that cannot be corrupted (does not parse, has no function, no family applies)."""


class Corruption(msgspec.Struct, frozen=True, kw_only=True):
    family: str
    line: int | None  # in the original program
    function: int = 0  # which function (index in `ast.walk` order; 0: the first)
    path: list[tuple[str, int | None]]  # AST fields from that function to the target
    kind: Literal["expr", "stmt"]
    before: str  # the target, `ast.unparse`d
    after: str


class Corrupted(msgspec.Struct, kw_only=True):
    source: str  # the corrupted program, `ast.unparse`d (comments dropped, as in the paper's data)
    corruptions: list[Corruption]
    not_applicable: list[str] = []  # families tried that have no target in the function
    rejected: list[str] = []  # "family: why" for mutations that were made and thrown away


def parse(source: str) -> ast.Module:
    try:
        return pyast.parse(source, quiet=True)  # invalid escape sequences in the program are not ours
    except (SyntaxError, ValueError) as exc:
        raise CorruptionError(f"the solution does not parse: {exc}") from None


def first_function(tree: ast.AST) -> Function | None:
    """The first function in `ast.walk` order, as the paper's corruptor and its body slicing take it."""
    return next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def all_functions(tree: ast.AST) -> list[Function]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def signatures(tree: ast.AST) -> list[str]:
    """Every function's and lambda's name, parameters (defaults included) and return annotation."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(f"{node.name}{ast.dump(node.args)}->{ast.dump(node.returns) if node.returns else ''}")
        elif isinstance(node, ast.Lambda):
            out.append(f"lambda{ast.dump(node.args)}")
    return out


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def walk_body(func: Function, *, nested: bool = True) -> Iterator[tuple[Steps, ast.AST]]:
    """(path, node) over the function's body in `ast.walk` (breadth-first) order; the signature is not
    visited, nor (nested=False) the functions and classes defined inside it."""
    queue: deque[tuple[Steps, ast.AST]] = deque(((("body", i),), stmt) for i, stmt in enumerate(func.body))
    while queue:
        path, node = queue.popleft()
        if not nested and isinstance(node, _SCOPES):
            continue
        yield path, node
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                queue.extend((path + ((field, i),), item) for i, item in enumerate(value) if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                queue.append((path + ((field, None),), value))


def node_at(root: ast.AST, path: Sequence[tuple[str, int | None]]) -> ast.AST:
    node: ast.AST = root
    for field, index in path:
        value = getattr(node, field)
        node = value if index is None else value[index]
    return node


def replace_at(root: ast.AST, path: Sequence[tuple[str, int | None]], new: ast.AST) -> None:
    parent = node_at(root, path[:-1])
    field, index = path[-1]
    if index is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[index] = new


def _overlaps(a: Steps, b: Steps) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def targets(
    func: Function, family: Family, taken: Sequence[Steps] = (), *, nested: bool = True
) -> list[tuple[Steps, ast.AST]]:
    """The family's targets in the function, minus those inside (or around) an earlier corruption."""
    found = []
    for path, node in walk_body(func, nested=nested):
        for steps, target in family.find(node):
            full = path + steps
            if not any(_overlaps(full, t) for t in taken):
                found.append((full, target))
    return found


def corrupt(
    source: str,
    families: Sequence[Family],
    *,
    max_corruptions: int,
    chooser: Chooser,
    functions: Literal["first", "all"] = "first",
) -> Corrupted:
    """1 to `max_corruptions` corruptions of the first function (or of any function), families tried in a
    chosen order."""
    if max_corruptions < 1:
        raise ValueError("max_corruptions must be >= 1")
    if functions not in ("first", "all"):
        raise ValueError("functions must be 'first' or 'all'")
    if not families:
        raise ValueError("no corruption family given")
    tree = parse(source)
    if first_function(tree) is None:
        raise CorruptionError("the solution has no function definition")
    wanted = 1 + chooser.below(max_corruptions)
    original_signatures = signatures(tree)
    applied: list[Corruption] = []
    taken: dict[int, list[Steps]] = {}
    not_applicable: list[str] = []
    rejected: list[str] = []
    for family in chooser.shuffled(families):
        if len(applied) == wanted:
            break
        funcs = all_functions(tree)
        scope = range(len(funcs)) if functions == "all" else range(1)
        found = [
            (fi, path, target)
            for fi in scope
            for path, target in targets(funcs[fi], family, taken.get(fi, ()), nested=functions == "first")
        ]
        if not found:
            not_applicable.append(family.name)
            continue
        for fi, path, target in chooser.shuffled(found):  # the first target that yields a kept corruption
            new = family.mutate(copy.deepcopy(target), chooser)
            if new is None:
                continue
            before, after = ast.unparse(target), ast.unparse(new)
            if before == after:
                continue
            candidate = copy.deepcopy(tree)
            replace_at(all_functions(candidate)[fi], path, new)
            if signatures(candidate) != original_signatures:
                rejected.append(f"{family.name}: changes a function signature")
                continue
            try:
                pyast.parse(ast.unparse(candidate))
            except SyntaxError as exc:  # never expected: a mutation must stay valid Python
                rejected.append(f"{family.name}: does not unparse to valid Python ({exc})")
                continue
            applied.append(
                Corruption(
                    family=family.name,
                    line=getattr(target, "lineno", None),
                    function=fi,
                    path=list(path),
                    kind="stmt" if isinstance(target, ast.stmt) else "expr",
                    before=before,
                    after=after,
                )
            )
            taken.setdefault(fi, []).append(path)
            tree = candidate
            break
        else:
            rejected.append(f"{family.name}: no target gives a kept corruption")
    if not applied:
        tried = ", ".join(not_applicable) or "none"
        where = "the first function" if functions == "first" else "any function"
        raise CorruptionError(
            f"no corruption family applies to {where} (no target for: {tried}"
            + (f"; rejected: {'; '.join(rejected)}" if rejected else "")
            + ")"
        )
    return Corrupted(source=ast.unparse(tree), corruptions=applied, not_applicable=not_applicable, rejected=rejected)


class InverseError(Exception):
    pass


def _fragment(text: str, kind: str) -> ast.AST:
    if kind == "stmt":
        return pyast.parse(text).body[0]
    return pyast.parse(text, mode="eval").body


def invert(corrupted: str, corruptions: Sequence[Corruption]) -> str:
    """The gold patch applied: each corruption undone, last first; `ast.unparse` of the original program."""
    tree = pyast.parse(corrupted)
    funcs = all_functions(tree)
    for c in reversed(corruptions):
        if c.function >= len(funcs):
            raise InverseError(f"{c.family}: the corrupted program has no function #{c.function}")
        func = funcs[c.function]
        try:
            node = node_at(func, c.path)
        except (AttributeError, IndexError, TypeError) as exc:
            raise InverseError(f"{c.family}: no node at {c.path}: {exc}") from None
        if ast.unparse(node) != c.after:
            raise InverseError(f"{c.family}: expected {c.after!r} at line {c.line}, found {ast.unparse(node)!r}")
        replace_at(func, c.path, _fragment(c.before, c.kind))
    return ast.unparse(tree)


def gold_patch(corrupted: str, fixed: str) -> str:
    """The inverse as a unified diff of the corrupted program against the fixed one."""
    return "".join(
        difflib.unified_diff(
            corrupted.splitlines(keepends=True), fixed.splitlines(keepends=True), "corrupted.py", "fixed.py"
        )
    )
