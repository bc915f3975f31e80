"""Known unrequested changes, applied on top of a gold fix, each recording where it landed.

A transform reads the current text and returns replacements (start, end, new text) that keep its
behaviour: a rename, a reformat, a quote or parenthesis change, a removed comment or docstring, an
added guard, try/except or import, a placeholder comment, an edit outside the target function.
Positions are character offsets; `apply` returns the new text and moves earlier spans along.
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from collections.abc import Callable, Collection

from benchmark.build.corruptions.choice import Chooser

Replacement = tuple[int, int, str]

# transform family -> the classifier kinds its change must get
KINDS: dict[str, tuple[str, ...]] = {
    "rename_local": ("rename",),
    "rename_parameter": ("rename", "signature_change"),
    "rename_function": ("rename",),
    "reformat": ("formatting_only",),
    "quotes": ("formatting_only",),
    "parentheses": ("formatting_only",),
    "comment_removed": ("comment_removed",),
    "docstring_removed": ("docstring",),
    "isinstance_guard": ("defensive",),
    "none_guard": ("defensive",),
    "raise_invalid": ("defensive",),
    "try_except": ("defensive",),
    "unused_import": ("import_change",),
    "lazy_placeholder": ("lazy_placeholder",),
    "outside_target": ("logic", "outside_target"),
}


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _pos(starts: list[int], line: int, col: int, text: str) -> int:
    # ast columns are UTF-8 byte offsets
    base = starts[line - 1]
    line_text = text[base : starts[line] if line < len(starts) else len(text)]
    return base + len(line_text.encode()[:col].decode(errors="ignore"))


def _end_line(node: ast.stmt | ast.expr) -> int:
    assert node.end_lineno is not None  # parsed from text: every node has its end
    return node.end_lineno


def _end(starts: list[int], node: ast.expr, text: str) -> int:
    assert node.end_col_offset is not None
    return _pos(starts, _end_line(node), node.end_col_offset, text)


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def _body_start(fn: ast.FunctionDef) -> int:
    """Index of the first body statement after the docstring."""
    first = fn.body[0]
    is_doc = (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    )
    return 1 if is_doc and len(fn.body) > 1 else 0


def _indent(text: str, starts: list[int], line: int) -> str:
    row = text[starts[line - 1] :]
    return row[: len(row) - len(row.lstrip(" \t"))]


def _fresh(name: str, taken: set[str], ch: Chooser) -> str:
    for candidate in ch.shuffled([f"{name}_value", f"the_{name}", f"{name}_data", f"{name}2", f"my_{name}"]):
        if candidate not in taken and not keyword.iskeyword(candidate):
            return candidate
    return name + "_renamed"


def _name_spans(tree: ast.AST, name: str, text: str, starts: list[int]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name or isinstance(node, ast.arg) and node.arg == name:
            s = _pos(starts, node.lineno, node.col_offset, text)
            spans.append((s, s + len(name)))
        elif isinstance(node, ast.FunctionDef) and node.name == name:
            line = text[starts[node.lineno - 1] :]
            at = line.find("def " + name)
            if at >= 0:
                s = starts[node.lineno - 1] + at + 4
                spans.append((s, s + len(name)))
    return sorted(set(spans))


def _identifiers(text: str) -> set[str]:
    try:
        return {t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.NAME}
    except (tokenize.TokenError, SyntaxError):
        return set()


def rename(kind: str) -> Callable[[str, ast.Module, str, Chooser], list[Replacement] | None]:
    def run(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
        fn = _function(tree, entry)
        taken = _identifiers(text)
        if kind == "rename_function":
            helpers = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name != entry]
            if not helpers:
                return None
            old = ch.pick(helpers).name
            scope: ast.AST = tree
        else:
            if fn is None:
                return None
            if kind == "rename_parameter":
                names = [a.arg for a in fn.args.args + fn.args.kwonlyargs if a.arg not in ("self", "cls")]
            else:
                params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
                names = sorted(
                    {
                        n.id
                        for n in ast.walk(fn)
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in params
                    }
                )
            if not names:
                return None
            old = ch.pick(names)
            scope = fn
            if any(isinstance(n, ast.Global | ast.Nonlocal) for n in ast.walk(fn)):
                return None
        new = _fresh(old, taken, ch)
        starts = _offsets(text)
        return [(s, e, new) for s, e in _name_spans(scope, old, text, starts)] or None

    return run


def reformat(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
    """Split the arguments of a one-line call over several lines, or drop the spaces around `=`."""
    starts = _offsets(text)
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and len(n.args) >= 2
        and n.lineno == n.end_lineno
        and not n.keywords
        and all(a.lineno == n.lineno for a in n.args)
    ]
    if calls and ch.coin():
        call = ch.pick(sorted(calls, key=lambda n: (n.lineno, n.col_offset)))
        indent = _indent(text, starts, call.lineno)
        s = _pos(starts, call.args[0].lineno, call.args[0].col_offset, text)
        e = _end(starts, call.args[-1], text)
        parts = [text[_pos(starts, a.lineno, a.col_offset, text) : _end(starts, a, text)] for a in call.args]
        inner = indent + "    "
        return [(s, e, "\n" + inner + (",\n" + inner).join(parts) + ",\n" + indent)]
    assigns = [
        n for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1 and n.lineno == n.end_lineno
    ]
    found = []
    for node in assigns:
        line = text[starts[node.lineno - 1] : starts[node.lineno]]
        at = line.find(" = ")
        if at >= 0 and "#" not in line[:at]:
            found.append(starts[node.lineno - 1] + at)
    if not found:
        return None
    at = ch.pick(found)
    return [(at, at + 3, "=")]


def _strings(text: str) -> list[tokenize.TokenInfo]:
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError):
        return []


def quotes(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
    starts = _offsets(text)
    options = []
    for t in _strings(text):
        s = t.string
        if s[:1] in "'\"" and s[:3] not in ("'''", '"""') and len(s) >= 2 and "\\" not in s:
            q = s[0]
            other = '"' if q == "'" else "'"
            if other not in s[1:-1]:
                options.append((_pos(starts, t.start[0], t.start[1], text), other + s[1:-1] + other, len(s)))
    if not options:
        return None
    at, new, length = ch.pick(options)
    return [(at, at + length, new)]


