"""Functions of a parsed text: names, qualified names, spans, signatures, parameters and complexity.

Found with one tree-sitter query per language (the table's function, lambda and class node types),
so the tree is matched in C and only the functions are visited from Python. Named functions are
declarations and methods of every kind, and anonymous functions assigned to a name
(`const f = () => ...`, `f := func() {...}`, `let f = |x| ...`); other lambdas are not functions
of their own (their code counts in the function around them).

Complexities are cached per function text: an edit elsewhere in the file does not recompute them.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterator
from typing import NamedTuple

import tree_sitter as ts

import server.fidelity.lang.complexity as complexity
from server.fidelity.lang.lex import LangLexed, lex
from server.fidelity.lang.parse import Source, language, per_thread
from server.fidelity.lang.table import Lang


class LangFunction(NamedTuple):
    """One function. The first seven fields mirror `server.fidelity.text.structure.FunctionInfo`."""

    qualname: str  # scopes and name joined with "." (`Outer.method`, `ns.A.f`, `T.M` for a Go method)
    start: int  # first line (annotations and modifiers included, a doc comment above not)
    def_line: int  # line of the name
    end: int
    signature_end: int  # last line before the body
    signature: str  # the header's tokens joined by one space (comments dropped), normalised
    cognitive: int  # SonarSource cognitive complexity (nested lambdas included)
    name: str
    kind: str  # "function", "method", "constructor" or "lambda" (an anonymous function assigned a name)
    start_char: int  # character interval of the whole function
    end_char: int
    body_char: int  # where the body starts ("{", or the expression of an arrow function); -1 if none
    params: tuple[str, ...]  # parameter names, in order
    cyclomatic: int
    depth: int  # depth in the syntax tree (the paper's "first function" is the shallowest)
    broken: bool  # a parse error (ERROR or MISSING node) lies inside: "unparseable", not "removed"


class _Queries:
    def __init__(self, lang: Lang) -> None:
        lg = language(lang)
        kinds = [k for k in sorted(lang.functions | lang.lambdas) if lg.id_for_node_kind(k, True)]
        self.functions = ts.QueryCursor(ts.Query(lg, "[" + " ".join(f"({k})" for k in kinds) + "] @f"))


_ASSIGN_FIELDS = ("name", "left", "declarator", "pattern", "key", "property")
_SKIP_IN_PARAMS = frozenset({"type", "value", "default_value", "right", "return_type", "default", "decorator"})
_lock = threading.Lock()
_METRICS: OrderedDict[tuple[str, str, bytes], tuple[int, int, tuple[str, ...]]] = OrderedDict()
_MAX_METRICS = 20000
_COGNITIVE: OrderedDict[tuple[str, str, bytes], int] = OrderedDict()


def _queries(lang: Lang) -> _Queries:
    return per_thread("functions:" + lang.name, lambda: _Queries(lang))


def _text(src: Source, node: ts.Node | None) -> str:
    return "" if node is None else src.node_text(node)


def _declared_name(lang: Lang, node: ts.Node) -> ts.Node | None:
    """The node naming a declaration: its `name` field, else down the `declarator` chain (C, C++)."""
    name = node.child_by_field_name("name")
    if name is not None:
        return name
    d = node.child_by_field_name("declarator")
    while d is not None:
        inner = d.child_by_field_name("declarator")
        if inner is None:
            return d if d.type not in ("function_declarator", "abstract_function_declarator") else None
        d = inner
    return None


def _assigned_name(lang: Lang, node: ts.Node) -> ts.Node | None:
    """The name an anonymous function is assigned to (`const f = () => ...`), if any."""
    parent = node.parent
    if parent is not None and parent.type == "expression_list":  # Go: `f := func() {...}`
        parent = parent.parent
    if parent is None:
        return None
    for field in _ASSIGN_FIELDS:
        target = parent.child_by_field_name(field)
        if target is not None and target.id != node.id and target.end_byte <= node.start_byte:
            if target.type == "expression_list" and target.named_child_count == 1:
                target = target.named_children[0]
            return target
    return None


def _param_names(lang: Lang, node: ts.Node | None, src: Source) -> tuple[str, ...]:
    """Names bound by a parameter list: identifiers outside types and default values."""
    if node is None:
        return ()
    names: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in lang.identifiers and n.child_count == 0:
            names.append(src.node_text(n))
            continue
        children = n.children
        for i in range(len(children) - 1, -1, -1):
            if n.field_name_for_child(i) not in _SKIP_IN_PARAMS:
                stack.append(children[i])
    return tuple(names)


def _parameters(node: ts.Node) -> ts.Node | None:
    params = node.child_by_field_name("parameters")
    if params is not None:
        return params
    d = node.child_by_field_name("declarator")
    while d is not None:
        params = d.child_by_field_name("parameters")
        if params is not None:
            return params
        d = d.child_by_field_name("declarator")
    return None


def _scope_names(lang: Lang, src: Source, node: ts.Node) -> list[str]:
    """Names of the classes, impls, namespaces and functions around `node`, outermost first."""
    names: list[str] = []
    p = node.parent
    while p is not None:
        t = p.type
        if t in lang.classes:
            name = p.child_by_field_name("name") or p.child_by_field_name("type")
            names.append(_text(src, name).split("<")[0].strip() if name is not None else "<anonymous>")
        elif t in lang.functions:
            name = _declared_name(lang, p)
            if name is not None:
                names.append(_text(src, name))
        p = p.parent
    names.reverse()
    return names


def _signature(lexed: LangLexed, start: int, stop: int) -> str:
    lo, hi = bisect_left(lexed.starts, start), bisect_left(lexed.starts, stop)
    return " ".join(lexed.strings[lo:hi])


def _count(positions: list[int], start: int, end: int) -> int:
    return bisect_left(positions, end) - bisect_left(positions, start)


def _metrics(
    lang: Lang, src: Source, node: ts.Node, name: str, inner: list[ts.Node], decisions: complexity._DecisionQuery
) -> tuple[int, int, tuple[str, ...]]:
    """(cyclomatic, cognitive, parameter names), cached by the function's text (which holds the nested
    functions too, so the same text always gives the same figures)."""
    key = (lang.name, name, src.data[node.start_byte : node.end_byte])
    with _lock:
        found = _METRICS.get(key)
        if found is not None:
            _METRICS.move_to_end(key)
            return found
    positions = decisions.positions(node)
    cyc = 1 + len(positions)
    outer_end = -1
    for n in inner:  # decisions of nested named functions are theirs (skip ones nested deeper still)
        if n.start_byte >= outer_end:
            cyc -= _count(positions, n.start_byte, n.end_byte)
            outer_end = n.end_byte
    found = (cyc, complexity.cognitive(lang, node, name), _param_names(lang, _parameters(node), src))
    with _lock:
        _METRICS[key] = found
        if len(_METRICS) > _MAX_METRICS:
            _METRICS.popitem(last=False)
    return found


def _cognitive(lang: Lang, src: Source, node: ts.Node, name: str) -> int:
    """An outermost function's cognitive complexity with all it nests, cached by its text: after a
    small edit only the edited function is walked again."""
    key = (lang.name, name, src.data[node.start_byte : node.end_byte])
    with _lock:
        found = _COGNITIVE.get(key)
        if found is not None:
            _COGNITIVE.move_to_end(key)
            return found
    found = complexity.cognitive(lang, node, name)
    with _lock:
        _COGNITIVE[key] = found
        if len(_COGNITIVE) > _MAX_METRICS:
            _COGNITIVE.popitem(last=False)
    return found


def clear_metrics() -> None:
    with _lock:
        _METRICS.clear()
        _COGNITIVE.clear()


def functions(src: Source) -> list[LangFunction]:
    """Every named function of the text, in text order (cached on the Source). A text parsed from an
    earlier one whose functions are known keeps those of the top-level units the edit did not touch
    (shifted), and finds only the touched units' again."""
    cached = src.__dict__.get("_functions")
    if cached is not None:
        return cached
    reused = _reuse(src)
    if reused is not None:
        before, after, lo, hi = reused
        out = [*before, *_found(src, lo, hi), *after]
    else:
        out = _found(src, 0, len(src.data))
    src.__dict__["_functions"] = out
    return out


