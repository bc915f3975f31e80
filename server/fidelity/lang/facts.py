"""Syntax facts the unit classifier needs, per language, as plain data with lines and character spans.

- `comments`: every comment, whether it is a doc comment (`/** */`, `///`, `//!`, or in Go the
  comment block right above a declaration) and whether it is a lazy placeholder
  (`// ... existing code ...`, `/* rest of the function unchanged */`);
- `imports`: import / `#include` / `use` statements and the names they bring in;
- `guards`: defensive forms: an `if` on a null/undefined/nil check, a `typeof`/`instanceof` test or an
  emptiness test that exits early or throws, Go's `if err != nil { return ... }`, library null checks
  (`Objects.requireNonNull`), asserts, try/catch (the `try` line and the handlers, not the body),
  Rust's `match`/`if let` on `Some`/`None`/`Ok`/`Err` (what replaces an `unwrap`), and null-safe
  access (`?.`);
- `unwraps`: `.unwrap()` / `.expect(...)` calls (their disappearance next to a new match is defensive);
- `bindings`: every declared name with its kind (function, method, constructor, parameter, local,
  global, class, import) and the function it belongs to, for rename detection.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import NamedTuple

import tree_sitter as ts

from server.fidelity.lang.functions import functions
from server.fidelity.lang.lex import lex
from server.fidelity.lang.parse import Source, language, per_thread
from server.fidelity.lang.table import Lang


class Comment(NamedTuple):
    start_line: int
    end_line: int
    start: int
    end: int
    text: str
    doc: bool
    placeholder: bool


class Import(NamedTuple):
    start_line: int
    end_line: int
    start: int
    end: int
    text: str
    names: tuple[str, ...]  # names the statement binds (aliases, imported names, a path's last part)


class Guard(NamedTuple):
    start_line: int
    end_line: int
    start: int
    end: int
    kind: str  # null_check, type_check, emptiness, err_check, raise, library_null_check, assert, try_catch,
    #            option_match, null_safe
    description: str


class Binding(NamedTuple):
    name: str
    kind: str
    line: int
    start: int
    end: int
    scope: str  # qualname of the function it belongs to, "" at top level


# An omission marker in any comment syntax: "... existing code ...", "rest of the function unchanged".
_PLACEHOLDER = re.compile(
    r"(?:\.\.\.|…)\s*(?:existing|rest|remaining|unchanged|same|previous|other|original|omitted|more)\b"
    r"|\b(?:rest|remainder) of (?:the )?(?:code|file|function|class|method|implementation|body|logic)\b"
    r"|\b(?:existing|remaining|previous|original|other) (?:code|implementation|logic|methods?|functions?|lines)\b"
    r"|\b(?:unchanged|same as (?:before|above|original)|omitted for brevity|as before)\b"
    r"|^\s*(?:\.\.\.|…)\s*$",
    re.IGNORECASE,
)
_MARKERS = re.compile(r"^\s*(?://+!?|/\*+!?|#)|\*+/\s*$")
_RAISE_CALLS = frozenset({"panic", "unreachable", "abort", "exit", "todo", "unimplemented"})
_ASSERTS = frozenset({"assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq", "static_assert"})
_EXITS = ("return", "throw", "continue", "break")
_OPTION_PATTERNS = re.compile(r"\b(?:Some|None|Ok|Err)\b")


def is_placeholder(comment: str) -> bool:
    body = _MARKERS.sub("", comment).strip()
    return bool(_PLACEHOLDER.search(body)) or body in ("", "...", "…") and "..." in comment


class _FactQueries:
    def __init__(self, lang: Lang) -> None:
        lg = language(lang)
        groups = {
            "import": lang.imports,
            "if": lang.ifs,
            "try": lang.tries,
            "decl": lang.declarators,
            "class": lang.classes,
            "call": frozenset(lang.calls) | {"macro_invocation", "assert_statement"},
            "switch": lang.switches,
            "chain": frozenset({"optional_chain"}),
        }
        parts = []
        for tag, kinds in groups.items():
            present = [k for k in sorted(kinds) if lg.id_for_node_kind(k, True)]
            if present:
                parts.append("[" + " ".join(f"({k})" for k in present) + f"] @{tag}")
        self.cursor = ts.QueryCursor(ts.Query(lg, "\n".join(parts)))


def _captures(src: Source) -> dict[str, list[ts.Node]]:
    cached = src.__dict__.get("_captures")
    if cached is None:
        q = per_thread("facts:" + src.lang.name, lambda: _FactQueries(src.lang))
        cached = src.__dict__["_captures"] = q.cursor.captures(src.tree.root_node)
    return cached


def _span(src: Source, node: ts.Node) -> tuple[int, int, int, int]:
    last = node.end_point.row + 1 - (node.end_point.column == 0 and node.end_point.row > node.start_point.row)
    return node.start_point.row + 1, last, src.char(node.start_byte), src.char(node.end_byte)


def comments(src: Source) -> list[Comment]:
    lexed = lex(src)
    lang = src.lang
    out: list[Comment] = []
    decl_rows: set[int] = set()
    if lang.doc_adjacent:  # Go: a comment block ending right above a declaration documents it
        decl_rows = {f.start for f in functions(src)} | {
            n.start_point.row + 1 for n in src.tree.root_node.named_children if n.type not in lang.comments
        }
    for i, ((row, text), (start, end)) in enumerate(zip(lexed.comments, lexed.comment_spans)):
        end_row = lexed.comment_end_rows[i]
        doc = text.startswith(lang.doc_prefixes) if lang.doc_prefixes else False
        if lang.doc_adjacent:
            k, last = i, end_row
            while k + 1 < len(lexed.comments) and lexed.comments[k + 1][0] == last + 1:
                k += 1
                last = lexed.comment_end_rows[k]
            doc = last + 1 in decl_rows
        out.append(Comment(row, end_row, start, end, text, doc, is_placeholder(text)))
    return out


_IMPORT_NAMES = frozenset({"identifier", "type_identifier", "package_identifier"})


def _import_bound(src: Source, node: ts.Node) -> list[str]:
    """Names an import binds: aliases, imported names, the last part of a path; not the path's scopes."""
    bound: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.child_count == 0:
            if n.type in _IMPORT_NAMES:
                bound.append(src.node_text(n))
            continue
        alias = n.child_by_field_name("alias")
        path = n.child_by_field_name("path")
        if src.lang.import_path_binds and path is not None and n.child_by_field_name("name") is None:
            bound.append(src.node_text(path).strip('"`').rsplit("/", 1)[-1])  # Go: "net/http" binds http
            continue
        for i in range(n.child_count - 1, -1, -1):
            f = n.field_name_for_child(i)
            if f in ("scope", "path") and n.type in ("scoped_identifier", "scoped_use_list", "scoped_type_identifier"):
                continue
            if alias is not None and f in ("name", "path"):
                continue
            stack.append(n.children[i])
    return bound


