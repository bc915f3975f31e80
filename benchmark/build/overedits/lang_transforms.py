"""Known unrequested changes for JavaScript, TypeScript, Java and C++, on tree-sitter trees.

The same contract as `transforms.py`: a transform reads the current text (parsed with the core's
grammar, `server.fidelity.lang.parse`) and the target function, and returns replacements
(start, end, new text) in characters that keep the program's behaviour on valid input: a rename of
a local, a parameter or a helper (every use in scope, never a member or a shorthand property), a
reformat, a quote or parenthesis change, a removed comment or doc comment, an added guard in the
language's own form (`=== null`, `typeof`, `instanceof`, `Objects.requireNonNull`), try/catch that
re-throws around the body, an unused import or include, a placeholder comment, a helper added outside
the target. A family a language has no safe form of returns None there (quotes in Java and C++
mean char vs string; a null guard on a C++ pointer would change what an empty tree returns).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import tree_sitter as ts

from benchmark.build.corruptions.choice import Chooser
from server.fidelity.lang.facts import comments
from server.fidelity.lang.functions import LangFunction, functions
from server.fidelity.lang.parse import Source

Replacement = tuple[int, int, str]
Transform = Callable[[str, Source, LangFunction, Chooser], "list[Replacement] | None"]

# transform family -> the classifier kinds its change must get (a parameter rename is a rename only:
# these languages have no keyword arguments, so callers are not broken)
KINDS: dict[str, tuple[str, ...]] = {
    "rename_local": ("rename",),
    "rename_parameter": ("rename",),
    "rename_function": ("rename",),
    "reformat": ("formatting_only",),
    "quotes": ("formatting_only",),
    "parentheses": ("formatting_only",),
    "comment_removed": ("comment_removed",),
    "doc_comment_removed": ("docstring",),
    "null_guard": ("defensive",),
    "typeof_guard": ("defensive",),
    "instanceof_guard": ("defensive",),
    "require_non_null": ("defensive",),
    "try_catch": ("defensive",),
    "unused_import": ("import_change",),
    "lazy_placeholder": ("lazy_placeholder",),
    "outside_target": ("logic", "outside_target"),
}

JS_LIKE = frozenset({"javascript", "typescript", "tsx"})
_JAVA_PRIMITIVES = frozenset({"integral_type", "floating_point_type", "boolean_type", "void_type"})
# (parent type, field) of an `identifier` leaf that names a member or method, not a variable
_MEMBER_USES = frozenset(
    {
        ("method_invocation", "name"),
        ("field_access", "field"),
        ("method_declaration", "name"),
        ("qualified_identifier", "name"),
        ("scoped_identifier", "name"),
    }
)
_DECLARATOR_WRAPPERS = frozenset({"init_declarator", "array_declarator", "pointer_declarator", "reference_declarator"})


# ------------------------------------------------------------------ tree helpers


def nodes(node: ts.Node) -> Iterator[ts.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def field_of(node: ts.Node) -> str | None:
    parent = node.parent
    if parent is None:
        return None
    for i, c in enumerate(parent.children):
        if c.start_byte == node.start_byte and c.end_byte == node.end_byte and c.type == node.type:
            return parent.field_name_for_child(i)
    return None


def _chars(src: Source, node: ts.Node) -> tuple[int, int]:
    return src.char(node.start_byte), src.char(node.end_byte)


def _within(src: Source, node: ts.Node, fn: LangFunction) -> bool:
    s, e = _chars(src, node)
    return fn.start_char <= s and e <= fn.end_char


def _root_in(src: Source, fn: LangFunction) -> ts.Node:
    """The smallest node holding the whole function."""
    return (
        src.tree.root_node.descendant_for_byte_range(src.byte(fn.start_char), src.byte(fn.end_char) - 1)
        or src.tree.root_node
    )


def body_block(src: Source, fn: LangFunction) -> ts.Node | None:
    """The function's braced body (None for an arrow function with an expression body)."""
    if fn.body_char < 0:
        return None
    b = src.byte(fn.body_char)  # just after the body's "{"
    leaf = src.tree.root_node.descendant_for_byte_range(b - 1, b)
    if leaf is None or leaf.type != "{" or leaf.parent is None:
        return None
    return leaf.parent


def statements(src: Source, fn: LangFunction) -> list[ts.Node]:
    block = body_block(src, fn)
    if block is None:
        return []
    return [c for c in block.named_children if c.type not in src.lang.comments]