def _reuse(src: Source) -> tuple[list[LangFunction], list[LangFunction], int, int] | None:
    """(functions before the touched top-level units, those after them shifted, and the byte range of
    the touched units in the new text), or None when nothing can be reused."""
    prev, edit = src.previous, src.edit
    old_fns = prev.__dict__.get("_functions") if prev is not None else None
    if prev is None or edit is None or old_fns is None or src.tree.root_node.has_error or prev.tree.root_node.has_error:
        return None
    head, old_end, new_end = edit
    delta = new_end - old_end

    def touched(root: ts.Node, end: int) -> tuple[int, int]:
        units = [n for n in root.children if n.start_byte <= end and n.end_byte >= head]
        return (min(n.start_byte for n in units), max(n.end_byte for n in units)) if units else (head, end)

    (a0, a1), (b0, b1) = touched(prev.tree.root_node, old_end), touched(src.tree.root_node, new_end)
    lo, hi_old = min(a0, b0), max(a1, b1 - delta)  # the touched span, in the old text's bytes
    lo_c, hi_c = prev.char(lo), prev.char(hi_old)
    if hi_old - delta > len(src.data) or src.data[:lo] != prev.data[:lo]:
        return None
    dc, dl = len(src.text) - len(prev.text), src.text.count("\n") - prev.text.count("\n")
    before = [f for f in old_fns if f.end_char <= lo_c]
    after = [
        f._replace(
            start=f.start + dl,
            def_line=f.def_line + dl,
            end=f.end + dl,
            signature_end=f.signature_end + dl,
            start_char=f.start_char + dc,
            end_char=f.end_char + dc,
            body_char=f.body_char + dc if f.body_char >= 0 else -1,
        )
        for f in old_fns
        if f.start_char >= hi_c
    ]
    return before, after, lo, hi_old + delta