def _require(src: Source, node: ts.Node) -> list[str] | None:
    """The names a top-level `const a = require('m'), {b} = require('n');` binds; None when any
    declarator is something else (then it is code, not an import)."""
    if node.type not in ("lexical_declaration", "variable_declaration"):
        return None
    names: list[str] = []
    for d in node.named_children:
        if d.type != "variable_declarator":
            continue
        value, name = d.child_by_field_name("value"), d.child_by_field_name("name")
        callee = (
            value.child_by_field_name("function") if value is not None and value.type == "call_expression" else None
        )
        if callee is None or name is None or src.node_text(callee) not in src.lang.require_calls:
            return None
        names += [
            src.node_text(n) for n in ([name] if name.child_count == 0 else name.named_children) if n.child_count == 0
        ]
    return names or None


def imports(src: Source) -> list[Import]:
    out = []
    nodes = list(_captures(src).get("import", []))
    bound: dict[int, list[str]] = {}
    if src.lang.require_calls:  # CommonJS: `require` at the top level is how a script imports
        for node in src.tree.root_node.named_children:
            if (names := _require(src, node)) is not None:
                nodes.append(node)
                bound[node.start_byte] = names
    for node in nodes:
        a, b, start, _ = _span(src, node)
        text = src.node_text(node).rstrip()  # a C `#include` node ends with its line break
        names = bound.get(node.start_byte)
        out.append(
            Import(
                a, b, start, start + len(text), text, tuple(names if names is not None else _import_bound(src, node))
            )
        )
    out.sort(key=lambda i: i.start)
    return out


def _first_statement(lang: Lang, node: ts.Node | None) -> ts.Node | None:
    """The first statement of a branch (inside braces), unwrapped from an expression statement."""
    while node is not None:
        named = [c for c in node.named_children if c.type not in lang.comments]
        if node.type.endswith(("block", "compound_statement", "statement_list")) or node.type == "else_clause":
            node = named[0] if named else None
            continue
        if node.type == "expression_statement" and named:
            node = named[0]
            continue
        return node
    return None


