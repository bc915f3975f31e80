"""The 20 held-out corruption families' targets and mutations (SPEC 3.4; the registry is in `families`)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from benchmark.build.corruptions.ast_helpers import (
    _int_const,
    _int_node,
    _is_range,
    _minus_one,
    _plain_call,
    _positional,
)
from benchmark.build.corruptions.choice import Chooser


def _abs_removal(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call)
    return node.args[0]


def _enumerate_target(node: ast.AST) -> bool:
    if not (_plain_call(node, {"enumerate"}, attr=False) and _positional(node, 1, 2)):  # type: ignore[arg-type]
        return False
    start = node.args[1] if len(node.args) == 2 else next((k.value for k in node.keywords if k.arg == "start"), None)  # type: ignore[attr-defined]
    return start is None or _int_const(start) is not None


def _enumerate_start(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call)
    if len(node.args) == 2:
        node.args[1] = _int_node(_int_const(node.args[1]) + 1)  # type: ignore[operator]
        return node
    for kw in node.keywords:
        if kw.arg == "start":
            kw.value = _int_node(_int_const(kw.value) + 1)  # type: ignore[operator]
            return node
    node.args.append(ast.Constant(1))
    return node


def _break_continue(node: ast.AST, ch: Chooser) -> ast.AST | None:
    return ast.Continue() if isinstance(node, ast.Break) else ast.Break()


def _get_default_target(node: ast.AST) -> bool:
    return _plain_call(node, {"get"}, attr=True) and _positional(node, 2, 2) and not node.keywords  # type: ignore[arg-type, attr-defined]


def _drop_get_default(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call)
    node.args = node.args[:1]
    return node


def _no_arg_method(names: set[str]) -> Callable[[ast.AST], bool]:
    return lambda node: _plain_call(node, names, attr=True) and not node.args and not node.keywords  # type: ignore[attr-defined]


def _strip(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    attr = node.func.attr
    node.func.attr = (
        ("lstrip" if ch.coin() else "rstrip") if attr == "strip" else ("rstrip" if attr == "lstrip" else "lstrip")
    )
    return node


def _join_target(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    )


def _join_separator(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    sep = node.func.value.value  # type: ignore[attr-defined]
    node.func.value = ast.Constant(" " if sep == "" else "")
    return node


def _sort_key_target(node: ast.AST) -> bool:
    if not (_plain_call(node, {"sorted"}, attr=False) or _plain_call(node, {"sort"}, attr=True)):
        return False
    key = next((k.value for k in node.keywords if k.arg == "key"), None)  # type: ignore[attr-defined]
    return key is None or (isinstance(key, ast.Name) and key.id == "len")


def _sort_key_len(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call)
    kept = [k for k in node.keywords if k.arg != "key"]
    if len(kept) == len(node.keywords):
        node.keywords.append(ast.keyword(arg="key", value=ast.Name("len", ast.Load())))
    else:
        node.keywords = kept
    return node


def _cast_target(node: ast.AST) -> bool:
    return _plain_call(node, {"set", "list"}, attr=False) and _positional(node, 0, 1) and not node.keywords  # type: ignore[arg-type, attr-defined]


def _round_int_target(node: ast.AST) -> bool:
    return _plain_call(node, {"round", "int"}, attr=False) and _positional(node, 1, 1) and not node.keywords  # type: ignore[arg-type, attr-defined]


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _filter_target(node: ast.AST) -> bool:
    return isinstance(node, _COMPREHENSIONS) and any(g.ifs for g in node.generators)


def _remove_filter(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, _COMPREHENSIONS)
    spots = [i for i, g in enumerate(node.generators) if g.ifs]
    node.generators[ch.pick(spots)].ifs = []
    return node


def _zip_target(node: ast.AST) -> bool:
    return _plain_call(node, {"zip"}, attr=False) and _positional(node, 2, 99)  # type: ignore[arg-type]


def _zip_order(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call)
    node.args[0], node.args[1] = node.args[1], node.args[0]
    return node


def _is_len_call(node: ast.AST) -> bool:
    return _plain_call(node, {"len"}, attr=False) and _positional(node, 1, 1)  # type: ignore[arg-type]


def _len_minus_one(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and _is_len_call(node.left)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 1
    )


def _range_len_target(node: ast.AST) -> bool:
    if not _is_range(node, 1, 2):
        return False
    end = node.args[-1]  # type: ignore[attr-defined]
    return _is_len_call(end) or _len_minus_one(end)


def _range_len_endpoint(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call)
    end = node.args[-1]
    node.args[-1] = end.left if _len_minus_one(end) else _minus_one(end)  # type: ignore[attr-defined]
    return node


def _negative_index_target(node: ast.AST) -> bool:
    return isinstance(node, ast.Subscript) and (_int_const(node.slice) or 0) < 0


def _negative_index(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Subscript)
    node.slice = _int_node(_int_const(node.slice) - 1)  # type: ignore[operator]  # x[-1] -> x[-2]
    return node


def _none_target(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot))
        and any(isinstance(x, ast.Constant) and x.value is None for x in (node.left, node.comparators[0]))
    )


_NONE_FLIP: dict[type, type] = {ast.Eq: ast.Is, ast.NotEq: ast.IsNot, ast.Is: ast.Eq, ast.IsNot: ast.NotEq}


def _none_comparison(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Compare)
    node.ops[0] = _NONE_FLIP[type(node.ops[0])]()
    return node