def identifiers(src: Source) -> set[str]:
    return {src.node_text(n) for n in nodes(src.tree.root_node) if n.child_count == 0}


def line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _line_of(starts: list[int], pos: int) -> int:
    """0-based line of a character offset."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _own_line(text: str, starts: list[int], s: int) -> bool:
    """Does only whitespace precede offset `s` on its line?"""
    return not text[starts[_line_of(starts, s)] : s].strip()


def _indent_at(text: str, starts: list[int], s: int) -> str:
    row = text[starts[_line_of(starts, s)] :]
    return row[: len(row) - len(row.lstrip(" \t"))]


def _unit(lang: str) -> str:
    return "  " if lang in JS_LIKE else "    "


def _fresh(name: str, taken: set[str], ch: Chooser, lang: str) -> str:
    cap = name[:1].upper() + name[1:]
    options = (
        [f"{name}_value", f"the_{name}", f"{name}_data", f"{name}2", f"my_{name}"]
        if lang == "cpp"
        else [f"{name}Value", f"the{cap}", f"{name}Data", f"{name}2", f"my{cap}"]
    )
    for candidate in ch.shuffled(options):
        if candidate not in taken:
            return candidate
    return name + "Renamed"


# ------------------------------------------------------------------ renames


def _is_declaration(n: ts.Node) -> bool:
    """Is this identifier leaf where a local variable is declared?"""
    f, p = field_of(n), n.parent
    while p is not None and p.type in _DECLARATOR_WRAPPERS and f == "declarator":  # C++: `int *x = ...`
        n, f, p = p, field_of(p), p.parent
    if p is None:
        return False
    return (
        (p.type == "variable_declarator" and f == "name")
        or (p.type == "for_in_statement" and f == "left")
        or (p.type in ("enhanced_for_statement", "catch_formal_parameter") and f == "name")
        or (p.type in ("declaration", "for_range_loop") and f == "declarator")
        or (p.type == "reference_declarator" and n.type == "identifier")
    )


def _uses(src: Source, scope: ts.Node, name: str, fn: LangFunction | None) -> list[ts.Node] | None:
    """The identifier leaves naming the variable `name` in scope; None where renaming them could
    change meaning (a shorthand property `{x}` names the key too)."""
    out = []
    for n in nodes(scope):
        if n.child_count or src.node_text(n) != name or (fn is not None and not _within(src, n, fn)):
            continue
        if n.type in ("shorthand_property_identifier", "shorthand_property_identifier_pattern"):
            return None
        if n.type == "identifier" and (n.parent is None or (n.parent.type, field_of(n)) not in _MEMBER_USES):
            out.append(n)
    return out


def _rename_in(src: Source, leaves: list[ts.Node], new: str) -> list[Replacement]:
    return [(*_chars(src, n), new) for n in leaves]


def rename_local(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
    scope = _root_in(src, fn)
    declared: dict[str, list[ts.Node]] = {}
    for n in nodes(scope):
        if n.type == "identifier" and _within(src, n, fn) and src.node_text(n) not in fn.params and _is_declaration(n):
            declared.setdefault(src.node_text(n), [])
    options = []
    for name in sorted(declared):
        uses = _uses(src, scope, name, fn)
        # the first use in the function is the declaration: no outer variable of that name is read first
        if uses and _is_declaration(uses[0]):
            options.append((name, uses))
    if not options:
        return None
    name, uses = ch.pick(options)
    return _rename_in(src, uses, _fresh(name, identifiers(src), ch, src.lang.name))


def rename_parameter(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
    scope = _root_in(src, fn)
    options = [(p, u) for p in fn.params if p not in ("self", "this") and (u := _uses(src, scope, p, fn))]
    if not options:
        return None
    name, uses = ch.pick(options)
    return _rename_in(src, uses, _fresh(name, identifiers(src), ch, src.lang.name))


def _callee_or_definition(n: ts.Node) -> bool:
    p, f = n.parent, field_of(n)
    if p is None:
        return False
    if (p.type, f) in (
        ("call_expression", "function"),
        ("method_invocation", "name"),
        ("function_declarator", "declarator"),
        ("function_declaration", "name"),
        ("method_declaration", "name"),
        ("method_definition", "name"),
    ):
        obj = p.child_by_field_name("object")
        return p.type != "method_invocation" or obj is None or obj.type == "this"
    obj = p.child_by_field_name("object")
    if p.type in ("member_expression", "field_expression") and obj is not None and obj.type == "this":
        return p.parent is not None and p.parent.type == "call_expression" and field_of(p) == "function"
    return False


def rename_function(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
    fs = functions(src)
    names = [f.name for f in fs]
    # never the program's interface: the first function (what a harness or a test calls: can-ai-code
    # grades the first function, LeetCode's judge calls the solution's) or one the target lies in
    first = min((f for f in fs if f.kind != "lambda"), key=lambda f: f.start_char, default=None)
    helpers = sorted(
        {
            f.name
            for f in fs
            if f.kind in ("function", "method")
            and f.name not in (fn.name, "main")
            and names.count(f.name) == 1
            and f is not first
            and not (f.start_char <= fn.start_char and fn.end_char <= f.end_char)
        }
    )
    options = []
    for name in helpers:
        leaves = [n for n in nodes(src.tree.root_node) if n.child_count == 0 and src.node_text(n) == name]
        if leaves and all(
            n.type in ("identifier", "field_identifier", "property_identifier") and _callee_or_definition(n)
            for n in leaves
        ):
            options.append((name, leaves))
    if not options:
        return None
    name, leaves = ch.pick(options)
    return _rename_in(src, leaves, _fresh(name, identifiers(src), ch, src.lang.name))


# ------------------------------------------------------------------ formatting

_ARGS = {"call_expression": "arguments", "method_invocation": "arguments"}


def reformat(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
    """Split a one-line call's arguments over several lines, or drop the spaces around an `=`."""
    starts = line_starts(text)
    calls = []
    for n in nodes(src.tree.root_node):
        args = n.child_by_field_name(_ARGS[n.type]) if n.type in _ARGS else None
        if args is None or n.start_point.row != n.end_point.row:
            continue
        parts = list(args.named_children)
        if len(parts) >= 2 and not any(a.type in src.lang.comments for a in parts):
            calls.append(parts)
    if calls and ch.coin():
        parts = ch.pick(calls)
        s, e = src.char(parts[0].start_byte), src.char(parts[-1].end_byte)
        indent = _indent_at(text, starts, s)
        inner = indent + _unit(src.lang.name) * 2
        pieces = [src.node_text(a) for a in parts]
        return [(s, e, "\n" + inner + (",\n" + inner).join(pieces) + "\n" + indent)]
    found = []
    for n in nodes(src.tree.root_node):
        if (
            n.type == "="
            and n.parent is not None
            and n.parent.type in ("variable_declarator", "init_declarator", "assignment_expression")
        ):
            at = src.char(n.start_byte)
            if text[at - 1 : at + 2] == " = ":
                found.append(at - 1)
    if not found:
        return None
    at = ch.pick(found)
    return [(at, at + 3, "=")]