def _callee(src: Source, node: ts.Node) -> str:
    lang = src.lang
    if node.type == "macro_invocation":
        m = node.child_by_field_name("macro")
        return src.node_text(m) if m is not None else ""
    field = lang.calls.get(node.type)
    callee = node.child_by_field_name(field) if field else None
    if node.type == "method_invocation":
        obj = node.child_by_field_name("object")
        name = src.node_text(callee) if callee is not None else ""
        return f"{src.node_text(obj)}.{name}" if obj is not None else name
    return src.node_text(callee) if callee is not None else ""


def _exit_kind(src: Source, stmt: ts.Node | None) -> str | None:
    if stmt is None:
        return None
    t = stmt.type
    if t.startswith("throw") or t in src.lang.throws and t != "macro_invocation":
        return "raise"
    if t in src.lang.calls or t == "macro_invocation":
        return "raise" if _callee(src, stmt).split(".")[-1] in _RAISE_CALLS else None
    if t.startswith(_EXITS) or t in src.lang.jumps:
        return "exit"
    return None


def _check_kind(src: Source, cond: ts.Node | None) -> str | None:
    """What an if's condition inspects: None-ness, a type, emptiness, Go's err; None for no such check."""
    if cond is None:
        return None
    lang = src.lang
    text = src.node_text(cond)
    stack = [cond]
    found = None
    while stack:
        n = stack.pop()
        if n.type in lang.type_checks:
            return "type_check"
        if n.child_count == 0 or n.type in lang.atomic:
            leaf = src.node_text(n)
            if leaf in lang.type_checks:
                return "type_check"
            if leaf in lang.nulls or n.type in lang.nulls:
                found = "err_check" if re.search(r"\berr\w*\s*!=\s*nil\b", text) else "null_check"
            continue
        if n.type == "unary_expression" and n.child(0) is not None and n.child(0).type == "!":
            arg = n.child_by_field_name("argument") or n.child_by_field_name("operand")
            if arg is not None and arg.type in lang.identifiers and found is None:
                found = "emptiness"
        stack.extend(n.children)
    if found is None and re.search(r"\.(?:length|size|isEmpty|is_empty|empty|len)\b|\blen\(", text):
        found = "emptiness"
    return found


def guards(src: Source) -> list[Guard]:
    lang = src.lang
    caps = _captures(src)
    out: list[Guard] = []
    for node in caps.get("if", []):
        cond = node.child_by_field_name("condition")
        consequence = node.child_by_field_name("consequence")
        first = _first_statement(lang, consequence)
        exit_kind = _exit_kind(src, first)
        if cond is not None and cond.type == "let_condition" and _OPTION_PATTERNS.search(src.node_text(cond)):
            a, b, s, e = _span(src, node)
            out.append(Guard(a, b, s, e, "option_match", "an `if let` on an Option/Result"))
            continue
        if exit_kind is None:
            continue
        what = _check_kind(src, cond)
        a, _, s, _ = _span(src, node)
        end_node = first if first is not None else node
        _, b, _, e = _span(src, end_node)
        if consequence is not None and consequence.end_byte > end_node.end_byte:
            _, b, _, e = _span(src, consequence)
        if exit_kind == "raise":
            out.append(Guard(a, b, s, e, what or "raise", "a raise on invalid input"))
        elif what:
            out.append(Guard(a, b, s, e, what, f"an early exit on {what.replace('_', ' ')}"))
    for node in caps.get("try", []):
        handlers = [c for c in node.named_children if c.type in lang.catches or c.type == "finally_clause"]
        if not any(c.type in lang.catches for c in handlers):
            continue
        a, _, s, _ = _span(src, node)
        out.append(Guard(a, a, s, s + 3, "try_catch", "a try/catch"))
        for h in handlers:
            out.append(Guard(*_span(src, h), "try_catch", "a try/catch"))
    for node in caps.get("call", []):
        name = _callee(src, node)
        if node.type == "assert_statement" or name.rstrip("!") in _ASSERTS:
            out.append(Guard(*_span(src, node), "assert", "an assert"))
        elif name in lang.null_checks or name.split(".")[-1] in lang.null_checks:
            out.append(Guard(*_span(src, node), "library_null_check", f"a null check ({name})"))
    for node in caps.get("switch", []):
        body = node.child_by_field_name("body")
        if (
            lang.match_arms
            and body is not None
            and _OPTION_PATTERNS.search(
                " ".join(
                    src.node_text(c.child_by_field_name("pattern") or c)
                    for c in body.named_children
                    if c.type == lang.match_arms
                )
            )
        ):
            out.append(Guard(*_span(src, node), "option_match", "a match on an Option/Result"))
    for node in caps.get("chain", []):
        out.append(Guard(*_span(src, node), "null_safe", "a null-safe access (?.)"))
    out.sort(key=lambda g: (g.start, g.end))
    return out


