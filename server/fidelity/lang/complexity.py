"""Cyclomatic and cognitive complexity of a function, from its tree, for every language of the table.

Cyclomatic (McCabe, counted the way `lizard` 1.24 counts, so the two agree by construction): 1, plus
one per `if` (an `else if` is an `if`), loop with a condition (`for`, `while`, `do`; not Rust's bare
`loop`), non-default `case` label (Rust: each match arm after the first), `catch`, ternary, `&&`
and `||` (and `??` in JavaScript/TypeScript), and lizard's extras: Rust's `?` (an early return) and
`let ... else` and match-arm guards, C's `#if`/`#ifdef`/`#elif`, a JavaScript/TypeScript parameter
default value (an implicit `=== undefined` branch). A nested *named* function is its own graph and does not
count in its parent; anonymous lambdas count in the function around them. The differences with
lizard that remain are listed in tests/fidelity/test_lang_complexity.py.

Cognitive (SonarSource's specification, G. Ann Campbell, "Cognitive Complexity", v1.5):
- +1 for `if`, `else if`, `else`, ternary, `switch` (Rust `match`, Go `select`), each loop, `catch`,
  `goto`, `break`/`continue` to a label, each sequence of like boolean operators (`a && b && c` is
  one, `a && b || c` two), and for each function that calls itself (recursion, optional);
- `if`, ternary, `switch`, loops and `catch` add the current nesting level on top;
- nesting grows inside `if`/`else if`/`else`, ternary branches, `switch`, loops, `catch`, nested
  functions, lambdas and local classes; `try`, `finally` and blocks do not nest;
- shorthand is free: `?.`, `??`, Rust's `?`, plain `break`/`continue`, early `return`.
"""

from __future__ import annotations

import re
from itertools import repeat

import tree_sitter as ts

from server.fidelity.lang.table import Lang

_BODY_FIELDS = frozenset({"body", "consequence"})
_DISCRIMINANT = frozenset({"condition", "value", "initializer", "subject"})
_SEPARATOR = re.compile(r"\.|::|->")
_SELF = frozenset({"", "this", "self", "Self", "super"})
_PREPROC_COUNTED = ("#if", "#ifdef", "#elif")


def _operator(node: ts.Node) -> str:
    op = node.child_by_field_name("operator")
    return op.type if op is not None else ""


def _unwrap_else(lang: Lang, alt: ts.Node) -> ts.Node:
    """The statement of an `else` branch (inside an `else_clause` wrapper where the grammar has one)."""
    if alt.type in lang.else_clauses:
        for child in alt.named_children:
            if child.type not in lang.comments:
                return child
    return alt


def _is_default(node: ts.Node) -> bool:
    first = node.child(0)
    return first is not None and first.type == "default"


def _calls_self(lang: Lang, node: ts.Node, name: str) -> bool:
    field = lang.calls.get(node.type)
    if not field or not name:
        return False
    callee = node.child_by_field_name(field)
    if callee is None:
        return False
    if node.type == "method_invocation":  # Java: the name is its own field, the receiver another
        receiver = node.child_by_field_name("object")
        text = callee.text.decode("utf-8", "replace") if callee.text else ""
        return text == name and (receiver is None or receiver.type in ("this", "super"))
    text = callee.text.decode("utf-8", "replace") if callee.text else ""
    parts = _SEPARATOR.split(text)
    return parts[-1].strip() == name and (len(parts) == 1 or parts[-2].strip() in _SELF)


def simple_name(name: str) -> str:
    return _SEPARATOR.split(name)[-1].strip()


_INTERESTING: dict[str, frozenset[int]] = {}


def _interesting(lang: Lang) -> frozenset[int]:
    """Kind ids of every node type either walker looks at; all others are only descended into (a
    kind id is an int: comparing it costs far less than building the node's type string)."""
    found = _INTERESTING.get(lang.name)
    if found is None:
        from server.fidelity.lang.parse import language

        lg = language(lang)
        names = (
            lang.comments
            | lang.atomic
            | lang.ifs
            | lang.catches
            | lang.ternaries
            | lang.loops
            | lang.cases
            | lang.switches
            | lang.default_params
            | lang.preproc_ifs
            | lang.lambdas
            | lang.functions
            | lang.classes
            | lang.jumps
            | lang.gotos
            | frozenset(lang.calls)
            | {"binary_expression", lang.arm_guard, lang.try_operator, lang.let_else}
        )
        found = _INTERESTING[lang.name] = frozenset(
            i for i in range(lg.node_kind_count) if lg.node_kind_is_named(i) and lg.node_kind_for_id(i) in names
        )
    return found


