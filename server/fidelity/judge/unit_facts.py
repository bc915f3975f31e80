"""What the judge weighs about each change unit of a fidelity report (`UnitFacts`), from the report and,
when given, the two texts: the unit's own lines before and after, its function, whether the rest of the
edit changes that function's code, what its imports bind, whether deleted code moved. Pure.
"""

from __future__ import annotations

import ast
import keyword
import re
import textwrap

import msgspec
from rapidfuzz.distance import Levenshtein

from server.fidelity.judge.instruction import UnitFacts, guard_tests
from server.fidelity.judge.target_scope import target_facts
from server.fidelity.text import pyast
from server.fidelity.text.analysis import split_lines
from server.protocol.report import FidelityReport, Hunk, Position

_KEYWORDS = frozenset(keyword.kwlist) | {"import", "from", "as"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _names(text: str) -> frozenset[str]:
    return frozenset(n for n in _NAME.findall(text) if n not in _KEYWORDS)


_NOT_CODE = re.compile(
    r"\"\"\".*?(?:\"\"\"|$)|'\'\'.*?(?:'\'\'|$)|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
    r"|#[^\n]*|//[^\n]*",
    re.DOTALL,
)


def _code_only(text: str) -> str:
    """The text without string literals and comments: a word in a message or a docstring uses no import."""
    return _NOT_CODE.sub(" ", text)


def _bound_by_imports(text: str) -> frozenset[str]:
    """The names import statements bind (`import numpy as np` binds `np`); plain names when it is not
    whole statements."""
    try:
        tree = pyast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return _names(text)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
    return frozenset(names)


def _docstring_marks(text: str) -> int:
    return text.count('"""') + text.count("'''")


_RAISE = re.compile(r"\b(raise|assert)\b(?:\s+([A-Za-z_][\w.]*))?")


def _raises(new: str, old: str | None) -> frozenset[str]:
    """`raise`/`assert` statements the unit adds, with the exception classes they name."""
    found = {m.group(1) for m in _RAISE.finditer(new)} | {
        m.group(2).split(".")[-1] for m in _RAISE.finditer(new) if m.group(1) == "raise" and m.group(2)
    }
    if old:
        kept = {m.group(1) for m in _RAISE.finditer(old)}
        found -= kept if len(_RAISE.findall(old)) >= len(_RAISE.findall(new)) else set()
    return frozenset(found)


_NOT_AN_EXIT = re.compile(r"\b(?:raise|assert|try|except|hasattr|callable)\b")
_IF = re.compile(r"^\s*(?:el)?if\b", re.MULTILINE)


def _exits_only(new: str) -> bool:
    """The unit's guards only leave the code (`if ...: return/continue`): no raise, assert, try/except, or
    check of attributes (what an input check of an object looks like)."""
    code = _code_only(new)
    return bool(_IF.search(code)) and not _NOT_AN_EXIT.search(code)


def _documented(text: str) -> frozenset[str]:
    """Qualified names of the functions that have a docstring (none when the text does not parse)."""
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return frozenset()
    found: set[str] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef) and ast.get_docstring(child) is not None:
                    found.add(name)
                visit(child, name + ".")

    visit(tree, "")
    return frozenset(found)


class _Def(msgspec.Struct, frozen=True):
    qualname: str
    name: str
    first: int  # 1-based lines, decorators included
    last: int
    code: tuple[str, ...]  # stripped code lines without comments and blank lines
    bases: tuple[str, ...]  # the bases of the class the definition sits in (its last names)
    params: tuple[str, ...] = ()  # a function's parameters
    optional: tuple[str, ...] = ()  # those with a default value


def _code_lines(text: str) -> tuple[str, ...]:
    """A definition's code as stripped lines, without blank lines and comments: a copy is the same code."""
    return tuple(s for ln in split_lines(_code_only(text)) for s in [ln.strip()] if s)


_DEFS: dict[str, list[_Def]] = {}