def unwraps(src: Source) -> list[tuple[int, int, int]]:
    """(line, start, end) of each `.unwrap()` / `.expect(...)` call."""
    out = []
    for node in _captures(src).get("call", []):
        name = _callee(src, node)
        if name.endswith((".unwrap", ".expect")):
            out.append((node.start_point.row + 1, src.char(node.start_byte), src.char(node.end_byte)))
    return out


def _names_in(src: Source, node: ts.Node | None) -> list[ts.Node]:
    """Identifier leaves a declaration target binds (types and initial values skipped)."""
    if node is None:
        return []
    lang = src.lang
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.child_count == 0:
            if n.type in lang.identifiers:
                out.append(n)
            continue
        children = n.children
        for i in range(len(children) - 1, -1, -1):
            f = n.field_name_for_child(i)
            if f not in ("type", "value", "right", "default_value", "arguments", "size", "function", "field"):
                stack.append(children[i])
    return out


def bindings(src: Source) -> list[Binding]:
    lang = src.lang
    fns = sorted(functions(src), key=lambda f: (f.start_char, -f.end_char))
    out: list[Binding] = []

    starts = [f.start_char for f in fns]  # text order: a nested function follows its parent
    parent: list[int] = []
    open_stack: list[int] = []
    for i, f in enumerate(fns):
        while open_stack and fns[open_stack[-1]].end_char <= f.start_char:
            open_stack.pop()
        parent.append(open_stack[-1] if open_stack else -1)
        open_stack.append(i)

    def scope_of(pos: int) -> str:
        """The innermost function around a character offset (walks up the nesting, not the list)."""
        j = bisect_right(starts, pos) - 1
        while j >= 0 and not fns[j].end_char > pos:
            j = parent[j]
        return fns[j].qualname if j >= 0 else ""

    for f in fns:
        out.append(
            Binding(
                f.name,
                f.kind if f.kind != "lambda" else "function",
                f.def_line,
                f.start_char,
                f.end_char,
                scope_of(f.start_char - 1) if f.start_char else "",
            )
        )
        for p in f.params:
            out.append(Binding(p, "parameter", f.def_line, f.start_char, f.end_char, f.qualname))
    for node in _captures(src).get("decl", []):
        if node.type in lang.lambdas:
            continue
        targets = [
            c
            for i, c in enumerate(node.children)
            if node.field_name_for_child(i) in ("name", "pattern", "left", "declarator")
        ]
        for target in targets:
            if any(target.type == t for t in lang.lambdas):
                continue
            for n in _names_in(src, target):
                pos = src.char(n.start_byte)
                scope = scope_of(pos)
                out.append(
                    Binding(
                        src.node_text(n),
                        "local" if scope else "global",
                        n.start_point.row + 1,
                        pos,
                        src.char(n.end_byte),
                        scope,
                    )
                )
    for node in _captures(src).get("class", []):
        name = node.child_by_field_name("name")
        if name is not None:
            out.append(
                Binding(
                    src.node_text(name),
                    "class",
                    name.start_point.row + 1,
                    src.char(name.start_byte),
                    src.char(name.end_byte),
                    scope_of(src.char(node.start_byte)),
                )
            )
    for imp in imports(src):
        for bound in imp.names:
            out.append(Binding(bound, "import", imp.start_line, imp.start, imp.end, ""))
    # the same name bound twice at one place (a lambda's name and its declarator) is one binding
    seen: set[tuple[str, int, str]] = set()
    unique = []
    for b in sorted(out, key=lambda b: (b.start, b.name)):
        if (b.name, b.line, b.kind) in seen:
            continue
        seen.add((b.name, b.line, b.kind))
        unique.append(b)
    return unique