def cyclomatic(lang: Lang, node: ts.Node, nested: frozenset[int] = frozenset()) -> int:
    """McCabe's number of the function `node`; `nested` holds ids of nested named functions to skip."""
    score = 1
    logical = lang.logical | lang.cyclomatic_extra_ops
    interesting = _interesting(lang)
    stack = list(node.children)
    while stack:
        n = stack.pop()
        if n.kind_id not in interesting:
            if n.child_count:
                stack.extend(n.children)
            continue
        t = n.type
        if n.id in nested or t in lang.comments or t in lang.atomic:
            continue
        if t in lang.ifs or t in lang.catches or t in lang.ternaries:
            score += 1
        elif t in lang.loops:
            score += t != "loop_expression"
        elif t in lang.cases:
            score += not _is_default(n)
        elif t == "binary_expression":
            score += _operator(n) in logical
        elif t in lang.switches and lang.match_arms:
            arms = 0
            body = n.child_by_field_name("body")
            for child in body.named_children if body is not None else ():
                arms += child.type == lang.match_arms
            score += max(arms - 1, 0)
        elif t in lang.default_params:
            score += t == "assignment_pattern" or n.child_by_field_name("value") is not None
        elif t == lang.arm_guard:
            score += n.child_by_field_name("condition") is not None
        elif t == lang.try_operator or t == lang.let_else and n.child_by_field_name("alternative") is not None:
            score += 1
        elif t in lang.preproc_ifs:
            first = n.child(0)
            score += first is not None and first.type in _PREPROC_COUNTED
        stack.extend(n.children)
    return score


def cognitive(lang: Lang, node: ts.Node, name: str = "", *, recursion: bool = True) -> int:
    """SonarSource's cognitive complexity of the function `node` (named `name`, for recursion)."""
    score = 0
    own = simple_name(name)
    recursive = False
    else_ifs: set[int] = set()
    in_sequence: set[int] = set()
    stack: list[tuple[ts.Node, int]] = [(c, 0) for c in reversed(node.children)]

    def push(n: ts.Node, nest: int, nested_fields: frozenset[str] | None, rest: int | None = None) -> None:
        """Children of `n`: those in `nested_fields` at nest + 1, the others at `rest` (default nest)."""
        others = nest if rest is None else rest
        items = []
        for i, child in enumerate(n.children):
            f = n.field_name_for_child(i)
            items.append((child, nest + 1 if nested_fields is None or f in nested_fields else others))
        stack.extend(reversed(items))

    interesting = _interesting(lang)
    while stack:
        n, nest = stack.pop()
        if n.kind_id not in interesting:
            if n.child_count:
                stack.extend(zip(reversed(n.children), repeat(nest)))
            continue
        t = n.type
        if t in lang.comments or t in lang.atomic or n.child_count == 0 and t not in lang.jumps:
            continue
        if t in lang.ifs:
            score += 1 if n.id in else_ifs else 1 + nest
            items = []
            for i, child in enumerate(n.children):
                f = n.field_name_for_child(i)
                if f == "consequence":
                    items.append((child, nest + 1))
                elif f == "alternative":
                    inner = _unwrap_else(lang, child)
                    if inner.type in lang.ifs:
                        else_ifs.add(inner.id)
                        items.append((inner, nest))
                    else:
                        score += 1  # else
                        items.append((inner, nest + 1))
                else:
                    items.append((child, nest))
            stack.extend(reversed(items))
        elif t in lang.loops or t in lang.catches:
            score += 1 + nest
            push(n, nest, _BODY_FIELDS)
        elif t in lang.switches:
            score += 1 + nest
            items = []
            for i, child in enumerate(n.children):
                f = n.field_name_for_child(i)
                items.append((child, nest if f in _DISCRIMINANT else nest + 1))
            stack.extend(reversed(items))
        elif t in lang.ternaries:
            score += 1 + nest
            push(n, nest, frozenset({"consequence", "alternative"}))
        elif t in lang.lambdas or t in lang.functions or t in lang.classes:
            push(n, nest, None)  # nested function, lambda or local class: one level deeper, no increment
        elif t in lang.jumps:
            score += any(c.type in lang.jump_labels for c in n.named_children)
        elif t in lang.gotos:
            score += 1
        elif t == "binary_expression" and _operator(n) in lang.logical and n.id not in in_sequence:
            ops: list[str] = []
            operands: list[ts.Node] = []
            todo: list[ts.Node | str] = [n]
            while todo:
                x = todo.pop()
                if isinstance(x, str):
                    ops.append(x)
                elif x.type == "binary_expression" and _operator(x) in lang.logical:
                    in_sequence.add(x.id)
                    left, right = x.child_by_field_name("left"), x.child_by_field_name("right")
                    if right is not None:
                        todo.append(right)
                    todo.append(_operator(x))
                    if left is not None:
                        todo.append(left)
                else:
                    operands.append(x)
            score += 1 + sum(1 for a, b in zip(ops, ops[1:]) if a != b)
            stack.extend((o, nest) for o in reversed(operands))
        else:
            if recursion and not recursive and t in lang.calls and _calls_self(lang, n, own):
                recursive = True
                score += 1
            stack.extend(zip(reversed(n.children), repeat(nest)))
    return score


