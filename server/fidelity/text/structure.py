"""What the unit classifier needs to know about a module's shape, from one pass over its AST."""

from __future__ import annotations

import ast
from typing import Any, NamedTuple

from server.fidelity.text.complexity import paper_cognitive


class FunctionInfo(NamedTuple):  # a tuple: cheap to build by the thousand when chunks are joined
    qualname: str
    start: int  # first line, decorators included
    def_line: int
    end: int
    signature_end: int  # last line of the signature (the line before the body)
    signature: str  # decorators, name, parameters and return annotation, normalised
    cognitive: int  # the paper's cognitive complexity of the function alone


def _function_signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    decorators = ",".join(ast.unparse(d) for d in node.decorator_list)
    returns = ast.unparse(node.returns) if node.returns else ""
    kind = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"@{decorators} {kind} {node.name}({ast.unparse(node.args)}) -> {returns}"


def is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _check_kind(test: ast.expr) -> str | None:
    """What an input check inspects (a type, None-ness, emptiness, attributes); None if it is no such check."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("isinstance", "issubclass", "type"):
                return "type"
            if node.func.id in ("hasattr", "callable"):
                return "attributes"
            if node.func.id == "len":
                return "length"
        if isinstance(node, ast.Compare) and any(
            isinstance(c, ast.Constant) and c.value is None for c in node.comparators
        ):
            return "None"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, ast.Name):
            return "emptiness"
    return None


def _guard_kind(test: ast.expr, body: list[ast.stmt]) -> str | None:
    first = body[0]
    if isinstance(first, ast.Raise):
        return "a raise on invalid input"
    if isinstance(first, ast.Return | ast.Continue):
        what = _check_kind(test)
        if what:
            return f"an early exit on {what}"
    return None


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)


class Structure:
    """Functions, docstrings, imports and input guards, with 1-based line ranges.

    Only statements are visited (expressions hold none of these), which keeps this pass cheap.
    """

    def __init__(self) -> None:
        self.functions: list[FunctionInfo] = []
        self.docstrings: list[tuple[int, int]] = []
        self.imports: list[tuple[int, int]] = []
        self.guards: list[tuple[int, int, str]] = []  # (first line, last line, description)

    def visit_module(self, stmts: list[ast.stmt], *, first: bool) -> Structure:
        if first and stmts and is_docstring(stmts[0]):
            self._docstring(stmts[0])
        self._block(stmts, ())
        return self

    def _docstring(self, node: ast.stmt) -> None:
        self.docstrings.append((node.lineno, node.end_lineno or node.lineno))

    def _block(self, stmts: list[ast.stmt], scope: tuple[str, ...]) -> None:
        node: Any  # dispatched on its exact class, `kind`, which mypy cannot narrow through
        for node in stmts:
            kind = type(node)
            if kind in _FUNCTIONS:
                self._function(node, scope)
            elif kind is ast.ClassDef:
                if node.body and is_docstring(node.body[0]):
                    self._docstring(node.body[0])
                self._block(node.body, (*scope, node.name))
            elif kind is ast.Import or kind is ast.ImportFrom:
                self.imports.append((node.lineno, node.end_lineno or node.lineno))
            else:
                if kind is ast.If:
                    what = _guard_kind(node.test, node.body)
                    if what:
                        self.guards.append((node.lineno, node.body[0].end_lineno or node.lineno, what))
                elif kind in _TRY and node.handlers:
                    # the `try:` line and the handlers, not the body: a change inside the body is its own
                    self.guards.append((node.lineno, node.lineno, "a try/except"))
                    for handler in node.handlers:
                        self.guards.append((handler.lineno, handler.end_lineno or handler.lineno, "a try/except"))
                elif kind is ast.Assert:
                    what = _check_kind(node.test)
                    if what:
                        self.guards.append((node.lineno, node.end_lineno or node.lineno, f"an assert on {what}"))
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(node, field, None)
                    if block:
                        self._block(block, scope)
                for handler in getattr(node, "handlers", ()):
                    self._block(handler.body, scope)
                for case in getattr(node, "cases", ()):
                    self._block(case.body, scope)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: tuple[str, ...]) -> None:
        self.functions.append(
            FunctionInfo(
                qualname=".".join((*scope, node.name)),
                start=min([node.lineno, *(d.lineno for d in node.decorator_list)]),
                def_line=node.lineno,
                end=node.end_lineno or node.lineno,
                signature_end=max(node.lineno, node.body[0].lineno - 1),
                signature=_function_signature(node),
                cognitive=paper_cognitive(node),
            )
        )
        if node.body and is_docstring(node.body[0]):
            self._docstring(node.body[0])
        self._block(node.body, (*scope, node.name))

    def extend_shifted(self, other: Structure, offset: int) -> None:
        """Add `other`'s facts with every line moved down by `offset`."""
        if not offset:
            self.functions.extend(other.functions)
            self.docstrings.extend(other.docstrings)
            self.imports.extend(other.imports)
            self.guards.extend(other.guards)
            return
        self.functions.extend(
            FunctionInfo(
                f.qualname,
                f.start + offset,
                f.def_line + offset,
                f.end + offset,
                f.signature_end + offset,
                f.signature,
                f.cognitive,
            )
            for f in other.functions
        )
        self.docstrings.extend((a + offset, b + offset) for a, b in other.docstrings)
        self.imports.extend((a + offset, b + offset) for a, b in other.imports)
        self.guards.extend((a + offset, b + offset, w) for a, b, w in other.guards)


def bound_names(stmts: list[ast.stmt]) -> set[str]:
    """Names the code binds: definitions, parameters, assignment targets, imports, attributes it sets."""
    bound: set[str] = set()
    node: Any  # dispatched on its exact class, `kind`, which mypy cannot narrow through
    for node in ast.walk(ast.Module(body=stmts, type_ignores=[])):
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:
                bound.add(node.id)
        elif kind is ast.arg:
            bound.add(node.arg)
        elif kind in _FUNCTIONS or kind is ast.ClassDef:
            bound.add(node.name)
        elif kind is ast.alias:
            bound.add((node.asname or node.name).split(".")[0])
        elif kind is ast.Attribute:
            if type(node.ctx) is ast.Store:
                bound.add(node.attr)
        elif kind is ast.ExceptHandler and node.name:
            bound.add(node.name)
    return bound