def _all_definitions(text: str) -> list[_Def]:
    """Every definition of a text at any depth; cached for the two texts of the report being judged."""
    key = text
    found = _DEFS.get(key)
    if found is not None:
        return found
    found = []
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        tree = None
    lines = text.splitlines(keepends=True)

    def visit(node: ast.AST, prefix: str, bases: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                last = child.end_lineno or child.lineno
                src = "".join(lines[child.lineno - 1 : last])
                params: tuple[str, ...] = ()
                optional: tuple[str, ...] = ()
                if not isinstance(child, ast.ClassDef):
                    a = child.args
                    positional = [*a.posonlyargs, *a.args]
                    params = tuple(x.arg for x in [*positional, *a.kwonlyargs])
                    optional = tuple(x.arg for x in positional[len(positional) - len(a.defaults) :]) + tuple(
                        x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None
                    )
                code = _code_lines(src)
                found.append(_Def(prefix + child.name, child.name, first, last, code, bases, params, optional))
                inner = (
                    tuple(b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in child.bases)
                    if isinstance(child, ast.ClassDef)
                    else ()
                )
                visit(child, prefix + child.name + ".", inner)

    if tree is not None:
        visit(tree, "", ())
    if len(_DEFS) >= 2:
        _DEFS.clear()
    _DEFS[key] = found
    return found


def _inserted(hunk: Hunk, old_lines: list[str]) -> str | None:
    """The text a unit inserts when it replaces nothing but whitespace (its edits' new text), else None."""
    edits = getattr(hunk, "edits", None)
    if not edits:
        return None
    for e in edits:
        at, text = e.range.start, e.new_text
        line = old_lines[at.line].rstrip("\r\n") if at.line < len(old_lines) else ""
        if not (at.character == 0 and text.endswith(("\n", "\r")) or at.character >= len(line) and text[:1] in "\r\n"):
            return None  # not whole lines
        if e.range.start != e.range.end:
            first, last = e.range.start.line, e.range.end.line
            replaced = old_lines[first : last + 1]
            if last > first + 1 or any(ln.strip() for ln in replaced[: 1 if e.range.end.character == 0 else 2]):
                return None
    return "".join(e.new_text for e in edits)


class _Added(msgspec.Struct, frozen=True):
    names: tuple[str, ...] = ()  # the definitions a unit adds
    used: tuple[str, ...] = ()  # those the rest of the edited text refers to
    copies: tuple[str, ...] = ()  # those that repeat a definition of the original that is still there
    existing: tuple[str, ...] = ()  # those that replace or override one of the original (same place, a base)


_NONE_ADDED = _Added()
_CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__new__"})
_SETS = re.compile(r"\bself\.([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)")  # `self.x = ...`: an attribute it sets


def _added_definitions(hunk: Hunk, original: str | None, edited: str | None) -> _Added:
    """What a unit of inserted whole statements defines, weighed against the rest of the edit."""
    if original is None or edited is None:
        return _NONE_ADDED
    new = _inserted(hunk, split_lines(original))
    if new is None or not new.strip():
        return _NONE_ADDED
    lo, hi = hunk.new_start_line, hunk.new_end_line
    mine = [d for d in _all_definitions(edited) if lo <= d.first and d.last <= hi]
    mine = [d for d in mine if not any(o is not d and d.qualname.startswith(o.qualname + ".") for o in mine)]
    if not mine:
        return _NONE_ADDED
    before = _all_definitions(original)
    old_code = {(d.qualname, d.code) for d in before}
    old_names = {d.qualname for d in before}
    old_methods = {(d.qualname.rsplit(".", 2)[-2] if d.qualname.count(".") else "", d.name) for d in before}
    edited_lines = split_lines(edited)
    used, copies, existing = [], [], []
    for d in mine:
        pattern = re.compile(rf"(?<!def )(?<!class )\b{re.escape(d.name)}\b")  # a use, not a definition
        elsewhere = _code_only("".join(edited_lines[: d.first - 1] + edited_lines[d.last :]))
        # used by name; a constructor runs when its class is instantiated: used when the attributes it
        # sets are read by other code
        if pattern.search(elsewhere) or (
            d.name in _CONSTRUCTORS
            and any(re.search(rf"\.{re.escape(a)}\b", elsewhere) for a in _SETS.findall("\n".join(d.code)))
        ):
            used.append(d.name)
        twins = sum(1 for o in _all_definitions(edited) if o.qualname == d.qualname and o.code == d.code)
        if (d.qualname, d.code) in old_code and twins >= 2:
            copies.append(d.name)
        elif d.qualname in old_names or any((base, d.name) in old_methods for base in d.bases):
            existing.append(d.name)
    return _Added(tuple(d.name for d in mine), tuple(used), tuple(copies), tuple(existing))


def _new_options(hunk: Hunk, original: str | None, edited: str | None) -> tuple[str, ...]:
    """Parameters with a default value that a signature unit adds to a function the original has."""
    if original is None or edited is None:
        return ()
    at = hunk.new_start_line
    around = [d for d in _all_definitions(edited) if d.first <= at <= d.last and d.params]
    if not around:
        return ()
    fn = max(around, key=lambda d: d.first)
    before = [d for d in _all_definitions(original) if d.qualname == fn.qualname]
    if not before:
        return ()
    return tuple(p for p in fn.optional if p not in before[0].params)


_OUTPUT = re.compile(
    r"(?<![\w.])(print|pprint|logging\.\w+|logger\.\w+|log\.(?:debug|info|warning|warn|error|exception|critical)"
    r"|warnings\.warn|sys\.(?:stdout|stderr)\.write|console\.(?:log|warn|error|info|debug)"
    r"|System\.(?:out|err)\.print\w*|printf|fprintf|puts|println!?|eprintln!?)\s*\(",
)


def _output_calls(new: str, old: str | None) -> tuple[str, ...]:
    """Calls that print or log (`print(`, `logging.warning(`) the unit adds: output is a behaviour of its own."""
    found = _OUTPUT.findall(_code_only(new))
    if not found:
        return ()
    before = _OUTPUT.findall(_code_only(old)) if old else []
    for call in before:
        if call in found:
            found.remove(call)
    return tuple(dict.fromkeys(found))


_COMMENT = re.compile(r"#[^\n]*")


def _comment_added(hunk: Hunk, old: str | None, new: str, near_code: set[int]) -> str | None:
    """The comment a comment-only unit adds on code the edit leaves alone (no changed code on or next to its
    lines), or None."""
    if hunk.kinds != ["comment_only"] or old is None:
        return None
    added = [c for c in _COMMENT.findall(new) if c not in _COMMENT.findall(old)]
    if not added or len(_COMMENT.findall(new)) <= len(_COMMENT.findall(old)):
        return None
    lines = range(hunk.new_start_line, max(hunk.new_end_line, hunk.new_start_line) + 1)
    return None if any(n in near_code for n in lines) else added[0]


def _heads(text: str) -> list[str]:
    """The first word of each code line: the statements a side holds."""
    return [ln.split(None, 1)[0].rstrip(":") for ln in split_lines(text) if ln.strip()]


def _innermost(report: FidelityReport, hunk: Hunk) -> str | None:
    """The smallest function (or class method) of the report around the unit, on either side."""
    sides = [(hunk.new_start_line, hunk.new_end_line, True), (hunk.start_line, hunk.end_line, False)]
    if hunk.new_end_line < hunk.new_start_line:  # lines removed: they belonged to a function of the original
        sides.reverse()
    for lo, hi, new_side in sides:
        best: tuple[int, str] | None = None
        for fn in report.functions:
            a, b = (fn.new_start_line, fn.new_end_line) if new_side else (fn.start_line, fn.end_line)
            if a is not None and b is not None and a <= lo and max(hi, lo) <= b and (best is None or b - a < best[0]):
                best = (b - a, fn.name)
        if best:
            return best[1]
    return None


def _column(line: str, utf16: int) -> int:
    """The str index of a UTF-16 column (LSP) in one line."""
    if line.isascii():
        return min(utf16, len(line))
    units = 0
    for i, ch in enumerate(line):
        if units >= utf16:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def _unit_sides(hunk: Hunk, old_lines: list[str] | None) -> tuple[str, str] | None:
    """The original lines a unit's own edits touch, and the same lines with those edits applied (lines
    between two occurrences of a rename are not the unit's). None without per-unit edits or the original."""
    unit_edits = getattr(hunk, "edits", None)  # older reports: line-level hunks, no edits of their own
    if not unit_edits or old_lines is None:
        return None
    edits = sorted(unit_edits, key=lambda e: (e.range.start.line, e.range.start.character))
    blocks: list[list] = []  # [first line, last line, edits]
    for e in edits:
        first, last = e.range.start.line, max(e.range.end.line, e.range.start.line)
        if blocks and first <= blocks[-1][1]:
            blocks[-1][1] = max(blocks[-1][1], last)
            blocks[-1][2].append(e)
        else:
            blocks.append([first, last, [e]])
    old_parts, new_parts = [], []
    for first, last, block_edits in blocks:
        lines = old_lines[first : last + 1]
        text = "".join(lines)
        starts = [0]
        for ln in lines:
            starts.append(starts[-1] + len(ln))

        def offset(pos: Position, lines: list[str] = lines, starts: list[int] = starts, first: int = first) -> int:
            k = pos.line - first
            if k >= len(lines):
                return starts[-1]
            return starts[k] + _column(lines[k].rstrip("\r\n"), pos.character)

        new = text
        for e in reversed(block_edits):
            a, b = offset(e.range.start), offset(e.range.end)
            new = new[:a] + e.new_text + new[b:]
        old_parts.append(text)
        new_parts.append(new)
    return "".join(old_parts), "".join(new_parts)


def _side_text(lines: list[str] | None, start: int, end: int) -> str | None:
    return None if lines is None else "".join(lines[start - 1 : max(end, start - 1)])


def _renames_rewritten(report: FidelityReport, old_lines: list[str] | None, new_lines: list[str] | None) -> bool | None:
    """Whether no original line with a renamed name reappears renamed and otherwise unchanged (then the
    names belong to rewritten code, not to a rename for its own sake). None without the texts."""
    if old_lines is None or new_lines is None:
        return None
    renames: dict[str, str] = {}
    for h in report.hunks:
        renames.update(h.renames)
    if not renames:
        return True
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, renames)) + r")\b")
    new_pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, renames.values())) + r")\b")
    new_set = {ln.strip() for ln in new_lines}
    new_names = set(renames.values())
    candidates = [_LINE_TOKEN.findall(ln) for ln in new_lines if new_pattern.search(ln)]
    for line in old_lines:
        if not pattern.search(line):
            continue
        renamed = pattern.sub(lambda m: renames[m.group(1)], line).strip()
        if renamed in new_set:
            return False
        # the line kept but for a small change away from the renamed names (a fix beside the rename, in a
        # unit of its own); a change next to one (`count = {}` -> `s = 0`) repurposes the variable
        tokens = _LINE_TOKEN.findall(renamed)
        budget = max(_SMALL_CHANGE, len(tokens) // 10)
        for cand in candidates:
            if Levenshtein.distance(tokens, cand, score_cutoff=budget) > budget:
                continue
            at = [i for i, t in enumerate(cand) if t in new_names]
            if not any(abs(op.dest_pos - i) <= _NEAR for op in Levenshtein.editops(tokens, cand) for i in at):
                return False
    return True


_LINE_TOKEN = re.compile(r"\w+|[^\w\s]")
_SMALL_CHANGE = 3  # tokens: beyond the rename, a line changed this little is the same line
_NEAR = 2  # tokens between a change and a renamed name that make them one change


_NAMED_KINDS = frozenset({"signature_change", "docstring", "import_change"})


def unit_facts(report: FidelityReport, original: str | None = None, edited: str | None = None) -> list[UnitFacts]:
    """What the judge weighs for each unit. The texts make it precise (old side of a unit, moved code);
    without them the report's own edits give the edited side."""
    old_lines = split_lines(original) if original is not None else None
    new_lines = split_lines(edited) if edited is not None else None
    aligned = len(report.edits) == len(report.hunks)
    olds: list[str | None] = []
    news: list[str] = []
    for i, h in enumerate(report.hunks):
        sides = _unit_sides(h, old_lines)
        if sides is not None:  # a unit finer than lines: the lines its own edits touch, before and after
            olds.append(sides[0])
            news.append(sides[1])
            continue
        new_text = _side_text(new_lines, h.new_start_line, h.new_end_line)
        if new_text is None:
            own = getattr(h, "edits", None)
            new_text = "".join(e.new_text for e in own) if own else (report.edits[i].new_text if aligned else "")
        news.append(new_text)
        olds.append(_side_text(old_lines, h.start_line, h.end_line))
    functions = [(getattr(h, "functions", None) or [_innermost(report, h)])[0] for h in report.hunks]
    logic_in = {functions[i] for i, h in enumerate(report.hunks) if "logic" in h.kinds and functions[i]}
    has_imports = any("import_change" in h.kinds for h in report.hunks)
    changed_names: set[str] = set()
    for i, h in enumerate(report.hunks if has_imports else ()):  # only imports are checked against them
        if "import_change" not in h.kinds:
            changed_names |= _names(_code_only(news[i]))
    edited_names = _names(edited) if edited is not None and has_imports else None
    rewritten = _renames_rewritten(report, old_lines, new_lines)
    imported = (
        _bound_by_imports("".join(ln for ln in old_lines or () if ln.lstrip().startswith(("import ", "from "))))
        if any(h.renames for h in report.hunks)
        else frozenset()
    )
    edited_stripped = {ln.strip() for ln in new_lines} if new_lines is not None else set()
    # functions the edit adds (not one a renamed class or a move only seems to add: its name is gone too)
    gone = {fn.name.split(".")[-1] for fn in report.functions if fn.status == "removed"}
    new_functions = [
        (fn.new_start_line, fn.new_end_line)
        for fn in report.functions
        if fn.status == "added"
        and fn.new_start_line is not None
        and fn.new_end_line is not None
        and fn.name.split(".")[-1] not in gone
    ]
    # a docstring rewritten in two units (the old one out here, the new one in there) is kept when the
    # function still has one in the edited text
    documented = (
        _documented(edited) if edited is not None and any("docstring" in h.kinds for h in report.hunks) else None
    )
    definitions = [
        _added_definitions(h, original, edited) if "logic" in h.kinds else _NONE_ADDED
        for i, h in enumerate(report.hunks)
    ]
    edit_defines = frozenset(n for d in definitions for n in d.names)
    # edited lines near code the edit changes: a comment there describes that code
    near_code: set[int] = set()
    for h in report.hunks:
        if not set(h.kinds) <= {"comment_only", "formatting_only", "comment_removed"}:
            near_code.update(range(h.new_start_line - 1, max(h.new_end_line, h.new_start_line) + 2))
    added_functions = frozenset(fn.name for fn in report.functions if fn.status == "added")
    targets = target_facts(
        functions,
        [list(h.kinds) for h in report.hunks],
        news,
        olds,
        [(h.new_start_line, h.new_end_line) for h in report.hunks],
        added_functions,
        original,
        edited,
    )
    facts = []
    for i, h in enumerate(report.hunks):
        old, new = olds[i], news[i]
        named = bool(_NAMED_KINDS.intersection(h.kinds))  # the kinds whose rules look at names
        new_names = _names(new) if named else frozenset()
        old_names = _names(old) if old is not None and named else frozenset()
        import_used = False
        import_unused: frozenset[str] = frozenset()
        if "import_change" in h.kinds:
            inserted = _inserted(h, old_lines) if old_lines is not None else None
            if inserted is not None:  # lines inserted: their own text, not the line they go before
                old, new = "", inserted
            new_bound = _bound_by_imports(new)
            old_bound = _bound_by_imports(old) if old is not None else frozenset()
            added, removed = new_bound - old_bound, old_bound - new_bound
            uses_added = not added or added <= changed_names
            drops_unused = not removed or (edited_names is not None and not (removed & edited_names))
            import_used = (bool(added) or bool(removed)) and uses_added and drops_unused
            if old is not None:
                import_unused = frozenset(added - changed_names)
        added_defs = definitions[i]
        moved = False
        if "deletion" in h.kinds and old is not None:
            deleted = [ln.strip() for ln in split_lines(old) if ln.strip()]
            moved = bool(deleted) and all(ln in edited_stripped for ln in deleted)
        facts.append(
            UnitFacts(
                kinds=tuple(h.kinds),
                renames=dict(h.renames),
                function=functions[i],
                new_names=new_names,
                old_names=old_names,
                function_changes_logic=functions[i] in logic_in,
                docstring_kept=old is None
                and bool(new.strip())
                or old is not None
                and (
                    _docstring_marks(new) >= _docstring_marks(old)
                    or (documented is not None and functions[i] is not None and functions[i] in documented)
                ),
                tokens_changed=h.tokens_changed,
                import_unused=import_unused,
                raises=_raises(new, old) if "defensive" in h.kinds else frozenset(),
                guard_tests=guard_tests(new) - guard_tests(old or "") if "defensive" in h.kinds else frozenset(),
                exits_only="defensive" in h.kinds and _exits_only(new),
                new_code=h.end_line < h.start_line
                and h.new_end_line >= h.new_start_line
                and any(start <= h.new_end_line and h.new_start_line <= end for start, end in new_functions),
                import_used=import_used,
                moved=moved,
                rename_rewritten=bool(h.renames) and (rewritten if rewritten is not None else "logic" in h.kinds),
                imported=frozenset(n for n in h.renames if n in imported),
                same_statements=old is not None and _heads(old) == _heads(new) != [],
                defines=added_defs.names,
                defines_used=added_defs.used,
                defines_copies=added_defs.copies,
                defines_existing=added_defs.existing,
                edit_defines=edit_defines if added_defs.names else frozenset(),
                new_options=_new_options(h, original, edited) if "signature_change" in h.kinds else (),
                output=_output_calls(new, old) if "logic" in h.kinds else (),
                comment_added=_comment_added(h, old, new, near_code),
                target=targets[i],
            )
        )
    return facts
