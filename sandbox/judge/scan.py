"""Source scanning: what a program is (its language, shape and entry function), read from its text with
comments and string literals masked, so braces and names inside them do not count."""

from __future__ import annotations

import ast
import re
from typing import Literal

import msgspec

from sandbox import pyast
from sandbox.judge.model import JUDGE_LANGUAGES, FunctionInfo, Program


def normalise_language(name: str) -> str:
    key = name.strip().lower()
    key = {"c++": "cpp", "cxx": "cpp", "python3": "python", "py": "python", "py3": "python"}.get(key, key)
    if key not in JUDGE_LANGUAGES:
        raise ValueError(f"the judge runs {', '.join(JUDGE_LANGUAGES)}, not {name!r}")
    return key


_C_LIKE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)


def mask_c(source: str) -> str:
    """The source with comments and string/char literals blanked (same length, newlines kept)."""
    return _C_LIKE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), source)


def close_brace(masked: str, open_at: int) -> int:
    """Index just past the brace matching the `{` at `open_at` (len(masked) when unbalanced)."""
    depth = 0
    for i in range(open_at, len(masked)):
        if masked[i] == "{":
            depth += 1
        elif masked[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(masked)


_NOT_FUNCTIONS = {
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "sizeof",
    "operator",
    "new",
    "delete",
    "else",
    "do",
    "throw",
    "synchronized",
    "try",
    "main",
    "assert",
    "decltype",
    "alignof",
    "typeid",
}
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_AFTER_PARAMS = re.compile(
    r"\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?(?:final\s*)?"
    r"(?:throws\s+[\w.]+(?:\s*,\s*[\w.]+)*\s*)?\{"
)
_TYPE_TEXT = re.compile(r"[\w:<>,\s\*&\[\]\.?]+")
_CLASS = re.compile(r"\b(?:class|struct|interface|enum|record)\s+([A-Za-z_]\w*)")
_SCAN_LIMIT = 2000  # characters a class head may span
_PARAMS_LIMIT = 500  # characters a parameter list may span


class _Def(msgspec.Struct):
    name: str
    params: str
    start: int
    body: tuple[int, int]


def _brace_pairs(masked: str) -> dict[int, int]:
    """Each `{` position -> just past its matching `}` (the end of the text for an unclosed one)."""
    pairs, stack = {}, []
    for i, ch in enumerate(masked):
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            pairs[stack.pop()] = i + 1
    for i in stack:
        pairs[i] = len(masked)
    return pairs


def _close_paren(masked: str, open_at: int) -> int | None:
    depth = 0
    for i in range(open_at, min(len(masked), open_at + _PARAMS_LIMIT)):
        if masked[i] == "(":
            depth += 1
        elif masked[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return None


def _c_like_defs(source: str) -> tuple[list[_Def], list[tuple[str, int, int]]]:
    """Function definitions (name, parameter text, body span) and classes (name, body span) of C++ or
    Java code, found in one pass over the masked source (no backtracking over the whole file)."""
    masked = mask_c(source)
    pairs = _brace_pairs(masked)
    classes = []
    for m in _CLASS.finditer(masked):
        brace = masked.find("{", m.end(), m.end() + _SCAN_LIMIT)
        if brace >= 0 and ";" not in masked[m.end() : brace]:
            classes.append((m.group(1), brace, pairs[brace]))
    class_names = {c[0] for c in classes}
    defs = []
    for m in _CALL.finditer(masked):
        name = m.group(1)
        if name in _NOT_FUNCTIONS or name in class_names:
            continue
        close = _close_paren(masked, m.end() - 1)
        if close is None:
            continue
        after = _AFTER_PARAMS.match(masked, close + 1)
        if after is None:
            continue
        # what precedes the name must be a return type: back to the previous statement boundary
        head_start = max(masked.rfind(ch, max(0, m.start() - 300), m.start()) for ch in ";{}:)")
        head = masked[head_start + 1 : m.start()].strip()
        if head.startswith(":"):
            head = head[1:].strip()
        if not head or not _TYPE_TEXT.fullmatch(head) or head.split()[-1] in ("return", "new", "else", "throw"):
            continue
        open_at = after.end() - 1
        defs.append(_Def(name, source[m.end() : close], m.start(), (open_at, pairs[open_at])))
    return defs, classes


def _pick_entry(names: list[str], calls_from_others: dict[str, int], calls_made: dict[str, int]) -> str | None:
    """The function nobody else calls; among several, the one that calls the most (the top of the call
    tree), then the first defined."""
    roots = [n for n in names if calls_from_others.get(n, 0) == 0] or list(names)
    if not roots:
        return None
    return max(roots, key=lambda n: (calls_made.get(n, 0), -names.index(n)))


def _split_params(text: str) -> list[tuple[str, str]]:
    """C++/Java parameter list -> [(name, type text)] (top-level commas only)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    out = []
    for p in parts:
        p = p.split("=")[0].strip()
        m = re.match(r"(?P<type>.*?)(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[\s*\])*)$", p, re.DOTALL)
        if m and m.group("type").strip():
            out.append((m.group("name"), (m.group("type") + m.group("dims")).strip()))
        elif p and p != "void":
            out.append(("", p))
    return out


def describe(program: Program) -> FunctionInfo | None:
    """The function a function-shaped program would be called through (None when it has none)."""
    language = normalise_language(program.language)
    if language == "python":
        return _describe_python(program.source, program.entry)
    defs, classes = _c_like_defs(program.source)
    if not defs:
        return None
    masked = mask_c(program.source)
    names = list(dict.fromkeys(d.name for d in defs))
    known = set(names)
    made: dict[str, int] = {}
    others: dict[str, int] = {}
    # one sweep: each call counts for the innermost definition whose body holds it
    ordered = sorted(defs, key=lambda d: d.body[0])
    stack: list[_Def] = []
    k = 0
    for call in _CALL.finditer(masked):
        at = call.start()
        while k < len(ordered) and ordered[k].body[0] <= at:
            while stack and stack[-1].body[1] <= ordered[k].body[0]:
                stack.pop()
            stack.append(ordered[k])
            k += 1
        while stack and stack[-1].body[1] <= at:
            stack.pop()
        callee = call.group(1)
        if stack and callee in known and callee != stack[-1].name:
            others[callee] = others.get(callee, 0) + 1
            made[stack[-1].name] = made.get(stack[-1].name, 0) + 1
    name = program.entry or _pick_entry(names, others, made)
    chosen = next((d for d in defs if d.name == name), None)
    if chosen is None:
        return None
    owner = next((c[0] for c in classes if c[1] < chosen.start < c[2]), None)
    return FunctionInfo(name=chosen.name, params=_split_params(chosen.params), owner=owner)


def _describe_python(source: str, entry: str | None) -> FunctionInfo | None:
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    funcs: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Solution":
            funcs += [
                (f, "Solution")
                for f in node.body
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and not f.name.startswith("__")
            ]
    if not funcs:
        funcs = [(f, None) for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not funcs:
        return None
    names = [f.name for f, _ in funcs]
    made: dict[str, int] = {}
    others: dict[str, int] = {}
    for f, _ in funcs:
        for sub in ast.walk(f):
            if isinstance(sub, ast.Call):
                callee = sub.func.attr if isinstance(sub.func, ast.Attribute) else getattr(sub.func, "id", None)
                if callee in names and callee != f.name:
                    others[callee] = others.get(callee, 0) + 1
                    made[f.name] = made.get(f.name, 0) + 1
    name = entry or _pick_entry(names, others, made)
    chosen = next(((f, o) for f, o in funcs if f.name == name), None)
    if chosen is None:
        return None
    f, owner = chosen
    args = [a for a in [*f.args.posonlyargs, *f.args.args] if not (owner and a.arg in ("self", "cls"))]
    params = [(a.arg, ast.unparse(a.annotation) if a.annotation is not None else "") for a in args]
    return FunctionInfo(name=f.name, params=params, owner=owner)


def detect_shape(language: str, source: str) -> Literal["program", "function"]:
    """`program` when the code has its own entry point (main, or Python statements that do work at
    the top level), else `function`."""
    language = normalise_language(language)
    masked = mask_c(source) if language != "python" else source
    if language == "cpp":
        return "program" if re.search(r"\b(?:int|signed|void)\s+main\s*\(", masked) else "function"
    if language == "java":
        return "program" if re.search(r"\bstatic\s+(?:public\s+)?void\s+main\s*\(", masked) else "function"
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "program"
    if any(isinstance(n, ast.ClassDef) and n.name == "Solution" for n in tree.body):
        return "function"  # LeetCode's shape, whatever example calls follow it
    defs = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in tree.body)
    if not defs:
        return "program"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
            continue
        if (
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and "input" not in ast.unparse(node)
            and "stdin" not in ast.unparse(node)
        ):
            continue
        return "program"
    return "function"


_LANGUAGE_SIGNS: dict[str, tuple[str, ...]] = {
    "cpp": (
        r"#\s*include\s*<",
        r"\bstd::",
        r"\busing\s+namespace\b",
        r"\bcout\s*<<",
        r"\bcin\s*>>",
        r"\bvector\s*<",
        r"->",
        r"\bauto\s+\w+\s*=",
        r"\bpublic\s*:",
        r"\bunordered_map\s*<",
        r"\.size\(\)",
        r"\bpush_back\b",
        r"\w&\s*\w+\s*[,)]",
        r"\blong\s+long\b",
    ),
    "java": (
        r"\bpublic\s+class\b",
        r"\bSystem\.out\.",
        r"\bimport\s+java\.",
        r"\bString\[\]",
        r"\bpublic\s+static\b",
        r"\bnew\s+int\s*\[",
        r"\.length\b",
        r"\b(?:int|long|char|String)\[\]",
        r"\bMath\.\w+\(",
        r"\bpublic\s+\w+(?:<[^>]*>)?(?:\[\])*\s+\w+\s*\(",
        r"\bHashMap\s*<",
    ),
    "python": (
        r"^\s*def\s+\w+\s*\(.*\)\s*(?:->\s*[^:]+)?:\s*$",
        r"^\s*elif\b",
        r"\bself\.",
        r"^\s*import\s+\w+\s*$",
        r"^\s*from\s+\w+\s+import\b",
        r"\bprint\(",
        r"\bNone\b",
        r"\blen\(",
        r"^(?!\s*(?:public|private|protected)\s*:)[^;{}]*:\s*$",
    ),
}


def guess_language(source: str) -> str | None:
    """The language the code most looks like (C++, Java or Python), None when it is not clear."""
    scores = {
        lang: sum(bool(re.search(p, source, re.MULTILINE)) for p in signs) for lang, signs in _LANGUAGE_SIGNS.items()
    }
    if ";" not in source and "{" not in source and scores["python"]:
        scores["python"] += 3
    best = max(scores, key=lambda k: scores[k])
    runner_up = max(v for k, v in scores.items() if k != best)
    return best if scores[best] >= 2 and scores[best] >= runner_up + 2 else None
