"""Statements an edit deletes whose work the rest of the code still relies on (Python). Pure.

A unit that only removes lines inside a function the edit changes is excused as part of that change
(`instruction._evidence`). That holds for the old side of a rewrite, not for an assignment whose value the
code after it still reads, on lines the edit keeps: deleting `items = [clean(i) for i in items]` before `return items` changes what
the function returns, a behaviour nobody asked to remove unless the instruction asks for a removal.
"""

from __future__ import annotations

import ast
from collections.abc import Collection

from server.fidelity.text import pyast

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _function_at(tree: ast.AST, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for node in ast.walk(tree):
        if not isinstance(node, _FUNCTIONS) or not node.lineno <= line <= (node.end_lineno or node.lineno):
            continue
        if best is None or node.lineno >= best.lineno:
            best = node  # the innermost: it starts last
    return best


def live_stores_deleted(original: str, start: int, end: int, changed: Collection[int] = ()) -> str | None:
    """The first assignment wholly on the original's lines `start..end` (1-based, inclusive) whose target
    (a plain name) the same function reads after those lines, on a line the edit leaves alone (not in
    `changed`, the original's lines the edit's units replace), as source text; None when there is none."""
    try:
        tree = pyast.parse(original, quiet=True)
    except (SyntaxError, ValueError, RecursionError):
        return None
    function = _function_at(tree, start)
    if function is None or (function.end_lineno or function.lineno) < end or function.lineno >= start:
        return None
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign | ast.AugAssign) or not start <= node.lineno:
            continue
        if (node.end_lineno or node.lineno) > end:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        if not names or len(names) != len(targets):
            continue
        read_after = any(
            isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)
            and n.id in names
            and n.lineno > end
            and n.lineno not in changed
            for n in ast.walk(function)
        )
        if read_after:
            return (ast.get_source_segment(original, node) or "").split("\n")[0]
    return None