def parentheses(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
    starts = _offsets(text)
    options = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Return | ast.Assign) and isinstance(node.value, ast.BinOp | ast.Compare | ast.BoolOp):
            v = node.value
            if v.lineno == v.end_lineno:
                options.append((_pos(starts, v.lineno, v.col_offset, text), _end(starts, v, text)))
    if not options:
        return None
    s, e = ch.pick(sorted(options))
    return [(s, s, "("), (e, e, ")")]


def comment_removed(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
    starts = _offsets(text)
    options = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    for t in tokens:
        if t.type == tokenize.COMMENT:
            line_start = starts[t.start[0] - 1]
            line = text[line_start : starts[t.start[0]] if t.start[0] < len(starts) else len(text)]
            if not line[: t.start[1]].strip():  # a full-line comment: the whole line goes
                options.append((line_start, line_start + len(line), ""))
            else:
                begin = line_start + len(line[: t.start[1]].rstrip())
                options.append((begin, line_start + t.end[1], ""))
    return [ch.pick(options)] if options else None


def docstring_removed(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
    fn = _function(tree, entry)
    if fn is None or _body_start(fn) == 0:
        return None
    starts = _offsets(text)
    doc = fn.body[0]
    return [(starts[doc.lineno - 1], starts[_end_line(doc)], "")]


def _insert_at_body(text: str, fn: ast.FunctionDef, lines: list[str]) -> list[Replacement]:
    starts = _offsets(text)
    first = fn.body[_body_start(fn)]
    at = starts[first.lineno - 1]
    indent = _indent(text, starts, first.lineno)
    return [(at, at, "".join(indent + ln + "\n" for ln in lines))]


def _param(fn: ast.FunctionDef, ch: Chooser) -> str | None:
    names = [a.arg for a in fn.args.args if a.arg not in ("self", "cls")]
    return ch.pick(names) if names else None


def guard(kind: str) -> Callable[[str, ast.Module, str, Chooser], list[Replacement] | None]:
    def run(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
        fn = _function(tree, entry)
        if fn is None:
            return None
        p = _param(fn, ch)
        if p is None:
            return None
        if kind == "isinstance_guard":
            lines = [f"if not isinstance({p}, object):", f"    raise TypeError('{p} has the wrong type')"]
        elif kind == "none_guard":
            lines = [f"if {p} is None:", "    return None"]
        else:
            lines = [f"if {p} is None:", f"    raise ValueError('{p} must not be None')"]
        return _insert_at_body(text, fn, lines)

    return run


def try_except(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
    """Wrap the body (after the docstring) in try/except that re-raises: one replacement per line, so
    the spans of earlier changes inside the body move with their lines."""
    fn = _function(tree, entry)
    if fn is None:
        return None
    starts = _offsets(text)
    first = fn.body[_body_start(fn)]
    last = fn.body[-1]
    indent = _indent(text, starts, first.lineno)
    end_line = last.end_lineno or last.lineno
    reps: list[Replacement] = [(starts[first.lineno - 1], starts[first.lineno - 1], f"{indent}try:\n")]
    for line in range(first.lineno, end_line + 1):
        at = starts[line - 1]
        if text[at : starts[line] if line < len(starts) else len(text)].strip():
            reps.append((at, at, "    "))
    exc = ch.pick(["Exception", "(ValueError, TypeError)", "KeyError"])
    tail = f"{indent}except {exc}:\n{indent}    raise\n"
    if end_line < len(starts) - 1:
        reps.append((starts[end_line], starts[end_line], tail))
    else:
        reps.append((len(text), len(text), ("" if text.endswith("\n") else "\n") + tail))
    return reps


def unused_import(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
    taken = _identifiers(text)
    choices = [m for m in ("json", "functools", "typing", "string", "copy") if m not in taken]
    if not choices:
        return None
    starts = _offsets(text)
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    at = starts[_end_line(imports[-1])] if imports else 0
    return [(at, at, f"import {ch.pick(choices)}\n")]


def lazy_placeholder(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
    fn = _function(tree, entry)
    if fn is None:
        return None
    note = ch.pick(
        ["# ... existing code ...", "# ... rest of the function unchanged", "# (rest of the code unchanged)"]
    )
    stmts = fn.body[_body_start(fn) :]
    starts = _offsets(text)
    stmt = ch.pick(stmts)
    at = starts[stmt.lineno - 1]
    return [(at, at, _indent(text, starts, stmt.lineno) + note + "\n")]


def outside_target(text: str, tree: ast.Module, entry: str, ch: Chooser) -> list[Replacement] | None:
    fn = _function(tree, entry)
    if fn is None:
        return None
    name = _fresh("helper", _identifiers(text), ch)
    end = len(text)
    sep = "" if text.endswith("\n") else "\n"
    return [(end, end, f"{sep}\n\ndef {name}(value):\n    return value\n")]


TRANSFORMS: dict[str, Callable[[str, ast.Module, str, Chooser], list[Replacement] | None]] = {
    "rename_local": rename("rename_local"),
    "rename_parameter": rename("rename_parameter"),
    "rename_function": rename("rename_function"),
    "reformat": reformat,
    "quotes": quotes,
    "parentheses": parentheses,
    "comment_removed": comment_removed,
    "docstring_removed": docstring_removed,
    "isinstance_guard": guard("isinstance_guard"),
    "none_guard": guard("none_guard"),
    "raise_invalid": guard("raise_invalid"),
    "try_except": try_except,
    "unused_import": unused_import,
    "lazy_placeholder": lazy_placeholder,
    "outside_target": outside_target,
}


def apply(text: str, reps: list[Replacement], spans: list[list[tuple[int, int]]]) -> tuple[str, list[tuple[int, int]]]:
    """Apply replacements; move every span in `spans` (in place) and return the new text and the new spans."""
    reps = sorted(reps)
    out, cursor, new_spans, delta = [], 0, [], 0
    shifts: list[tuple[int, int, int]] = []  # (old start, old end, delta after)
    for s, e, new in reps:
        out.append(text[cursor:s])
        start_new = s + delta
        out.append(new)
        new_spans.append((start_new, start_new + len(new)))
        delta += len(new) - (e - s)
        shifts.append((s, e, delta))
        cursor = e
    out.append(text[cursor:])

    def move(p: int, is_end: bool, point: bool = False) -> int:
        """A span's edge after the replacements: text inserted at a span's edge lies outside it (before
        its start, after its end); at a point (a deletion) it goes after the point."""
        d = 0
        for (s, e, new), (_, _, after) in zip(reps, shifts):
            before = after - (len(new) - (e - s))
            if e < p or (e == p and (s < e or not is_end and not point)):
                d = after
            elif s < p < e:  # inside a replaced piece: to its edge
                return (s + before) if not is_end else (s + before + len(new))
        return p + d

    for group in spans:
        # a deletion (no extent) stays one point: an insertion there goes after it
        group[:] = [(move(s, False), move(e, True)) if s < e else (move(s, False, point=True),) * 2 for s, e in group]
    return "".join(out), new_spans


def land(
    text: str, reps: list[Replacement], spans: list[list[tuple[int, int]]], parses: Callable[[str], bool]
) -> tuple[str, list[tuple[int, int]]] | None:
    """One change's replacements put on the candidate so far, the spans recorded so far moved with them
    (in place); None, with nothing moved, when the result does not parse."""
    groups = [list(g) for g in spans]  # moved only if the change is kept
    new_text, landed = apply(text, reps, groups)
    if not parses(new_text):
        return None
    for old, moved in zip(spans, groups, strict=True):
        old[:] = moved
    return new_text, landed


class EntryLost(Exception):
    """A `propose` of `stack_changes` finds the target function gone: no later family can land."""


Spans = list[tuple[int, int]]


def stack_changes(
    gold: str,
    fix: Spans,
    families: list[str],
    ch: Chooser,
    propose: Callable[[str, str, Chooser], list[Replacement] | None],
    parses: Callable[[str], bool],
    conflicts: Collection[frozenset[str]],
    *,
    touching_fix: bool,
) -> tuple[str, Spans, list[tuple[str, Spans]]]:
    """One candidate: 1 to 4 families' changes (as many as the chooser draws) stacked on the gold edit in
    the chooser's order. A family is passed over when `propose(family, text)` has nothing, when its
    replacements overlap an earlier change or the fix (`touching_fix`: touching it counts too, where a
    token run would merge them), when it conflicts with one already landed, or when the result does not
    parse (`propose(family, text, ch)`: the family's replacements on `text`). The candidate text, the fix's spans moved with the changes, and each change's spans."""
    count = 1 + ch.below(4)
    text, spans = gold, [list(fix)]
    changes: list[tuple[str, Spans]] = []
    for family in ch.shuffled(families):
        if len(changes) >= count:
            break
        if any(frozenset((family, f)) in conflicts for f, _ in changes):
            continue  # one would undo the other (removing the placeholder comment just added)
        try:
            reps = propose(family, text, ch)
        except EntryLost:
            break
        if not reps:
            continue
        taken = [span for g in spans[1:] for span in g]
        apart = 0 if touching_fix else 1  # offsets are ints: `s < fe` is `s <= fe - 1`
        if any(s <= te and ts <= e for s, e, _ in reps for ts, te in taken) or any(
            s <= fe - apart and fs <= e - apart for s, e, _ in reps for fs, fe in spans[0]
        ):
            continue  # on top of an earlier change or of the fix: they could not be told apart
        got = land(text, reps, spans, parses)
        if got is None:
            continue
        text, landed = got
        spans.append(list(landed))
        changes.append((family, spans[-1]))
    return text, spans[0], changes
