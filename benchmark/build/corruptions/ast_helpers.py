"""AST helpers the corruption families share: which nodes a family targets, and small rewrites."""

from __future__ import annotations

import ast
from collections.abc import Callable

from benchmark.build.corruptions.choice import Chooser

Step = tuple[str, int | None]  # (field, index in a list field or None)
Steps = tuple[Step, ...]


def _self_if(pred: Callable[[ast.AST], bool]) -> Callable[[ast.AST], list[tuple[Steps, ast.AST]]]:
    return lambda node: [((), node)] if pred(node) else []


def _call_name(node: ast.AST) -> str | None:
    """`f` for `f(...)` and `x.f(...)`."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _plain_call(node: ast.AST, names: set[str], *, attr: bool | None = None) -> bool:
    """A call of one of `names`; attr=True: only methods, False: only bare names, None: either."""
    if not isinstance(node, ast.Call) or _call_name(node) not in names:
        return False
    if attr is True:
        return isinstance(node.func, ast.Attribute)
    if attr is False:
        return isinstance(node.func, ast.Name)
    return True


def _rename_call(node: ast.AST, mapping: dict[str, str]) -> ast.AST | None:
    assert isinstance(node, ast.Call)
    if isinstance(node.func, ast.Name) and node.func.id in mapping:
        node.func.id = mapping[node.func.id]
    elif isinstance(node.func, ast.Attribute) and node.func.attr in mapping:
        node.func.attr = mapping[node.func.attr]
    else:
        return None
    return node


def _int_const(node: ast.AST | None) -> int | None:
    """The value of an int literal (not a bool), negative ones included (`-3` is a UnaryOp)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _int_node(value: int) -> ast.expr:
    return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-value)) if value < 0 else ast.Constant(value)


def _minus_one(expr: ast.expr) -> ast.expr:
    return ast.BinOp(left=expr, op=ast.Sub(), right=ast.Constant(1))


def _plus_one(expr: ast.expr) -> ast.expr:
    return ast.BinOp(left=expr, op=ast.Add(), right=ast.Constant(1))


def _positional(node: ast.Call, lo: int, hi: int) -> bool:
    return lo <= len(node.args) <= hi and not any(isinstance(a, ast.Starred) for a in node.args)


def _renamer(mapping: dict[str, str]) -> Callable[[ast.AST, Chooser], ast.AST | None]:
    return lambda node, ch: _rename_call(node, mapping)


def _calls(
    names: set[str], *, attr: bool | None = None, args: tuple[int, int] | None = None
) -> Callable[[ast.AST], list[tuple[Steps, ast.AST]]]:
    def pred(node: ast.AST) -> bool:
        return _plain_call(node, names, attr=attr) and (args is None or _positional(node, *args))  # type: ignore[arg-type]

    return _self_if(pred)


def _is_range(node: ast.AST, lo: int, hi: int) -> bool:
    return (
        isinstance(node, ast.Call)
        and _plain_call(node, {"range"}, attr=False)
        and not node.keywords
        and _positional(node, lo, hi)
    )