def quotes(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
    if src.lang.name not in JS_LIKE:
        return None  # 'a' is a char and "a" a string: no quote style to change
    options = []
    for n in nodes(src.tree.root_node):
        if n.type == "string":
            s = src.node_text(n)
            if (
                len(s) >= 2
                and s[0] in "'\""
                and "\\" not in s
                and ("'" if s[0] == '"' else '"') not in s[1:-1]
                and "\n" not in s
            ):
                other = "'" if s[0] == '"' else '"'
                a, b = _chars(src, n)
                options.append((a, b, other + s[1:-1] + other))
    return [ch.pick(options)] if options else None


def parentheses(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
    options = []
    for n in nodes(src.tree.root_node):
        if n.type != "binary_expression" or n.parent is None or n.start_point.row != n.end_point.row:
            continue
        p, f = n.parent, field_of(n)
        if (
            p.type == "return_statement"
            or (p.type in ("variable_declarator", "init_declarator") and f == "value")
            or (p.type == "assignment_expression" and f == "right")
        ):
            options.append(_chars(src, n))
    if not options:
        return None
    s, e = ch.pick(sorted(options))
    return [(s, s, "("), (e, e, ")")]


# ------------------------------------------------------------------ comments


def _comment_removal(text: str, starts: list[int], s: int, e: int) -> Replacement | None:
    first, last = _line_of(starts, s), _line_of(starts, max(e - 1, s))
    before = text[starts[first] : s]
    end_of_line = starts[last + 1] if last + 1 < len(starts) else len(text)
    after = text[e:end_of_line]
    if after.strip():
        return None  # code after the comment on its line: not a plain removal
    if not before.strip():
        return starts[first], end_of_line, ""  # a whole-line comment: the lines go
    return starts[first] + len(before.rstrip()), e, ""


def _comments(doc: bool) -> Transform:
    def run(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
        starts = line_starts(text)
        options = [
            r
            for c in comments(src)
            if c.doc == doc
            and not c.placeholder
            and (not doc or _own_line(text, starts, c.start))
            and (r := _comment_removal(text, starts, c.start, c.end)) is not None
        ]
        return [ch.pick(options)] if options else None

    return run


# ------------------------------------------------------------------ defensive additions


def _params(src: Source, fn: LangFunction, *, references: bool) -> list[str]:
    """Parameter names a guard may test: plain identifiers (JS/TS); reference types only (Java)."""
    out = []
    for n in nodes(_root_in(src, fn)):
        if src.lang.name == "java" and n.type == "formal_parameter" and _within(src, n, fn):
            t, name = n.child_by_field_name("type"), n.child_by_field_name("name")
            if name is not None and t is not None and (not references or t.type not in _JAVA_PRIMITIVES):
                out.append(src.node_text(name))
        elif src.lang.name in JS_LIKE and n.type == "formal_parameters" and _within(src, n, fn):
            for c in n.named_children:
                pat = c.child_by_field_name("pattern") if c.type in ("required_parameter", "optional_parameter") else c
                if pat is not None and pat.type == "identifier":
                    out.append(src.node_text(pat))
            break
    return [p for p in dict.fromkeys(out) if p in fn.params]


def _insert_at_body(text: str, src: Source, fn: LangFunction, lines: list[str]) -> list[Replacement] | None:
    stmts = statements(src, fn)
    if not stmts or fn.kind == "constructor":
        return None  # a constructor's first statement may have to be this(...) / super(...)
    starts = line_starts(text)
    s = src.char(stmts[0].start_byte)
    if not _own_line(text, starts, s):
        return None
    at = starts[_line_of(starts, s)]
    indent = _indent_at(text, starts, s)
    return [(at, at, "".join(indent + ln + "\n" for ln in lines))]


def _guard(kind: str) -> Transform:
    def run(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
        lang, u = src.lang.name, _unit(src.lang.name)
        if lang not in JS_LIKE and lang != "java":
            return None
        if kind == "typeof_guard" and lang == "java" or kind == "require_non_null" and lang != "java":
            return None
        params = _params(src, fn, references=lang == "java")
        if not params:
            return None
        p = ch.pick(params)
        if lang in JS_LIKE:
            lines = {
                "null_guard": [f"if ({p} === null || {p} === undefined) {{", f"{u}return undefined;", "}"],
                "typeof_guard": [
                    f"if (typeof {p} === 'undefined') {{",
                    f"{u}throw new TypeError('{p} is required');",
                    "}",
                ],
                "instanceof_guard": [
                    f"if ({p} instanceof Promise) {{",
                    f"{u}throw new TypeError('{p} must not be a Promise');",
                    "}",
                ],
            }[kind]
        elif kind == "require_non_null":
            short = "import java.util.Objects;" in text or "import java.util.*;" in text
            lines = [f'{"" if short else "java.util."}Objects.requireNonNull({p}, "{p} must not be null");']
        else:
            test = f"{p} == null" if kind == "null_guard" else f"!({p} instanceof Object)"
            lines = [f"if ({test}) {{", f'{u}throw new IllegalArgumentException("{p} is invalid");', "}"]
        return _insert_at_body(text, src, fn, lines)

    return run


def try_catch(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
    """The body in try/catch that re-throws: one insertion per line, so the spans of earlier changes
    inside the body move with their lines."""
    stmts = statements(src, fn)
    block = body_block(src, fn)
    if not stmts or block is None or fn.kind == "constructor":
        return None
    starts = line_starts(text)
    s, e = src.char(stmts[0].start_byte), src.char(stmts[-1].end_byte)
    close = src.char(block.end_byte) - 1
    if not _own_line(text, starts, s) or not _own_line(text, starts, close):
        return None
    first, last = _line_of(starts, s), _line_of(starts, e - 1)
    if any(
        n.start_point.row != n.end_point.row and (n.type in src.lang.atomic or n.type in src.lang.comments)
        for n in nodes(block)
    ):
        return None  # indenting a multi-line literal would change its value
    if text[e : starts[last + 1] if last + 1 < len(starts) else len(text)].strip():
        return None
    indent, u = _indent_at(text, starts, s), _unit(src.lang.name)
    lang = src.lang.name
    handler = {"java": ("RuntimeException e", "throw e;"), "cpp": ("...", "throw;")}.get(lang, ("e", "throw e;"))
    # the first line's extra indent goes with `try {`: two insertions at one place would sort the other way
    reps: list[Replacement] = [(starts[first], starts[first], f"{indent}try {{\n{u}")]
    for line in range(first + 1, last + 1):
        if text[starts[line] : starts[line + 1]].strip():
            reps.append((starts[line], starts[line], u))
    tail = f"{indent}}} catch ({handler[0]}) {{\n{indent}{u}{handler[1]}\n{indent}}}\n"
    reps.append((starts[last + 1], starts[last + 1], tail))
    return reps


# ------------------------------------------------------------------ imports, placeholders, outside

_MODULES = {
    "javascript": ["util", "assert", "path", "events", "os"],
    "typescript": ["util", "assert", "path", "events", "os"],
    "java": [
        "java.util.function.Function",
        "java.io.Serializable",
        "java.util.concurrent.TimeUnit",
        "java.text.DecimalFormat",
        "java.util.stream.Collectors",
    ],
    "cpp": ["cassert", "numeric", "functional", "iterator", "cstring"],
}


def unused_import(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
    lang = src.lang.name
    taken = identifiers(src)
    choices = [m for m in _MODULES.get(lang, []) if m.rsplit(".", 1)[-1] not in taken and m not in text]
    if not choices:
        return None
    m = ch.pick(choices)
    line = {
        "javascript": f"const {m} = require('{m}');",
        "typescript": f"import * as {m} from '{m}';",
        "java": f"import {m};",
        "cpp": f"#include <{m}>",
    }[lang]
    tops = src.tree.root_node.named_children
    anchors = [
        n
        for n in tops
        if n.type in src.lang.imports
        or n.type == "package_declaration"
        or (lang == "javascript" and "require(" in src.node_text(n) and n.type == "lexical_declaration")
    ]
    if lang in ("java", "cpp") and not any(n.type in src.lang.imports for n in tops):
        return None  # a bare method (LeetCode's shape): the judge's harness supplies the imports around it
    starts = line_starts(text)
    if anchors:
        end = src.char(anchors[-1].end_byte)
        at = (
            starts[_line_of(starts, max(end - 1, 0)) + 1]
            if _line_of(starts, max(end - 1, 0)) + 1 < len(starts)
            else len(text)
        )
    else:
        at = 0
    return [(at, at, line + "\n")]


def lazy_placeholder(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
    starts = line_starts(text)
    stmts = [s for s in statements(src, fn) if _own_line(text, starts, src.char(s.start_byte))]
    if not stmts:
        return None
    note = ch.pick(
        ["// ... existing code ...", "// ... rest of the function unchanged", "// (rest of the code unchanged)"]
    )
    s = src.char(ch.pick(stmts).start_byte)
    at = starts[_line_of(starts, s)]
    return [(at, at, _indent_at(text, starts, s) + note + "\n")]


def outside_target(text: str, src: Source, fn: LangFunction, ch: Chooser) -> list[Replacement] | None:
    lang = src.lang.name
    name = _fresh("helper", identifiers(src), ch, "cpp" if lang == "cpp" else lang)
    u = _unit(lang)
    in_class = any(n.type in src.lang.classes for n in src.tree.root_node.named_children)
    code = {
        "java": f"class {name[:1].upper() + name[1:]} {{\n{u}static int {name}(int value) {{\n{u * 2}return value;\n"
        f"{u}}}\n}}\n"
        if in_class
        # a bare method: the harness puts it in a class
        else f"static int {name}(int value) {{\n{u}return value;\n}}\n",
        "cpp": f"static int {name}(int value) {{\n{u}return value;\n}}\n",
        "typescript": f"function {name}(value: number): number {{\n{u}return value;\n}}\n",
    }.get(lang, f"function {name}(value) {{\n{u}return value;\n}}\n")
    end = len(text)
    return [(end, end, ("" if text.endswith("\n") else "\n") + "\n" + code)]


TRANSFORMS: dict[str, Transform] = {
    "rename_local": rename_local,
    "rename_parameter": rename_parameter,
    "rename_function": rename_function,
    "reformat": reformat,
    "quotes": quotes,
    "parentheses": parentheses,
    "comment_removed": _comments(doc=False),
    "doc_comment_removed": _comments(doc=True),
    "null_guard": _guard("null_guard"),
    "typeof_guard": _guard("typeof_guard"),
    "instanceof_guard": _guard("instanceof_guard"),
    "require_non_null": _guard("require_non_null"),
    "try_catch": try_catch,
    "unused_import": unused_import,
    "lazy_placeholder": lazy_placeholder,
    "outside_target": outside_target,
}
