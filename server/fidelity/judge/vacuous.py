"""Checks that cannot fail: a condition that holds whatever the input, read off its syntax tree.

An assertion whose condition is always true checks nothing, so it is never the check an instruction asks
for, even one that asks for assertions: `assert x == x`, `assert True`, `assert len(xs) >= 0`,
`assert (cond, "message")`, or
`assert all(a == b for ... if a == b)` (the filter already guarantees what the element tests). Only
shapes that are true by their form are recognised (NaN aside); anything else is not vacuous. Pure.
"""

from __future__ import annotations

import ast

_REFLEXIVE = (ast.Eq, ast.LtE, ast.GtE, ast.Is, ast.In)
_SIZES = frozenset({"len", "abs"})


def _same(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a) == ast.dump(b)


def _compare_true(node: ast.Compare) -> bool:
    if len(node.ops) != 1:
        return False
    op, left, right = node.ops[0], node.left, node.comparators[0]
    if isinstance(op, _REFLEXIVE) and not isinstance(op, ast.In) and _same(left, right):
        return True  # `x == x`, `x <= x`, `x is x`
    # a size is never negative: `len(xs) >= 0`, `0 <= len(xs)`
    size, bound = (
        (left, right) if isinstance(op, ast.GtE) else (right, left) if isinstance(op, ast.LtE) else (None, None)
    )
    return (
        isinstance(size, ast.Call)
        and isinstance(size.func, ast.Name)
        and size.func.id in _SIZES
        and isinstance(bound, ast.Constant)
        and isinstance(bound.value, int | float)
        and not isinstance(bound.value, bool)
        and bound.value <= 0
    )


def _filtered_tautology(node: ast.Call) -> bool:
    """`all(E for ... if E)`: every element the filter lets through passes the test it repeats."""
    if not (isinstance(node.func, ast.Name) and node.func.id == "all" and len(node.args) == 1 and not node.keywords):
        return False
    gen = node.args[0]
    if not isinstance(gen, ast.GeneratorExp | ast.ListComp | ast.SetComp):
        return False
    filters = [f for comp in gen.generators for f in comp.ifs]
    return always_true(gen.elt) or any(_same(gen.elt, f) for f in filters)


def always_true(node: ast.expr) -> bool:
    """The condition holds whatever the values of its names (by its form alone)."""
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, ast.Tuple):
        return bool(node.elts)  # `assert (cond, "message")`: a tuple that is not empty is true
    if isinstance(node, ast.Compare):
        return _compare_true(node)
    if isinstance(node, ast.BoolOp):
        results = [always_true(v) for v in node.values]
        return any(results) if isinstance(node.op, ast.Or) else all(results)
    if isinstance(node, ast.Call):
        return _filtered_tautology(node)
    return False
