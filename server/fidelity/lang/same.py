"""Statements around an edit, and whether two sides' statements have the same syntax tree.

`same_tree` decides `formatting_only` on the statements an edit touches, not the whole file: the
trees are compared node by node ignoring whitespace and comments, parentheses that only group
(a `parenthesized_expression` is replaced by its content: if the grouping mattered, the tree
around it differs), trailing commas, the optional `;` of languages with automatic semicolons, and
the quote style of string literals where quotes carry no meaning (JavaScript, TypeScript; a
template literal without substitutions equals the plain string).
"""

from __future__ import annotations

from typing import NamedTuple

import tree_sitter as ts

from server.fidelity.lang.parse import Source, language, per_thread

_CLOSERS = frozenset({")", "]", "}", ">"})
_NOT_STATEMENTS = frozenset({"value", "condition", "pattern", "name", "label", "type", "guard"})


class Statement(NamedTuple):
    type: str  # node type (`if_statement`, `return_statement`, `let_declaration`, `method_declaration`, ...)
    start_line: int
    end_line: int
    start: int
    end: int
    head: str  # its first token (`if`, `return`, `const`, a name): what a line-level view calls the statement


def _statement_of(blocks: frozenset[str], node: ts.Node) -> ts.Node:
    while node.parent is not None and node.parent.type not in blocks:
        node = node.parent
    return node


def statement_nodes(src: Source, start: int, end: int) -> list[ts.Node]:
    """The statements (siblings in one container) that overlap characters [start, end)."""
    root = src.tree.root_node
    b0, b1 = src.byte(start), src.byte(max(end, start))
    lo = root.descendant_for_byte_range(b0, b0) or root
    hi = root.descendant_for_byte_range(max(b1 - 1, b0), max(b1 - 1, b0)) or root
    a, b = _statement_of(src.lang.blocks, lo), _statement_of(src.lang.blocks, hi)
    if a.id == b.id:
        return [a] if a.id != root.id else list(root.named_children)
    # climb until both are children of one container
    ancestors_a = []
    n: ts.Node | None = a
    while n is not None:
        ancestors_a.append(n)
        n = n.parent
    ids = {x.id: i for i, x in enumerate(ancestors_a)}
    n = b
    while n is not None and n.id not in ids:
        n = n.parent
    common = n if n is not None else root
    kids = [c for c in common.children if c.end_byte > b0 and c.start_byte < max(b1, b0 + 1)]
    return kids or [common]


def _statement(src: Source, n: ts.Node) -> Statement:
    last = n.end_point.row + 1 - (n.end_point.column == 0 and n.end_point.row > n.start_point.row)
    first = n
    while first.child_count and first.type not in src.lang.atomic:
        first = first.children[0]
    return Statement(
        n.type, n.start_point.row + 1, last, src.char(n.start_byte), src.char(n.end_byte), src.node_text(first)
    )


def statements_at(src: Source, start: int, end: int) -> list[Statement]:
    """The statements an edit of characters [start, end) touches (siblings in one block)."""
    return [_statement(src, n) for n in statement_nodes(src, start, end)]


def statements(src: Source) -> list[Statement]:
    """Every statement of the text (each child of a block, class body, case, or the top level), in
    text order; nested statements follow the one holding them. Cached on the Source."""
    cached = src.__dict__.get("_statements")
    if cached is not None:
        return cached
    lang = src.lang

    def make() -> ts.QueryCursor:
        lg = language(lang)
        kinds = [k for k in sorted(lang.blocks) if lg.id_for_node_kind(k, True)]
        return ts.QueryCursor(ts.Query(lg, "[" + " ".join(f"({k})" for k in kinds) + "] @c"))

    cursor = per_thread("statements:" + lang.name, make)
    nodes = list(src.tree.root_node.named_children)
    for c in cursor.captures(src.tree.root_node).get("c", []):
        for i, child in enumerate(c.children):  # not a case's value or label, nor a namespace's name
            if child.is_named and c.field_name_for_child(i) not in _NOT_STATEMENTS and child.type != "switch_label":
                nodes.append(child)
    seen: set[int] = set()
    out = []
    for n in sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte)):
        if (
            n.id in seen
            or n.type in lang.comments
            or n.type in lang.blocks
            and n.parent is not None
            and n.parent.type in lang.blocks
        ):
            continue
        seen.add(n.id)
        out.append(_statement(src, n))
    src.__dict__["_statements"] = out
    return out


def _string_value(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        inner = text[1:-1]
        return "s:" + inner.replace("\\'", "'").replace('\\"', '"').replace("\\`", "`")
    return text


def canonical(src: Source, nodes: list[ts.Node]) -> list[str]:
    """The nodes' trees as a flat list of markers and leaf texts, modulo the differences above."""
    lang = src.lang
    out: list[str] = []
    stack: list[ts.Node | str] = list(reversed(nodes))
    while stack:
        n = stack.pop()
        if isinstance(n, str):
            out.append(n)
            continue
        t = n.type
        if t in lang.comments or n.start_byte == n.end_byte:
            continue
        if n.is_error or n.is_missing:
            out.append("\x00error")
        if t in lang.parens:
            inner = [c for c in n.named_children if c.type not in lang.comments]
            if len(inner) == 1:
                stack.append(inner[0])
                continue
        if n.child_count == 0 or t in lang.atomic:
            text = src.node_text(n)
            if t in lang.optional:
                continue
            if t in lang.strings or (t == "template_string" and "${" not in text):
                out.append(_string_value(text))
            else:
                out.append(text)
            continue
        out.append("(" + t)
        children = n.children
        items: list[ts.Node | str] = []
        for i, c in enumerate(children):
            if c.type == "," and (i + 1 == len(children) or children[i + 1].type in _CLOSERS):
                continue  # a trailing comma
            items.append(c)
        items.append(")")
        stack.extend(reversed(items))
    return out


def same_tree(a: Source, a_span: tuple[int, int], b: Source, b_span: tuple[int, int]) -> bool:
    """Whether the statements around a_span (in a) and b_span (in b) have identical trees.

    Spans are character intervals; each side's statements are those its span overlaps. A side with
    a parse error in those statements is never the same (its tree is a guess).
    """
    na = statement_nodes(a, *a_span)
    nb = statement_nodes(b, *b_span)
    if any(n.has_error for n in na) or any(n.has_error for n in nb):
        return False
    return canonical(a, na) == canonical(b, nb)


def same_text_tree(a: Source, b: Source) -> bool:
    """Whether two whole texts have identical trees (formatting-only edit of the whole file)."""
    if a.has_error or b.has_error:
        return False
    return canonical(a, [a.tree.root_node]) == canonical(b, [b.tree.root_node])