def _found(src: Source, lo: int, hi: int) -> list[LangFunction]:
    """The functions whose nodes lie in bytes [lo, hi) (whole top-level units, or the whole text)."""
    lang = src.lang
    lexed = lex(src)
    found: list[tuple[ts.Node, ts.Node, str]] = []  # (function node, name node, kind)
    cursor = _queries(lang).functions
    cursor.set_byte_range(lo, hi)
    try:
        captured = cursor.captures(src.tree.root_node).get("f", [])
    finally:
        cursor.set_byte_range(0, 0xFFFFFFFF)
    for node in captured:
        if node.start_byte < lo or node.end_byte > hi:
            continue
        if node.type in lang.lambdas:
            named = _assigned_name(lang, node)
            kind = "lambda"
        else:
            named = _declared_name(lang, node)
            kind = "function"
        if named is None:
            continue
        found.append((node, named, kind))
    found.sort(key=lambda f: f[0].start_byte)
    decisions = per_thread("decisions:" + lang.name, lambda: complexity._DecisionQuery(lang))
    out: list[LangFunction] = []
    for i, (node, name_node, kind) in enumerate(found):
        name = src.node_text(name_node)
        scopes = _scope_names(lang, src, node)
        in_class = any(p.type in lang.classes for p in _ancestors(node))
        if kind == "function":
            if "constructor" in node.type or (scopes and simple(name) in (scopes[-1], "constructor", "__init__")):
                kind = "constructor"
            elif in_class or "method" in node.type or node.child_by_field_name("receiver") is not None:
                kind = "method"
        receiver = node.child_by_field_name("receiver")
        if receiver is not None:  # Go: `func (r *T) M()` is T.M
            types = [c for c in _walk_named(receiver) if c.type == "type_identifier"]
            if types:
                scopes = [*scopes, src.node_text(types[0])]
        if "::" in name:  # C++: `int A::f()` belongs to A
            *outer, name = name.split("::")
            scopes = [*scopes, *outer]
        body = node.child_by_field_name("body")
        inner = []
        for j in range(i + 1, len(found)):  # sorted by start: the nested ones follow directly
            if found[j][0].start_byte >= node.end_byte:
                break
            inner.append(found[j][0])
        cyc, cog, params = _metrics(lang, src, node, name, inner, decisions)
        head = node
        if kind == "lambda" and node.parent is not None:
            grand = node.parent.parent
            head = grand if node.parent.type == "expression_list" and grand is not None else node.parent
        body_char = -1
        if body is not None:  # the first token inside the braces (or the expression of an arrow function)
            first = body.child(0)
            body_char = src.char(first.end_byte if first is not None and first.type == "{" else body.start_byte)
        sig_stop = body.start_byte if body is not None else node.end_byte
        start_char = src.char(head.start_byte)
        out.append(
            LangFunction(
                qualname=".".join([*scopes, name]),
                start=head.start_point.row + 1,
                def_line=name_node.start_point.row + 1,
                end=node.end_point.row + 1 - (node.end_point.column == 0 and node.end_point.row > node.start_point.row),
                signature_end=max(
                    name_node.start_point.row, body.start_point.row if body is not None else node.end_point.row
                )
                + 1,
                signature=_signature(lexed, start_char, src.char(sig_stop)),
                cognitive=cog,
                name=name,
                kind=kind,
                start_char=start_char,
                end_char=src.char(node.end_byte),
                body_char=body_char,
                params=params,
                cyclomatic=cyc,
                depth=sum(1 for _ in _ancestors(node)),
                broken=node.has_error,
            )
        )
    return out


def file_complexity(src: Source) -> tuple[int, int]:
    """(cyclomatic, cognitive) of the whole text: the sum over its outermost function-like nodes (named
    or anonymous), each with everything nested in it, so the figure does not depend on which
    functions are named. Code outside any function adds nothing (as in the Python path)."""
    cached = src.__dict__.get("_file_complexity")
    if cached is not None:
        return cached
    lang = src.lang
    kinds = lang.functions | lang.lambdas
    decisions = per_thread("decisions:" + lang.name, lambda: complexity._DecisionQuery(lang)).positions(
        src.tree.root_node
    )
    cyc = cog = 0
    for node in _queries(lang).functions.captures(src.tree.root_node).get("f", []):
        if any(p.type in kinds for p in _ancestors(node)):
            continue
        name = _declared_name(lang, node) if node.type in lang.functions else _assigned_name(lang, node)
        cyc += 1 + _count(decisions, node.start_byte, node.end_byte)
        cog += _cognitive(lang, src, node, src.node_text(name) if name is not None else "")
    src.__dict__["_file_complexity"] = (cyc, cog)
    return cyc, cog


def simple(name: str) -> str:
    return complexity.simple_name(name)


def _ancestors(node: ts.Node) -> Iterator[ts.Node]:
    p = node.parent
    while p is not None:
        yield p
        p = p.parent


def _walk_named(node: ts.Node) -> Iterator[ts.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.named_children))


def first_function(src: Source) -> LangFunction | None:
    """The paper's choice of function for `body_no_comments`: the shallowest, the earliest on a tie."""
    fs = [f for f in functions(src) if f.body_char >= 0]
    return min(fs, key=lambda f: (f.depth, f.start_char)) if fs else None
