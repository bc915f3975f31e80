"""The corruption families of the over-editing benchmark (SPEC 3.4): 14 in distribution, 20 held out.

A family finds its targets (expressions or statements) in a function body and makes one small wrong
version of a target. The generator puts that version in the target's place; the inverse puts the
original back. In-distribution names are the paper's (`mutation_type` in its data file); its quirks
that make no change (`sorted(..., reverse=False)` added, `range(n, 2)` as a "step") are not copied.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from benchmark.build.corruptions.ast_helpers import (
    Steps,
    _call_name,
    _calls,
    _int_const,
    _int_node,
    _is_range,
    _minus_one,
    _plain_call,
    _plus_one,
    _renamer,
    _self_if,
)
from benchmark.build.corruptions.choice import Chooser
from benchmark.build.corruptions.held_out import (
    _abs_removal,
    _break_continue,
    _cast_target,
    _drop_get_default,
    _enumerate_start,
    _enumerate_target,
    _filter_target,
    _get_default_target,
    _join_separator,
    _join_target,
    _negative_index,
    _negative_index_target,
    _no_arg_method,
    _none_comparison,
    _none_target,
    _range_len_endpoint,
    _range_len_target,
    _remove_filter,
    _round_int_target,
    _sort_key_len,
    _sort_key_target,
    _strip,
    _zip_order,
    _zip_target,
)

Group = Literal["in", "ood"]


@dataclass(frozen=True)
class Family:
    name: str
    group: Group
    summary: str
    # the targets a node offers: (steps from the node to the target, target); most families: the node itself
    find: Callable[[ast.AST], list[tuple[Steps, ast.AST]]]
    # a wrong version of (a deep copy of) the target, or None when this target allows no change
    mutate: Callable[[ast.AST, Chooser], ast.AST | None]


# ---------------------------------------------------------------- in distribution (the paper's 14)

_CMP_FLIP: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}


def _comparison(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Compare)
    spots = [i for i, op in enumerate(node.ops) if type(op) in _CMP_FLIP]
    if not spots:
        return None
    i = ch.pick(spots)
    node.ops[i] = _CMP_FLIP[type(node.ops[i])]()
    return node


def _range_bounds(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call)
    if len(node.args) == 1:
        node.args[0] = (_minus_one if ch.coin() else _plus_one)(node.args[0])
    elif ch.coin():
        node.args[1] = _minus_one(node.args[1])
    else:
        node.args[0] = _plus_one(node.args[0])
    return node


def _is_sort(node: ast.AST) -> bool:
    return _plain_call(node, {"sorted"}, attr=False) or _plain_call(node, {"sort", "sort_values"}, attr=True)


def _sort_order(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call)
    for kw in node.keywords:
        if kw.arg in ("reverse", "ascending"):
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool):
                kw.value = ast.Constant(not kw.value.value)
            else:
                kw.value = ast.UnaryOp(op=ast.Not(), operand=kw.value)
            return node
    if _call_name(node) == "sort_values":
        node.keywords.append(ast.keyword(arg="ascending", value=ast.Constant(False)))
    else:
        node.keywords.append(ast.keyword(arg="reverse", value=ast.Constant(True)))
    return node


_ACCUMULATOR_WORDS = ("sum", "total", "count")


def _is_accumulator_init(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return False
    name = node.targets[0].id.lower()
    value = node.value
    zero = isinstance(value, ast.Constant) and type(value.value) in (int, float) and value.value == 0
    empty = isinstance(value, ast.List) and not value.elts
    return any(w in name for w in _ACCUMULATOR_WORDS) and (zero or empty)


def _accumulator(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Assign)
    if isinstance(node.value, ast.List):
        node.value = ast.List(elts=[ast.Constant(0)], ctx=ast.Load())
    else:
        zero: Any = node.value.value  # type: ignore[attr-defined]  # an int or float 0 (the target test)
        node.value = ast.Constant(type(zero)(1))
    return node


_ARITH: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Div,
    ast.Div: ast.Mult,
}


def _arithmetic(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.BinOp)
    node.op = _ARITH[type(node.op)]()
    return node


def _guard_test(test: ast.expr) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    return isinstance(test, ast.Compare) and any(_is_01(c) for c in test.comparators)


def _is_01(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value in (0, 1)


def _guard(node: ast.AST, ch: Chooser) -> ast.AST | None:
    if isinstance(node, ast.UnaryOp):  # `if not x:` -> `if x:`
        return node.operand
    assert isinstance(node, ast.Compare)
    spots = [i for i, c in enumerate(node.comparators) if _is_01(c)]
    i = ch.pick(spots)
    node.comparators[i] = ast.Constant(1 - node.comparators[i].value)  # type: ignore[attr-defined]
    return node


def _index_slice(node: ast.AST) -> bool:
    if not isinstance(node, ast.Subscript):
        return False
    s = node.slice
    if isinstance(s, ast.Constant) and type(s.value) is int and s.value >= 0:
        return True
    return (
        isinstance(s, ast.BinOp)
        and isinstance(s.op, (ast.Add, ast.Sub))
        and isinstance(s.right, ast.Constant)
        and s.right.value == 1
        and type(s.right.value) is int
    )


def _list_index(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Subscript)
    if isinstance(node.slice, ast.Constant):
        index: Any = node.slice.value  # an int >= 0 (the target test)
        node.slice = ast.Constant(index + 1)
    else:
        node.slice = node.slice.left  # type: ignore[attr-defined]  # x[i + 1] -> x[i]
    return node


_NAME_SWAP = {"mean": "median", "max": "min", "sum": "len"}


def _remove_copy_target(node: ast.AST) -> bool:
    return _plain_call(node, {"copy"}, attr=True) and not node.args and not node.keywords  # type: ignore[attr-defined]


def _numeric_target(node: ast.AST) -> bool:
    if not isinstance(node, ast.Constant):
        return False
    return (type(node.value) is int and node.value not in (0, 1)) or type(node.value) is float


def _numeric(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Constant)
    v: Any = node.value  # an int or float (the target test)
    if type(v) is int:
        return ast.Constant(v + 1 if ch.coin() or v < 2 else v - 1)
    down = round(v - 0.1, 12)
    return ast.Constant(round(v + 0.1, 12) if ch.coin() or down < 0 else down)


def _slice_target(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Slice)
        and (_int_const(node.slice.lower) is not None or _int_const(node.slice.upper) is not None)
    )


def _shift(value: int, ch: Chooser) -> int:
    """value +/- 1, never crossing zero (a bound of 0 or -1 moves away from it)."""
    step = 1 if ch.coin() else -1
    if value + step == 0 or (value >= 0 > value + step):
        step = -step
    return value + step


def _slice_bounds(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)
    s = node.slice
    sides = [f for f in ("lower", "upper") if _int_const(getattr(s, f)) is not None]
    side = ch.pick(sides)
    setattr(s, side, _int_node(_shift(_int_const(getattr(s, side)), ch)))  # type: ignore[arg-type]
    return node


def _bool_chain(node: ast.AST) -> bool:
    return isinstance(node, ast.BoolOp) and any(not _is_not(v) for v in node.values)


def _is_not(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)


def _invert_operand(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.BoolOp)
    spots = [i for i, v in enumerate(node.values) if not _is_not(v)]
    i = ch.pick(spots)
    node.values[i] = ast.UnaryOp(op=ast.Not(), operand=node.values[i])
    return node


def _range_step_target(node: ast.AST) -> bool:
    return _is_range(node, 1, 2) or (_is_range(node, 3, 3) and (_int_const(node.args[2]) or 0) != 0)  # type: ignore[attr-defined]


def _range_step(node: ast.AST, ch: Chooser) -> ast.AST | None:
    assert isinstance(node, ast.Call)
    if len(node.args) == 1:
        node.args = [ast.Constant(0), node.args[0], ast.Constant(2)]
    elif len(node.args) == 2:
        node.args.append(ast.Constant(2))
    else:
        step = _int_const(node.args[2]) or 1
        node.args[2] = _int_node(step + 1 if step > 0 else step - 1)
    return node


def _edge_guard_find(node: ast.AST) -> list[tuple[Steps, ast.AST]]:
    return [((("test", None),), node.test)] if isinstance(node, ast.If) and _guard_test(node.test) else []


def _drop_copy(node: ast.AST, ch: Chooser) -> ast.AST:
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)  # as `_remove_copy_target` found it
    return node.func.value


def _flip_bool(node: ast.AST, ch: Chooser) -> ast.AST:
    assert isinstance(node, ast.Constant)
    return ast.Constant(not node.value)


FAMILIES: tuple[Family, ...] = (
    # in distribution
    Family(
        "mutate_comparison_operators",
        "in",
        "< with <=, > with >=, == with !=",
        _self_if(lambda n: isinstance(n, ast.Compare) and any(type(o) in _CMP_FLIP for o in n.ops)),
        _comparison,
    ),
    Family("mutate_range_bounds", "in", "range bound +/- 1", _self_if(lambda n: _is_range(n, 1, 2)), _range_bounds),
    Family("mutate_sort_order", "in", "sort order flipped (reverse / ascending)", _self_if(_is_sort), _sort_order),
    Family(
        "mutate_accumulator_init",
        "in",
        "accumulator starts at 1 / [0] instead of 0 / []",
        _self_if(_is_accumulator_init),
        _accumulator,
    ),
    Family(
        "mutate_arithmetic_operators",
        "in",
        "+ with -, * with //, // with /, / with *",
        _self_if(lambda n: isinstance(n, ast.BinOp) and type(n.op) in _ARITH),
        _arithmetic,
    ),
    Family(
        "mutate_edge_case_guards",
        "in",
        "guard inverted (`if not x` -> `if x`, 0 <-> 1 in a test)",
        _edge_guard_find,
        _guard,
    ),
    Family(
        "mutate_list_indexing",
        "in",
        "index shifted (x[0] -> x[1], x[i + 1] -> x[i])",
        _self_if(_index_slice),
        _list_index,
    ),
    Family(
        "mutate_function_call_name",
        "in",
        "mean -> median, max -> min, sum -> len",
        _calls(set(_NAME_SWAP)),
        _renamer(_NAME_SWAP),
    ),
    Family("mutate_remove_copy_calls", "in", "`.copy()` removed", _self_if(_remove_copy_target), _drop_copy),
    Family(
        "mutate_boolean_constants",
        "in",
        "True <-> False",
        _self_if(lambda n: isinstance(n, ast.Constant) and isinstance(n.value, bool)),
        _flip_bool,
    ),
    Family("mutate_numeric_constants", "in", "number +/- 1 (floats +/- 0.1)", _self_if(_numeric_target), _numeric),
    Family("mutate_slice_bounds", "in", "slice bound shifted by one", _self_if(_slice_target), _slice_bounds),
    Family(
        "mutate_conditional_inversion",
        "in",
        "one operand of an and/or chain negated",
        _self_if(_bool_chain),
        _invert_operand,
    ),
    Family(
        "mutate_range_step", "in", "range step added (2) or grown by one", _self_if(_range_step_target), _range_step
    ),
    # held out
    Family("mutate_min_max", "ood", "min -> max", _calls({"min"}), _renamer({"min": "max"})),
    Family("mutate_abs_removal", "ood", "abs(x) -> x", _calls({"abs"}, args=(1, 1)), _abs_removal),
    Family(
        "mutate_append_extend",
        "ood",
        ".append <-> .extend",
        _calls({"append", "extend"}, attr=True, args=(1, 1)),
        _renamer({"append": "extend", "extend": "append"}),
    ),
    Family("mutate_enumerate_start", "ood", "enumerate start + 1", _self_if(_enumerate_target), _enumerate_start),
    Family(
        "mutate_break_continue",
        "ood",
        "break <-> continue",
        _self_if(lambda n: isinstance(n, (ast.Break, ast.Continue))),
        _break_continue,
    ),
    Family(
        "mutate_dict_get_default",
        "ood",
        "d.get(k, default) -> d.get(k)",
        _self_if(_get_default_target),
        _drop_get_default,
    ),
    Family(
        "mutate_lower_upper",
        "ood",
        ".lower() <-> .upper()",
        _self_if(_no_arg_method({"lower", "upper"})),
        _renamer({"lower": "upper", "upper": "lower"}),
    ),
    Family(
        "mutate_strip_variants",
        "ood",
        "strip -> lstrip/rstrip, lstrip <-> rstrip",
        _calls({"strip", "lstrip", "rstrip"}, attr=True),
        _strip,
    ),
    Family(
        "mutate_join_separator",
        "ood",
        "join separator '' <-> ' ' (others -> '')",
        _self_if(_join_target),
        _join_separator,
    ),
    Family(
        "mutate_sorted_key_len",
        "ood",
        "key=len added to / removed from a sort",
        _self_if(_sort_key_target),
        _sort_key_len,
    ),
    Family(
        "mutate_set_list_cast",
        "ood",
        "set(...) <-> list(...)",
        _self_if(_cast_target),
        _renamer({"set": "list", "list": "set"}),
    ),
    Family(
        "mutate_round_int",
        "ood",
        "round(x) <-> int(x)",
        _self_if(_round_int_target),
        _renamer({"round": "int", "int": "round"}),
    ),
    Family(
        "mutate_comprehension_filter",
        "ood",
        "a comprehension's `if` filter removed",
        _self_if(_filter_target),
        _remove_filter,
    ),
    Family(
        "mutate_find_index",
        "ood",
        ".find <-> .index",
        _calls({"find", "index"}, attr=True),
        _renamer({"find": "index", "index": "find"}),
    ),
    Family(
        "mutate_any_all",
        "ood",
        "any <-> all",
        _calls({"any", "all"}, attr=False, args=(1, 1)),
        _renamer({"any": "all", "all": "any"}),
    ),
    Family("mutate_zip_order", "ood", "zip(a, b) -> zip(b, a)", _self_if(_zip_target), _zip_order),
    Family(
        "mutate_range_len_endpoint",
        "ood",
        "range(len(x)) <-> range(len(x) - 1)",
        _self_if(_range_len_target),
        _range_len_endpoint,
    ),
    Family(
        "mutate_negative_index",
        "ood",
        "negative index shifted (x[-1] -> x[-2])",
        _self_if(_negative_index_target),
        _negative_index,
    ),
    Family(
        "mutate_dict_views",
        "ood",
        ".keys() <-> .values(), .items() -> .keys()",
        _self_if(_no_arg_method({"keys", "values", "items"})),
        _renamer({"keys": "values", "values": "keys", "items": "keys"}),
    ),
    Family(
        "mutate_none_comparison",
        "ood",
        "`== None` <-> `is None` (and the negations)",
        _self_if(_none_target),
        _none_comparison,
    ),
)
BY_NAME: dict[str, Family] = {f.name: f for f in FAMILIES}
IN_DISTRIBUTION: tuple[Family, ...] = tuple(f for f in FAMILIES if f.group == "in")
HELD_OUT: tuple[Family, ...] = tuple(f for f in FAMILIES if f.group == "ood")


def select(spec: str) -> tuple[Family, ...]:
    """`in`, `ood`, `all`, or comma-separated family names (with or without the `mutate_` prefix)."""
    if spec == "in":
        return IN_DISTRIBUTION
    if spec == "ood":
        return HELD_OUT
    if spec == "all":
        return FAMILIES
    chosen: list[Family] = []
    for raw in (s.strip() for s in spec.split(",")):
        if not raw:
            continue
        fam = BY_NAME.get(raw) or BY_NAME.get(f"mutate_{raw}")
        if fam is None:
            raise ValueError(
                f"unknown corruption family {raw!r}; use in, ood, all or names from: "
                + ", ".join(f.name for f in FAMILIES)
            )
        chosen.append(fam)
    if not chosen:
        raise ValueError("no corruption family given")
    return tuple(chosen)