class _DecisionQuery:
    """The decisions `cyclomatic` counts, matched by one tree-sitter query (in C, not node by node)."""

    def __init__(self, lang: Lang) -> None:
        from server.fidelity.lang.parse import language

        lg = language(lang)

        def has(kind: str, named: bool = True) -> bool:
            return bool(kind) and bool(lg.id_for_node_kind(kind, named))

        plain = sorted(
            k
            for k in lang.ifs | lang.catches | lang.ternaries | lang.loops | lang.cases
            if has(k) and k != "loop_expression"
        )
        parts = ["[" + " ".join(f"({k})" for k in plain) + "] @d"] if plain else []
        ops = [o for o in sorted(lang.logical | lang.cyclomatic_extra_ops) if has(o, False)]
        if ops and has("binary_expression"):
            parts.append("(binary_expression operator: [" + " ".join(f'"{o}"' for o in ops) + "]) @d")
        if lang.match_arms and has(lang.match_arms):
            parts.append(f"(match_block ({lang.match_arms}) @arm)")
        for k in sorted(lang.default_params):
            if k == "assignment_pattern" and has(k) and has("formal_parameters"):
                parts.append("(formal_parameters (assignment_pattern) @d)")
            elif has(k):
                parts.append(f"({k} value: (_)) @d")
        if has(lang.arm_guard):
            parts.append(f"({lang.arm_guard} condition: (_)) @d")
        if has(lang.try_operator):
            parts.append(f"({lang.try_operator}) @d")
        if has(lang.let_else):
            parts.append(f"({lang.let_else} alternative: (_)) @d")
        for k in ("preproc_if", "preproc_elif"):
            if k in lang.preproc_ifs and has(k):
                parts.append(f"({k}) @d")
        if "preproc_ifdef" in lang.preproc_ifs and has("#ifdef", False):
            parts.append('(preproc_ifdef "#ifdef") @d')
        valid = []
        for part in parts:  # a pattern the grammar cannot produce (`assignment_pattern` as a TS parameter)
            try:
                ts.Query(lg, part)
            except ts.QueryError:
                continue
            valid.append(part)
        self.cursor = ts.QueryCursor(ts.Query(lg, "\n".join(valid)))
        self.lang = lang

    def positions(self, root: ts.Node) -> list[int]:
        """Sorted start bytes of every decision under `root` (a match's first arm is no decision)."""
        caps = self.cursor.captures(root)
        out = [n.start_byte for n in caps.get("d", []) if n.type not in self.lang.cases or not _is_default(n)]
        seen: set[int] = set()
        for arm in sorted(caps.get("arm", []), key=lambda n: n.start_byte):
            parent = arm.parent
            key = parent.id if parent is not None else -1
            if key in seen:
                out.append(arm.start_byte)
            seen.add(key)
        out.sort()
        return out
