"""A stdin/stdout judge on top of the sandbox: programs, test cases and limits in, verdicts out.

    judge = Judge(Sandbox())
    j = await judge.judge(Program(source=src, language="cpp"), [TestCase(input="1 2\\n", expected="3\\n")],
                          JudgeLimits(time_s=2, memory_mb=256))
    j.verdict        # accepted | wrong_answer | time_limit | memory_limit | runtime_error | compile_error
                     # | output_limit | judge_error (the judge could not decide: the sandbox or a test item failed)

Two program shapes. A `program` reads stdin and writes stdout itself (C++ without headers gets
`<bits/stdc++.h>`; a Java program runs from the file its public/main class needs). A `function` is a
LeetCode-style solution (a `class Solution` method or a free function): a per-language template adds
the usual headers/imports and `ListNode`/`TreeNode`, drops the answer's own `main`, and wraps it in a
harness that reads one JSON value per line (one line per parameter), calls the function and prints
the result as compact JSON (a `void` function prints its first argument, changed in place). The
entry function is named or found: the one no other function calls.

C++ and Java compile once per distinct source (cached): the compile step runs in the sandbox and
hands the artifact back as a base64 tar on stdout, which each test run unpacks in its own fresh
work dir (the sandbox keeps nothing between runs). Python is "compiled" with `compile()` on the host
(parsing only, nothing runs), so a SyntaxError is a compile error as on the usual online judges.

Time limits count the program's CPU seconds (reported by the sandbox's reaper, out of the program's
reach); the wall clock only stops runaways (`wall_factor`), so a loaded machine does not turn into
time-limit verdicts. Memory: C++ and Python run under RLIMIT_AS = the limit, Java with -Xmx = the limit.
`measure` runs programs over the tests repeatedly, interleaved, for runtime/memory comparisons.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import binascii
import hashlib
import json
import math
import re
import shlex
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from statistics import mean, pstdev
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import msgspec

from sandbox import languages
from sandbox.config import Limits

if TYPE_CHECKING:
    from sandbox.core import Sandbox

Verdict = Literal["accepted", "wrong_answer", "time_limit", "memory_limit", "runtime_error", "compile_error",
                  "output_limit", "judge_error"]
VERDICTS: tuple[str, ...] = ("accepted", "wrong_answer", "time_limit", "memory_limit", "runtime_error",
                             "compile_error", "output_limit", "judge_error")
Shape = Literal["auto", "program", "function"]
# A checker name, or a special judge: (input, expected, output) -> ok, or (ok, why)
Checker = str | Callable[[str, str, str], "bool | tuple[bool, str]"]
CHECKERS = ("exact", "lines", "tokens", "numbers", "value")
JUDGE_LANGUAGES = ("python", "cpp", "java")

BAD_INPUT_EXIT = 3  # the harness could not read a test input (the test's fault, not the program's)
BAD_INPUT_MARK = "edit-fidelity judge: bad test input"
ARTIFACT = "artifact.tar"
COMPILE_TIMEOUT_S = 90.0
TAIL = 2000  # characters of stderr / compiler output kept in a verdict
T = TypeVar("T")


class JudgeLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Limits of one test run."""

    time_s: float = 2.0  # CPU seconds per test case
    memory_mb: int = 256  # address space (C++, Python) or heap (Java) per test case
    output_kb: int = 1024  # stdout + stderr per test case
    wall_factor: float = 3.0  # the wall-clock stop: time_s * wall_factor + 1 s


class TestCase(msgspec.Struct, frozen=True, kw_only=True):
    __test__ = False  # not a pytest class

    input: str
    expected: str | None = None  # None: the output is collected, not compared
    name: str = ""


class Program(msgspec.Struct, frozen=True, kw_only=True):
    source: str
    language: str  # python | cpp | java (or an alias: c++, python3, py)
    shape: Shape = "auto"
    entry: str | None = None  # function shape: the function to call (found when None)


class TestResult(msgspec.Struct, kw_only=True):
    __test__ = False

    name: str
    verdict: Verdict
    cpu_s: float = 0.0
    wall_s: float = 0.0
    memory_mb: float = 0.0
    output: str = ""
    detail: str = ""


class Judgement(msgspec.Struct, kw_only=True):
    verdict: Verdict
    language: str
    shape: str
    entry: str | None = None
    detail: str = ""
    compile_output: str = ""
    tests: list[TestResult] = []

    @property
    def passed(self) -> bool:
        return self.verdict == "accepted"

    @property
    def cpu_s(self) -> float:
        return sum(t.cpu_s for t in self.tests)

    @property
    def memory_mb(self) -> float:
        return max((t.memory_mb for t in self.tests), default=0.0)


class Usage(msgspec.Struct, kw_only=True):
    """Repeated runs of one program over a test set: per repeat the CPU seconds summed over the tests
    and the peak memory over the tests; `failures` counts repeats in which some test did not run cleanly."""

    cpu_s: list[float]
    memory_mb: list[float]
    failures: int = 0

    @property
    def mean_cpu_s(self) -> float:
        return mean(self.cpu_s) if self.cpu_s else 0.0

    @property
    def mean_memory_mb(self) -> float:
        return mean(self.memory_mb) if self.memory_mb else 0.0

    @property
    def sd_cpu_s(self) -> float:
        return pstdev(self.cpu_s) if len(self.cpu_s) > 1 else 0.0

    @property
    def sd_memory_mb(self) -> float:
        return pstdev(self.memory_mb) if len(self.memory_mb) > 1 else 0.0


class FunctionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """The entry function of a function-shaped program: its name and (name, type text) parameters."""

    name: str
    params: list[tuple[str, str]]
    owner: str | None = None  # the class it is a method of ("Solution"), None for a free function


class Build(msgspec.Struct, kw_only=True):
    """A program ready to run: its files and command, or why it cannot run."""

    language: str
    shape: str
    entry: str | None = None
    files: dict[str, str | bytes] = {}  # Python: the source; C++/Java: the compiled artifact (a tar)
    main_class: str | None = None  # Java: the class the JVM starts
    verdict: Verdict | None = None  # compile_error / judge_error when it cannot run
    detail: str = ""
    compile_output: str = ""


# ---------------------------------------------------------------------------------------------------
# Source scanning (comments and string literals masked, so braces and names inside them do not count)


def normalise_language(name: str) -> str:
    key = name.strip().lower()
    key = {"c++": "cpp", "cxx": "cpp", "python3": "python", "py": "python", "py3": "python"}.get(key, key)
    if key not in JUDGE_LANGUAGES:
        raise ValueError(f"the judge runs {', '.join(JUDGE_LANGUAGES)}, not {name!r}")
    return key


_C_LIKE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)


def _mask_c(source: str) -> str:
    """The source with comments and string/char literals blanked (same length, newlines kept)."""
    return _C_LIKE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), source)


def _close_brace(masked: str, open_at: int) -> int:
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


_NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "operator", "new", "delete",
                  "else", "do", "throw", "synchronized", "try", "main", "assert", "decltype", "alignof", "typeid"}
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_AFTER_PARAMS = re.compile(r"\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?(?:final\s*)?"
                           r"(?:throws\s+[\w.]+(?:\s*,\s*[\w.]+)*\s*)?\{")
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
    masked = _mask_c(source)
    pairs = _brace_pairs(masked)
    classes = []
    for m in _CLASS.finditer(masked):
        brace = masked.find("{", m.end(), m.end() + _SCAN_LIMIT)
        if brace >= 0 and ";" not in masked[m.end():brace]:
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
        head = masked[head_start + 1:m.start()].strip()
        if head.startswith(":"):
            head = head[1:].strip()
        if not head or not _TYPE_TEXT.fullmatch(head) or head.split()[-1] in ("return", "new", "else", "throw"):
            continue
        open_at = after.end() - 1
        defs.append(_Def(name, source[m.end():close], m.start(), (open_at, pairs[open_at])))
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
    masked = _mask_c(program.source)
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
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    funcs: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Solution":
            funcs += [(f, "Solution") for f in node.body
                      if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and not f.name.startswith("__")]
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
    masked = _mask_c(source) if language != "python" else source
    if language == "cpp":
        return "program" if re.search(r"\b(?:int|signed|void)\s+main\s*\(", masked) else "function"
    if language == "java":
        return "program" if re.search(r"\bstatic\s+(?:public\s+)?void\s+main\s*\(", masked) else "function"
    try:
        tree = ast.parse(source)
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
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and "input" not in ast.unparse(node) \
                and "stdin" not in ast.unparse(node):
            continue
        return "program"
    return "function"


_LANGUAGE_SIGNS: dict[str, tuple[str, ...]] = {
    "cpp": (r"#\s*include\s*<", r"\bstd::", r"\busing\s+namespace\b", r"\bcout\s*<<", r"\bcin\s*>>",
            r"\bvector\s*<", r"->", r"\bauto\s+\w+\s*=", r"\bpublic\s*:", r"\bunordered_map\s*<",
            r"\.size\(\)", r"\bpush_back\b", r"\w&\s*\w+\s*[,)]", r"\blong\s+long\b"),
    "java": (r"\bpublic\s+class\b", r"\bSystem\.out\.", r"\bimport\s+java\.", r"\bString\[\]", r"\bpublic\s+static\b",
             r"\bnew\s+int\s*\[", r"\.length\b", r"\b(?:int|long|char|String)\[\]", r"\bMath\.\w+\(", r"\bpublic\s+\w+(?:<[^>]*>)?(?:\[\])*\s+\w+\s*\(", r"\bHashMap\s*<"),
    "python": (r"^\s*def\s+\w+\s*\(.*\)\s*(?:->\s*[^:]+)?:\s*$", r"^\s*elif\b", r"\bself\.", r"^\s*import\s+\w+\s*$",
               r"^\s*from\s+\w+\s+import\b", r"\bprint\(", r"\bNone\b", r"\blen\(",
               r"^(?!\s*(?:public|private|protected)\s*:)[^;{}]*:\s*$"),
}


def guess_language(source: str) -> str | None:
    """The language the code most looks like (C++, Java or Python), None when it is not clear."""
    scores = {lang: sum(bool(re.search(p, source, re.MULTILINE)) for p in signs)
              for lang, signs in _LANGUAGE_SIGNS.items()}
    if ";" not in source and "{" not in source and scores["python"]:
        scores["python"] += 3
    best = max(scores, key=lambda k: scores[k])
    runner_up = max(v for k, v in scores.items() if k != best)
    return best if scores[best] >= 2 and scores[best] >= runner_up + 2 else None


# ---------------------------------------------------------------------------------------------------
# Templates: what a function-shaped answer runs inside


CPP_PRELUDE = r"""#include <bits/stdc++.h>
using namespace std;
"""

CPP_NODES = {
    "ListNode": "struct ListNode {\n    int val; ListNode *next;\n    ListNode() : val(0), next(nullptr) {}\n"
                "    ListNode(int x) : val(x), next(nullptr) {}\n    ListNode(int x, ListNode *n) : val(x), next(n) {}\n};\n",
    "TreeNode": "struct TreeNode {\n    int val; TreeNode *left, *right;\n"
                "    TreeNode() : val(0), left(nullptr), right(nullptr) {}\n"
                "    TreeNode(int x) : val(x), left(nullptr), right(nullptr) {}\n"
                "    TreeNode(int x, TreeNode *l, TreeNode *r) : val(x), left(l), right(r) {}\n};\n",
}

# LeetCode-style I/O: one JSON value per argument line; results as compact JSON.
CPP_IO = r"""namespace efj {
[[noreturn]] inline void bad_input(const std::string& why) {
    std::cerr << "edit-fidelity judge: bad test input: " << why << std::endl;
    std::exit(3);
}
struct In {
    std::string s; size_t i = 0;
    explicit In(std::string text) : s(std::move(text)) {}
    void ws() { while (i < s.size() && std::isspace((unsigned char)s[i])) ++i; }
    bool eat(char c) { ws(); if (i < s.size() && s[i] == c) { ++i; return true; } return false; }
    void need(char c) { if (!eat(c)) bad_input(std::string("expected '") + c + "' in " + s.substr(0, 200)); }
    bool null() { ws(); if (s.compare(i, 4, "null") == 0) { i += 4; return true; } return false; }
    std::string atom() {
        ws(); size_t j = i;
        while (i < s.size() && (std::isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.')) ++i;
        if (j == i) bad_input("expected a value in " + s.substr(0, 200));
        return s.substr(j, i - j);
    }
    std::string str() {
        ws();
        if (!eat('"')) return atom();
        std::string out;
        while (i < s.size() && s[i] != '"') {
            char c = s[i++];
            if (c != '\\' || i >= s.size()) { out += c; continue; }
            char e = s[i++];
            switch (e) {
                case 'n': out += '\n'; break; case 't': out += '\t'; break; case 'r': out += '\r'; break;
                case 'b': out += '\b'; break; case 'f': out += '\f'; break;
                case 'u': {
                    unsigned cp = std::stoul(s.substr(i, 4), nullptr, 16); i += 4;
                    if (cp < 0x80) out += char(cp);
                    else if (cp < 0x800) { out += char(0xC0 | (cp >> 6)); out += char(0x80 | (cp & 0x3F)); }
                    else { out += char(0xE0 | (cp >> 12)); out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F)); }
                    break;
                }
                default: out += e;
            }
        }
        need('"');
        return out;
    }
};
inline void rd(In& in, int& x) { x = (int)std::stoll(in.atom()); }
inline void rd(In& in, long& x) { x = std::stol(in.atom()); }
inline void rd(In& in, long long& x) { x = std::stoll(in.atom()); }
inline void rd(In& in, unsigned& x) { x = (unsigned)std::stoull(in.atom()); }
inline void rd(In& in, unsigned long& x) { x = std::stoul(in.atom()); }
inline void rd(In& in, unsigned long long& x) { x = std::stoull(in.atom()); }
inline void rd(In& in, short& x) { x = (short)std::stoi(in.atom()); }
inline void rd(In& in, double& x) { x = std::stod(in.atom()); }
inline void rd(In& in, float& x) { x = std::stof(in.atom()); }
inline void rd(In& in, bool& x) { std::string a = in.atom(); x = a == "true" || a == "1"; }
inline void rd(In& in, char& x) { std::string a = in.str(); x = a.empty() ? '\0' : a[0]; }
inline void rd(In& in, std::string& x) { x = in.str(); }
inline void rd(In& in, ListNode*& head) {
    in.need('['); ListNode dummy; ListNode* tail = &dummy;
    if (!in.eat(']')) { do { int v; rd(in, v); tail->next = new ListNode(v); tail = tail->next; } while (in.eat(',')); in.need(']'); }
    head = dummy.next;
}
inline void rd(In& in, TreeNode*& root) {
    in.need('['); std::vector<TreeNode*> nodes;
    if (!in.eat(']')) {
        do { if (in.null()) nodes.push_back(nullptr); else { int v; rd(in, v); nodes.push_back(new TreeNode(v)); } } while (in.eat(','));
        in.need(']');
    }
    root = nodes.empty() ? nullptr : nodes[0];
    size_t child = 1;
    for (size_t k = 0; k < nodes.size() && child < nodes.size(); ++k) {
        if (!nodes[k]) continue;
        nodes[k]->left = nodes[child++];
        if (child < nodes.size()) nodes[k]->right = nodes[child++];
    }
}
template <class T> void rd(In& in, std::vector<T>& v) {
    v.clear(); in.need('[');
    if (in.eat(']')) return;
    do { T x{}; rd(in, x); v.push_back(x); } while (in.eat(','));
    in.need(']');
}

inline void wr(std::ostream& o, int x) { o << x; }
inline void wr(std::ostream& o, long x) { o << x; }
inline void wr(std::ostream& o, long long x) { o << x; }
inline void wr(std::ostream& o, unsigned x) { o << x; }
inline void wr(std::ostream& o, unsigned long x) { o << x; }
inline void wr(std::ostream& o, unsigned long long x) { o << x; }
inline void wr(std::ostream& o, short x) { o << x; }
inline void wr(std::ostream& o, double x) { char b[64]; std::snprintf(b, sizeof b, "%.12g", x); o << b; }
inline void wr(std::ostream& o, float x) { wr(o, (double)x); }
inline void wr(std::ostream& o, bool x) { o << (x ? "true" : "false"); }
inline void wr(std::ostream& o, const std::string& s) {
    o << '"';
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') o << '\\' << c;
        else if (c == '\n') o << "\\n";
        else if (c == '\t') o << "\\t";
        else if (c == '\r') o << "\\r";
        else if (c < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o << b; }
        else o << c;
    }
    o << '"';
}
inline void wr(std::ostream& o, const char* s) { wr(o, std::string(s)); }
inline void wr(std::ostream& o, char c) { wr(o, std::string(1, c)); }
inline void wr(std::ostream& o, ListNode* h) {
    o << '['; int n = 0;
    for (; h && n < 1000000; h = h->next, ++n) { if (n) o << ','; o << h->val; }
    o << ']';
}
inline void wr(std::ostream& o, TreeNode* root) {
    std::vector<TreeNode*> order; if (root) order.push_back(root);
    for (size_t k = 0; k < order.size() && order.size() < 2000000; ++k)
        if (order[k]) { order.push_back(order[k]->left); order.push_back(order[k]->right); }
    while (!order.empty() && !order.back()) order.pop_back();
    o << '[';
    for (size_t k = 0; k < order.size(); ++k) { if (k) o << ','; if (order[k]) o << order[k]->val; else o << "null"; }
    o << ']';
}
template <class T> void wr(std::ostream& o, const std::vector<T>& v) {
    o << '[';
    for (size_t k = 0; k < v.size(); ++k) { if (k) o << ','; wr(o, (T)v[k]); }
    o << ']';
}

template <class T> using Plain = typename std::decay<T>::type;
inline std::string next_line() {
    std::string line;
    if (!std::getline(std::cin, line)) bad_input("fewer argument lines than the function has parameters");
    return line;
}
template <class T> T arg() {
    In in(next_line()); T v{};
    try { rd(in, v); } catch (const std::exception& e) { bad_input(std::string(e.what()) + " in " + in.s.substr(0, 200)); }
    in.ws();
    if (in.i != in.s.size()) bad_input("text after the value: " + in.s.substr(0, 200));
    return v;
}
template <class... A> std::tuple<Plain<A>...> args() { return std::tuple<Plain<A>...>{arg<Plain<A>>()...}; }
template <class R> void show(const R& r) { wr(std::cout, r); std::cout << '\n'; }
template <class Tup> void show_first(Tup& t) {
    if constexpr (std::tuple_size<Tup>::value > 0) show(std::get<0>(t)); else std::cout << "null\n";
}
template <class R, class... A> void call(R (*f)(A...)) {
    auto a = args<A...>();
    if constexpr (std::is_void<R>::value) { std::apply([&](auto&... x) { f(x...); }, a); show_first(a); }
    else show(std::apply([&](auto&... x) -> R { return f(x...); }, a));
}
// the object lives on the heap: solutions keep large member arrays
template <class C, class R, class M, class... A> void call_member(M f) {
    auto a = args<A...>(); auto obj = std::make_unique<C>();
    if constexpr (std::is_void<R>::value) { std::apply([&](auto&... x) { ((*obj).*f)(x...); }, a); show_first(a); }
    else show(std::apply([&](auto&... x) -> R { return ((*obj).*f)(x...); }, a));
}
template <class C, class R, class... A> void call(R (C::*f)(A...)) { call_member<C, R, R (C::*)(A...), A...>(f); }
template <class C, class R, class... A> void call(R (C::*f)(A...) const) {
    call_member<C, R, R (C::*)(A...) const, A...>(f);
}
}  // namespace efj
"""

JAVA_IMPORTS = ("import java.util.*;\nimport java.util.function.*;\nimport java.util.stream.*;\n"
                "import java.io.*;\nimport java.math.*;\n")

JAVA_NODES = {
    "ListNode": "class ListNode {\n    int val; ListNode next;\n    ListNode() {}\n    ListNode(int val) { this.val = val; }\n"
                "    ListNode(int val, ListNode next) { this.val = val; this.next = next; }\n}\n",
    "TreeNode": "class TreeNode {\n    int val; TreeNode left; TreeNode right;\n    TreeNode() {}\n"
                "    TreeNode(int val) { this.val = val; }\n"
                "    TreeNode(int val, TreeNode left, TreeNode right) { this.val = val; this.left = left; this.right = right; }\n}\n",
}

JAVA_MAIN_CLASS = "JudgeMain"
# Reflection finds the method, its generic parameter types drive the conversion of each JSON line.
JAVA_HARNESS = r"""final class EfjJson {
    private final String s; private int i;
    EfjJson(String s) { this.s = s; }
    static void badInput(String why) {
        System.err.println("edit-fidelity judge: bad test input: " + why);
        System.exit(3);
    }
    void ws() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }
    boolean eat(char c) { ws(); if (i < s.length() && s.charAt(i) == c) { i++; return true; } return false; }
    Object parse() {
        Object v = value(); ws();
        if (i != s.length()) badInput("text after the value: " + s);
        return v;
    }
    Object value() {
        ws();
        if (i >= s.length()) badInput("missing value");
        char c = s.charAt(i);
        if (c == '[') {
            i++; java.util.List<Object> out = new java.util.ArrayList<>();
            if (eat(']')) return out;
            do { out.add(value()); } while (eat(','));
            if (!eat(']')) badInput("expected ']' in " + s);
            return out;
        }
        if (c == '"') {
            i++; StringBuilder b = new StringBuilder();
            while (i < s.length() && s.charAt(i) != '"') {
                char ch = s.charAt(i++);
                if (ch != '\\' || i >= s.length()) { b.append(ch); continue; }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break; case 't': b.append('\t'); break; case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break; case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e);
                }
            }
            if (!eat('"')) badInput("unterminated string in " + s);
            return b.toString();
        }
        int j = i;
        while (i < s.length() && ",]".indexOf(s.charAt(i)) < 0 && !Character.isWhitespace(s.charAt(i))) i++;
        String a = s.substring(j, i);
        if (a.equals("null")) return null;
        if (a.equals("true")) return Boolean.TRUE;
        if (a.equals("false")) return Boolean.FALSE;
        try { return Long.parseLong(a); } catch (NumberFormatException e) { /* not an integer */ }
        try { return Double.parseDouble(a); } catch (NumberFormatException e) { /* a bare word */ }
        return a;
    }

    static Object convert(Object v, java.lang.reflect.Type t) throws Exception {
        if (t instanceof java.lang.reflect.ParameterizedType) {
            java.lang.reflect.ParameterizedType p = (java.lang.reflect.ParameterizedType) t;
            Class<?> raw = (Class<?>) p.getRawType();
            java.lang.reflect.Type item = p.getActualTypeArguments()[0];
            java.util.Collection<Object> out = java.util.Set.class.isAssignableFrom(raw)
                ? new java.util.LinkedHashSet<>() : (raw == java.util.LinkedList.class || raw == java.util.Deque.class
                   || raw == java.util.Queue.class ? new java.util.LinkedList<>() : new java.util.ArrayList<>());
            for (Object x : (java.util.List<?>) v) out.add(convert(x, item));
            return out;
        }
        Class<?> c = (Class<?>) t;
        if (v == null) return null;
        if (c == int.class || c == Integer.class) return ((Number) v).intValue();
        if (c == long.class || c == Long.class) return ((Number) v).longValue();
        if (c == double.class || c == Double.class) return ((Number) v).doubleValue();
        if (c == float.class || c == Float.class) return ((Number) v).floatValue();
        if (c == short.class || c == Short.class) return ((Number) v).shortValue();
        if (c == byte.class || c == Byte.class) return ((Number) v).byteValue();
        if (c == boolean.class || c == Boolean.class) return v;
        if (c == char.class || c == Character.class) { String x = v.toString(); return x.isEmpty() ? '\0' : x.charAt(0); }
        if (c == String.class) return v.toString();
        if (c.isArray()) {
            java.util.List<?> xs = (java.util.List<?>) v;
            Object arr = java.lang.reflect.Array.newInstance(c.getComponentType(), xs.size());
            for (int k = 0; k < xs.size(); k++) java.lang.reflect.Array.set(arr, k, convert(xs.get(k), c.getComponentType()));
            return arr;
        }
        if (c.getSimpleName().equals("ListNode")) {
            Object head = null, tail = null;
            java.lang.reflect.Field next = c.getDeclaredField("next"); next.setAccessible(true);
            java.lang.reflect.Constructor<?> make = c.getDeclaredConstructor(int.class); make.setAccessible(true);
            for (Object x : (java.util.List<?>) v) {
                Object node = make.newInstance(((Number) x).intValue());
                if (head == null) head = node; else next.set(tail, node);
                tail = node;
            }
            return head;
        }
        if (c.getSimpleName().equals("TreeNode")) {
            java.util.List<?> xs = (java.util.List<?>) v;
            java.lang.reflect.Constructor<?> make = c.getDeclaredConstructor(int.class); make.setAccessible(true);
            java.lang.reflect.Field left = c.getDeclaredField("left"), right = c.getDeclaredField("right");
            left.setAccessible(true); right.setAccessible(true);
            java.util.List<Object> nodes = new java.util.ArrayList<>();
            for (Object x : xs) nodes.add(x == null ? null : make.newInstance(((Number) x).intValue()));
            int child = 1;
            for (int k = 0; k < nodes.size() && child < nodes.size(); k++) {
                if (nodes.get(k) == null) continue;
                left.set(nodes.get(k), nodes.get(child++));
                if (child < nodes.size()) right.set(nodes.get(k), nodes.get(child++));
            }
            return nodes.isEmpty() ? null : nodes.get(0);
        }
        return v;
    }

    static void quote(StringBuilder b, String x) {
        b.append('"');
        for (char ch : x.toCharArray()) {
            if (ch == '"' || ch == '\\') b.append('\\').append(ch);
            else if (ch == '\n') b.append("\\n");
            else if (ch == '\t') b.append("\\t");
            else if (ch == '\r') b.append("\\r");
            else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
            else b.append(ch);
        }
        b.append('"');
    }

    static void format(StringBuilder b, Object r) throws Exception {
        if (r == null) { b.append("null"); return; }
        if (r instanceof String) { quote(b, (String) r); return; }
        if (r instanceof Character) { quote(b, r.toString()); return; }
        if (r instanceof Boolean || r instanceof Number) { b.append(r); return; }
        Class<?> c = r.getClass();
        if (c.isArray()) {
            b.append('[');
            for (int k = 0; k < java.lang.reflect.Array.getLength(r); k++) { if (k > 0) b.append(','); format(b, java.lang.reflect.Array.get(r, k)); }
            b.append(']'); return;
        }
        if (r instanceof Iterable) {
            b.append('['); boolean first = true;
            for (Object x : (Iterable<?>) r) { if (!first) b.append(','); first = false; format(b, x); }
            b.append(']'); return;
        }
        if (c.getSimpleName().equals("ListNode")) {
            java.lang.reflect.Field val = c.getDeclaredField("val"), next = c.getDeclaredField("next");
            val.setAccessible(true); next.setAccessible(true);
            b.append('['); int n = 0;
            for (Object node = r; node != null && n < 1000000; node = next.get(node), n++) { if (n > 0) b.append(','); b.append(val.get(node)); }
            b.append(']'); return;
        }
        if (c.getSimpleName().equals("TreeNode")) {
            java.lang.reflect.Field val = c.getDeclaredField("val"), left = c.getDeclaredField("left"), right = c.getDeclaredField("right");
            val.setAccessible(true); left.setAccessible(true); right.setAccessible(true);
            java.util.List<Object> order = new java.util.ArrayList<>(); order.add(r);
            for (int k = 0; k < order.size() && order.size() < 2000000; k++)
                if (order.get(k) != null) { order.add(left.get(order.get(k))); order.add(right.get(order.get(k))); }
            while (!order.isEmpty() && order.get(order.size() - 1) == null) order.remove(order.size() - 1);
            b.append('[');
            for (int k = 0; k < order.size(); k++) { if (k > 0) b.append(','); b.append(order.get(k) == null ? "null" : val.get(order.get(k))); }
            b.append(']'); return;
        }
        if (r instanceof java.util.Map) {
            b.append('{'); boolean first = true;
            for (java.util.Map.Entry<?, ?> e : ((java.util.Map<?, ?>) r).entrySet()) {
                if (!first) b.append(','); first = false;
                quote(b, String.valueOf(e.getKey())); b.append(':'); format(b, e.getValue());
            }
            b.append('}'); return;
        }
        quote(b, String.valueOf(r));
    }
}

public class JudgeMain {
    public static void main(String[] argv) throws Throwable {
        java.lang.reflect.Method m = null;
        for (String owner : new String[] {OWNERS}) {
            Class<?> c;
            try { c = Class.forName(owner); } catch (ClassNotFoundException e) { continue; }
            for (java.lang.reflect.Method x : c.getDeclaredMethods()) if (x.getName().equals(ENTRY)) { m = x; break; }
            if (m != null) break;
        }
        if (m == null) { System.err.println("edit-fidelity judge: no method " + ENTRY); System.exit(4); }
        m.setAccessible(true);
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, "UTF-8"));
        java.lang.reflect.Type[] types = m.getGenericParameterTypes();
        Object[] args = new Object[types.length];
        for (int k = 0; k < types.length; k++) {
            String line = in.readLine();
            if (line == null) EfjJson.badInput("fewer argument lines than the method has parameters");
            Object raw = new EfjJson(line).parse();
            try { args[k] = EfjJson.convert(raw, types[k]); }
            catch (ClassCastException | IllegalArgumentException e) { EfjJson.badInput(e + " for " + types[k] + " from " + line); }
        }
        Object target = null;
        if (!java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
            java.lang.reflect.Constructor<?> make = m.getDeclaringClass().getDeclaredConstructor();
            make.setAccessible(true);
            target = make.newInstance();
        }
        Object r;
        try { r = m.invoke(target, args); } catch (java.lang.reflect.InvocationTargetException e) { throw e.getCause(); }
        if (m.getReturnType() == void.class) r = args.length > 0 ? args[0] : null;
        String returned = m.getReturnType().getSimpleName();
        if (r == null && (returned.equals("ListNode") || returned.equals("TreeNode"))) r = new java.util.ArrayList<Object>();
        StringBuilder b = new StringBuilder();
        EfjJson.format(b, r);
        System.out.println(b);
    }
}
"""

PYTHON_PRELUDE = """from typing import *
import collections, heapq, bisect, itertools, functools, math, re, string, operator, random, sys
from collections import *
from heapq import *
from bisect import *
from itertools import *
from functools import *
from math import *
from builtins import *
sys.setrecursionlimit(100000)
"""

PYTHON_NODES = {
    "ListNode": "class ListNode:\n    def __init__(self, val=0, next=None):\n        self.val = val\n        self.next = next\n",
    "TreeNode": "class TreeNode:\n    def __init__(self, val=0, left=None, right=None):\n        self.val = val\n"
                "        self.left = left\n        self.right = right\n",
}

PYTHON_HARNESS = '''

def _efj_main(name):
    import ast as _ast, inspect as _inspect, json as _json, sys as _sys, textwrap as _textwrap
    owner = globals().get("Solution")
    fn = getattr(owner(), name) if isinstance(owner, type) and hasattr(owner, name) else globals()[name]
    lines = _sys.stdin.read().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    params = list(_inspect.signature(fn).parameters.values())

    def bad(why):
        print("edit-fidelity judge: bad test input: " + why, file=_sys.stderr)
        _sys.exit(3)

    def build(value, note):
        if "ListNode" in note and isinstance(value, list):
            head = None
            for v in reversed(value):
                head = ListNode(v, head)
            return head
        if "TreeNode" in note and isinstance(value, list):
            nodes = [None if v is None else TreeNode(v) for v in value]
            child = 1
            for node in nodes:
                if child >= len(nodes):
                    break
                if node is None:
                    continue
                node.left = nodes[child]
                child += 1
                if child < len(nodes):
                    node.right = nodes[child]
                    child += 1
            return nodes[0] if nodes else None
        return value

    args = []
    for i, line in enumerate(lines):
        try:
            value = _json.loads(line)
        except ValueError as exc:
            bad(f"{exc} in {line[:200]!r}")
        note = str(params[i].annotation) if i < len(params) else ""
        args.append(build(value, note))

    def plain(r, depth=0):
        kind = type(r).__name__
        if kind == "ListNode":
            out = []
            while r is not None and len(out) < 1000000:
                out.append(r.val)
                r = r.next
            return out
        if kind == "TreeNode":
            order = [r]
            k = 0
            while k < len(order) and len(order) < 2000000:
                if order[k] is not None:
                    order += [order[k].left, order[k].right]
                k += 1
            while order and order[-1] is None:
                order.pop()
            return [None if n is None else n.val for n in order]
        if isinstance(r, (list, tuple, deque)):
            return [plain(x, depth + 1) for x in r]
        if isinstance(r, (set, frozenset)):
            items = [plain(x, depth + 1) for x in r]
            try:
                return sorted(items)
            except TypeError:
                return items
        if isinstance(r, dict):
            return {str(k): plain(v, depth + 1) for k, v in r.items()}
        if r is None or isinstance(r, (bool, int, float, str)):
            return r
        return str(r)

    def returns_value(f):
        try:
            tree = _ast.parse(_textwrap.dedent(_inspect.getsource(f)))
        except (OSError, TypeError, SyntaxError):
            return True
        return any(isinstance(n, _ast.Return) and n.value is not None for n in _ast.walk(tree))

    result = fn(*args)
    if result is None and args and not returns_value(fn):
        result = args[0]
    if result is None and any(n in str(_inspect.signature(fn).return_annotation) for n in ("ListNode", "TreeNode")):
        result = []  # LeetCode shows an empty list or tree as []
    print(_json.dumps(plain(result), separators=(",", ":"), ensure_ascii=False))


_efj_main(ENTRY)
'''


def _defines(masked: str, name: str) -> bool:
    return re.search(rf"\b(?:class|struct)\s+{name}\b", masked) is not None


def _drop_span(source: str, span: tuple[int, int]) -> str:
    return source[:span[0]] + source[span[1]:]


def _cpp_without_main(source: str) -> str:
    masked = _mask_c(source)
    m = re.search(r"\b(?:int|signed|void)\s+main\s*\([^)]*\)\s*\{", masked)
    if m is None:
        return source
    return _drop_span(source, (m.start(), _close_brace(masked, m.end() - 1)))


def _java_without_main(source: str) -> str:
    masked = _mask_c(source)
    m = re.search(r"(?:(?:public|private|protected|static|final)\s+)*static\s+(?:public\s+)?void\s+main\s*\([^)]*\)"
                  r"\s*(?:throws\s+[\w.,\s]+)?\{", masked)
    if m is None:
        return source
    return _drop_span(source, (m.start(), _close_brace(masked, m.end() - 1)))


def _python_defs_only(source: str) -> str:
    """The module minus top-level statements that would do work on import (example calls, prints,
    `if __name__ == "__main__":` blocks): a function-shaped answer is called by the harness only."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    for node in tree.body:
        doing = isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)) or (
            isinstance(node, ast.Expr) and not isinstance(node.value, ast.Constant)) or (
            isinstance(node, ast.If) and "__name__" in ast.unparse(node.test))
        if doing and node.end_lineno is not None:
            drop.update(range(node.lineno - 1, node.end_lineno))
    return "".join(line for i, line in enumerate(lines) if i not in drop)


def _java_types(masked: str) -> list[tuple[str, int, int, bool]]:
    """Top-level type declarations: (name, start, end, public)."""
    out = []
    depth = 0
    i = 0
    pattern = re.compile(r"(?P<mods>(?:(?:public|final|abstract|static|sealed|strictfp)\s+)*)"
                         r"(?:class|interface|enum|record)\s+(?P<name>[A-Za-z_]\w*)[^;{]*\{")
    while i < len(masked):
        ch = masked[i]
        if depth == 0:
            m = pattern.match(masked, i)
            if m and (i == 0 or not (masked[i - 1].isalnum() or masked[i - 1] == "_")):
                end = _close_brace(masked, m.end() - 1)
                out.append((m.group("name"), m.start(), end, "public" in m.group("mods").split()))
                i = end
                continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        i += 1
    return out


def _java_split_imports(source: str) -> tuple[str, str]:
    """(import lines, the rest) with any `package` line dropped: the judge compiles one default-package file."""
    imports: list[str] = []
    rest: list[str] = []
    for line in source.splitlines(keepends=True):
        s = line.strip()
        if s.startswith("package ") and s.endswith(";"):
            continue
        (imports if s.startswith("import ") and s.endswith(";") else rest).append(line)
    return "".join(imports), "".join(rest)


def _java_unpublic(source: str) -> str:
    """Top-level `public` types lose `public` (one file holds them all, with its own public class)."""
    masked = _mask_c(source)
    out = source
    for name, start, _end, public in sorted(_java_types(masked), key=lambda t: -t[1]):
        if public:
            head = re.match(r"((?:(?:public|final|abstract|static|sealed|strictfp)\s+)*)", out[start:])
            assert head is not None
            mods = head.group(1)
            out = out[:start] + re.sub(r"\bpublic\s+", "", mods, count=1) + out[start + len(mods):]
    return out


class SourceError(Exception):
    """The answer cannot be turned into a runnable program (a compile error, said why)."""


def assemble(program: Program) -> tuple[str, str, dict[str, str | bytes], str | None]:
    """(language, shape, {file: text}, entry) for a program; raises SourceError for an answer the
    templates cannot use (no function to call, no main class)."""
    language = normalise_language(program.language)
    source = program.source.replace("\r\n", "\n")
    shape = program.shape if program.shape != "auto" else detect_shape(language, source)
    if shape == "program":
        if language == "python":
            return language, shape, {"main.py": source}, None
        if language == "cpp":
            prefix = "" if re.search(r"#\s*include", source) else CPP_PRELUDE
            return language, shape, {"main.cpp": prefix + source}, None
        imports, body = _java_split_imports(source)
        masked = _mask_c(body)
        types = _java_types(masked)
        main_re = re.compile(r"\bstatic\s+(?:public\s+)?void\s+main\s*\(")
        public = [t for t in types if t[3]]
        with_main = [t for t in types if main_re.search(masked[t[1]:t[2]])]
        chosen = public[0] if public else (with_main[0] if with_main else None)
        if chosen is None:
            raise SourceError("no class with a main method")
        return language, shape, {f"{chosen[0]}.java": JAVA_IMPORTS + imports + body}, chosen[0]
    info = describe(msgspec.structs.replace(program, source=source))
    if info is None:
        raise SourceError(f"no function to call in the {language} answer")
    if language == "python":
        body = _python_defs_only(source)
        nodes = "".join(code for name, code in PYTHON_NODES.items() if not re.search(rf"\bclass\s+{name}\b", body))
        text = PYTHON_PRELUDE + nodes + body + PYTHON_HARNESS.replace("ENTRY", repr(info.name))
        return language, shape, {"main.py": text}, info.name
    if language == "cpp":
        body = _cpp_without_main(source)
        masked = _mask_c(body)
        nodes = "".join(code for name, code in CPP_NODES.items() if not _defines(masked, name))
        target = f"&{info.owner}::{info.name}" if info.owner else f"&{info.name}"
        text = (CPP_PRELUDE + nodes + CPP_IO + "\n" + body
                + f"\n\nsigned main() {{\n    std::ios::sync_with_stdio(false);\n    efj::call({target});\n    return 0;\n}}\n")
        return language, shape, {"main.cpp": text}, info.name
    imports, body = _java_split_imports(_java_without_main(source))
    masked = _mask_c(body)
    types = _java_types(masked)
    if not types:  # bare methods, as LeetCode shows them: they belong to a Solution class
        body = "class Solution {\n" + body + "\n}\n"
        masked = _mask_c(body)
        types = _java_types(masked)
    body = _java_unpublic(body)
    names = [t[0] for t in types]
    owners = ([info.owner] if info.owner else []) + [n for n in ["Solution", *names] if n != info.owner]
    nodes = "".join(code for name, code in JAVA_NODES.items() if name not in names)
    harness = JAVA_HARNESS.replace("OWNERS", ", ".join(json.dumps(o) for o in dict.fromkeys(owners))) \
                          .replace("ENTRY", json.dumps(info.name))
    text = JAVA_IMPORTS + imports + nodes + body + "\n" + harness
    return language, shape, {f"{JAVA_MAIN_CLASS}.java": text}, info.name


# ---------------------------------------------------------------------------------------------------
# Output checkers


class _Raw(str):
    """Output that is not a JSON value: compared as stripped text."""


def read_value(text: str) -> Any:
    """A value as LeetCode-style tests write it: JSON, else a Python literal (True/None/'x');
    ValueError when the text is neither."""
    s = text.strip()
    try:
        return json.loads(s)
    except ValueError:
        pass
    try:
        return ast.literal_eval(s)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ValueError(f"not a JSON or Python value: {s[:80]!r}") from None


def parse_value(text: str) -> Any:
    """A LeetCode-style result: JSON, else a Python literal (True/None/'x'), else the stripped text."""
    try:
        return read_value(text)
    except ValueError:
        return _Raw(text.strip())


def _same_value(a: Any, b: Any, tol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return math.isclose(a, b, rel_tol=tol, abs_tol=tol) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y, tol) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k], tol) for k in a)
    return a is None and b is None


def _number(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def check(checker: Checker, test_input: str, expected: str, output: str) -> tuple[bool, str]:
    """(accepted, why not) for one output. Named checkers: `exact` (byte for byte, \\r\\n as \\n),
    `lines` (trailing spaces and blank lines at the end ignored), `tokens` (whitespace-separated
    tokens), `numbers` (tokens; non-integer numbers within 1e-6 absolute or relative), `value` (one
    JSON/LeetCode value each side, numbers within 1e-5)."""
    if callable(checker):
        got = checker(test_input, expected, output)
        return got if isinstance(got, tuple) else (bool(got), "" if got else "the special judge rejected the output")
    if checker == "exact":
        ok = expected.replace("\r\n", "\n") == output.replace("\r\n", "\n")
        return ok, "" if ok else "output differs"
    if checker == "lines":
        def norm(s: str) -> list[str]:
            return [ln.rstrip() for ln in s.replace("\r\n", "\n").rstrip().split("\n")]
        a, b = norm(expected), norm(output)
        if a == b:
            return True, ""
        at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return False, f"line {at + 1} differs"
    if checker in ("tokens", "numbers"):
        a, b = expected.split(), output.split()
        if len(a) != len(b):
            return False, f"{len(b)} tokens, expected {len(a)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x == y:
                continue
            if checker == "numbers" and any(c in x + y for c in ".eE"):
                fx, fy = _number(x), _number(y)
                if fx is not None and fy is not None and math.isclose(fx, fy, rel_tol=1e-6, abs_tol=1e-6):
                    continue
            return False, f"token {i + 1}: {y[:40]!r}, expected {x[:40]!r}"
        return True, ""
    if checker == "value":
        a, b = parse_value(expected), parse_value(output)
        if isinstance(a, str) and isinstance(b, str) and (isinstance(a, _Raw) or isinstance(b, _Raw)):
            ok = str(a) == str(b)
        else:
            ok = _same_value(a, b, 1e-5)
        return ok, "" if ok else f"got {output.strip()[:80]!r}, expected {expected.strip()[:80]!r}"
    raise ValueError(f"unknown checker {checker!r}; known: {', '.join(CHECKERS)} or a callable")


# ---------------------------------------------------------------------------------------------------
# The judge


def _tail(text: str, n: int = TAIL) -> str:
    return text[-n:]


class SingleFlight(Generic[T]):
    """One computation per key at a time: concurrent callers of the same event loop that ask for a key
    being computed await that computation (its value or its exception). Nothing is kept once it is done:
    a cache is the caller's."""

    def __init__(self) -> None:
        self._pending: dict[str, asyncio.Future[T]] = {}

    async def run(self, key: str, make: Callable[[], Awaitable[T]]) -> T:
        loop = asyncio.get_running_loop()
        fut = self._pending.get(key)
        if fut is not None and fut.get_loop() is loop:
            return await asyncio.shield(fut)
        fut = loop.create_future()
        self._pending[key] = fut
        try:
            value = await make()
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # retrieved: waiters re-raise it, nobody logs it as lost
            raise
        finally:
            if self._pending.get(key) is fut:
                del self._pending[key]
        if not fut.done():
            fut.set_result(value)
        return value


class Judge:
    """Judges programs in a `sandbox.Sandbox`; compiled builds are cached by source (LRU)."""

    def __init__(self, box: Sandbox, *, cache_size: int = 256) -> None:
        self.box = box
        self.cache_size = cache_size
        self._builds: OrderedDict[str, Build] = OrderedDict()
        self._building: SingleFlight[Build] = SingleFlight()
        self.compiles = 0  # compile steps actually run (the rest came from the cache)

    # -- building --------------------------------------------------------------------------------

    async def build(self, program: Program) -> Build:
        key = hashlib.sha256(msgspec.json.encode(program)).hexdigest()
        if key in self._builds:
            self._builds.move_to_end(key)
            return self._builds[key]
        return await self._building.run(key, lambda: self._build_and_keep(key, program))

    async def _build_and_keep(self, key: str, program: Program) -> Build:
        built = await self._build(program)
        if built.verdict != "judge_error":  # a sandbox hiccup is not remembered
            self._builds[key] = built
            while len(self._builds) > self.cache_size:
                self._builds.popitem(last=False)
        return built

    async def _build(self, program: Program) -> Build:
        try:
            language = normalise_language(program.language)
        except ValueError as exc:
            return Build(language=program.language, shape=program.shape, verdict="judge_error", detail=str(exc))
        try:
            language, shape, files, entry = assemble(program)
        except SourceError as exc:
            return Build(language=language, shape=program.shape, verdict="compile_error",
                         detail=self._wrong_language(program, str(exc)))
        if language == "python":
            try:
                compile(files["main.py"], "main.py", "exec", dont_inherit=True)
            except SyntaxError as exc:
                shown = f"line {exc.lineno}: {exc.msg}"
                return Build(language=language, shape=shape, entry=entry, verdict="compile_error",
                             detail=self._wrong_language(program, f"SyntaxError: {shown}"), compile_output=shown)
            except (ValueError, RecursionError, MemoryError) as exc:
                return Build(language=language, shape=shape, entry=entry, verdict="compile_error",
                             detail=f"{type(exc).__name__}: {exc}")
            return Build(language=language, shape=shape, entry=entry, files=dict(files))
        return await self._compile(program, language, shape, files, entry)

    async def _compile(self, program: Program, language: str, shape: str, files: dict[str, str | bytes],
                       entry: str | None) -> Build:
        source_name = next(iter(files))
        plan = languages.LANGUAGES[language].plan(source_name, Limits(), "python")
        assert plan.compile is not None
        outputs = "main.out" if language == "cpp" else "*.class"
        script = f"{shlex.join(plan.compile)} 1>&2 && tar -cf - {outputs} | base64 -w0"
        self.compiles += 1
        res = await self.box.arun(files, source_name, language=language, command=["sh", "-c", script],
                                  timeout_s=COMPILE_TIMEOUT_S, memory_mb=plan.compile_as_mb, output_limit=64 << 20)
        base = Build(language=language, shape=shape, entry=entry)
        if res.status == "error":
            base.verdict, base.detail = "judge_error", f"sandbox: {res.error}"
            return base
        if res.status == "timeout":
            base.verdict, base.detail = "compile_error", f"compilation took over {COMPILE_TIMEOUT_S:.0f} s"
            return base
        if res.status != "ok":
            base.verdict, base.compile_output = "compile_error", _tail(res.stderr)
            first = next((ln for ln in res.stderr.splitlines() if "error" in ln), res.stderr.strip()[:300])
            base.detail = self._wrong_language(program, first.strip()[:500] or f"compiler: {res.status}")
            return base
        try:
            artifact = base64.b64decode(res.stdout.strip(), validate=True)
        except (binascii.Error, ValueError) as exc:
            base.verdict, base.detail = "judge_error", f"compiled artifact unreadable: {exc}"
            return base
        base.files = {ARTIFACT: artifact}
        base.main_class = source_name.rsplit(".", 1)[0] if language == "java" else None
        base.compile_output = _tail(res.stderr)
        return base

    @staticmethod
    def _wrong_language(program: Program, detail: str) -> str:
        guessed = guess_language(program.source)
        try:
            wanted = normalise_language(program.language)
        except ValueError:
            return detail
        if guessed is not None and guessed != wanted:
            return f"the answer looks like {guessed}, not {wanted}: {detail}"
        return detail

    @staticmethod
    def _argv(built: Build, limits: JudgeLimits) -> list[str]:
        """Unpack the artifact in the run's fresh work dir, then exec the program (the JVM with the
        sandbox's own flags and -Xmx = the memory limit)."""
        if built.language == "cpp":
            run = ["./main.out"]
        else:
            run = languages.LANGUAGES["java"].plan(f"{built.main_class}.java", Limits(memory_mb=limits.memory_mb),
                                                   "python").run
        return ["sh", "-c", f"tar -xf {ARTIFACT} && exec {shlex.join(run)}"]

    # -- running ---------------------------------------------------------------------------------

    async def run_one(self, built: Build, test: TestCase, limits: JudgeLimits, name: str = "", *,
                      trusted_input: bool = False) -> TestResult:
        """Run a built program on one input; `accepted` here means it ran cleanly (no comparison). When
        the harness cannot read the input as the function's arguments, that is the test's fault
        (`judge_error`), unless the input is `trusted_input` (a reference read it), then the program's:
        its signature does not fit the task (`runtime_error`)."""
        wall = limits.time_s * limits.wall_factor + 1.0
        kwargs: dict[str, Any] = {"stdin": test.input, "timeout_s": wall, "memory_mb": limits.memory_mb,
                                  "output_limit": limits.output_kb * 1024}
        if built.language == "python":
            res = await self.box.arun(built.files, "main.py", language="python", **kwargs)
        else:
            res = await self.box.arun(built.files, ARTIFACT, language=built.language,
                                      command=self._argv(built, limits), **kwargs)
        out = TestResult(name=name or test.name, verdict="accepted", cpu_s=res.cpu_s, wall_s=res.wall_s,
                         memory_mb=res.peak_memory_mb, output=res.stdout)
        stderr = res.stderr or ""
        if res.status == "error":
            out.verdict, out.detail = "judge_error", f"sandbox: {res.error}"
        elif res.status == "timeout" or res.cpu_s > limits.time_s:
            out.verdict = "time_limit"
            out.detail = f"over {limits.time_s:g} s of CPU" if res.status != "timeout" else \
                f"stopped after {res.wall_s:.1f} s (limit {limits.time_s:g} s of CPU)"
        elif res.status == "memory":
            out.verdict, out.detail = "memory_limit", f"allocation failed under {limits.memory_mb} MiB: {_tail(stderr, 300)}"
        elif res.status == "output_limit":
            out.verdict, out.detail = "output_limit", f"more than {limits.output_kb} KiB of output"
        elif res.status != "ok":
            if res.exit_code == BAD_INPUT_EXIT and BAD_INPUT_MARK in stderr:
                why = stderr.strip().splitlines()[-1][:500]
                out.verdict, out.detail = ("runtime_error", f"cannot take the test input: {why}") if trusted_input \
                    else ("judge_error", why)
            else:
                how = f"signal {res.signal}" if res.signal else f"exit code {res.exit_code}"
                out.verdict, out.detail = "runtime_error", f"{how}: {_tail(stderr.strip(), 600)}"
        return out

    async def judge(self, program: Program, tests: Sequence[TestCase], limits: JudgeLimits | None = None, *,
                    checker: Checker = "numbers", trusted_inputs: bool = False) -> Judgement:
        """Compile once, run the tests (concurrently, on the sandbox's slots), compare; the verdict is
        the first test's, in order, that was not accepted (tests after a failing batch do not run).
        `trusted_inputs`: see `run_one`."""
        limits = limits or JudgeLimits()
        built, j = await self._compiled(program)
        if built.verdict is not None:
            return j
        if not tests:
            j.verdict, j.detail = "judge_error", "no test cases"
            return j
        # In batches as wide as the sandbox's pool, stopping after a failing batch: a program that
        # loops forever costs one batch of timeouts, not one per test.
        width = max(1, int(getattr(self.box, "workers", 1) or 1))
        results: list[TestResult] = []
        for start in range(0, len(tests), width):
            batch = list(enumerate(tests))[start:start + width]
            done = await asyncio.gather(*(self.run_one(built, t, limits, t.name or f"test {i + 1}",
                                                       trusted_input=trusted_inputs) for i, t in batch))
            for (_, t), r in zip(batch, done, strict=True):
                self._compare(t, r, checker)
            results += done
            if any(r.verdict != "accepted" for r in done):
                break
        j.tests = results
        return self._first_failure(j)

    async def _compiled(self, program: Program) -> tuple[Build, Judgement]:
        """The program's build and the judgement it starts: the build's verdict when it cannot run, else
        "accepted" until a test says otherwise."""
        built = await self.build(program)
        j = Judgement(verdict="accepted", language=built.language, shape=built.shape, entry=built.entry,
                      compile_output=built.compile_output)
        if built.verdict is not None:
            j.verdict, j.detail = built.verdict, built.detail
        return built, j

    @staticmethod
    def _first_failure(j: Judgement) -> Judgement:
        """The verdict of the first test, in order, that was not accepted (none: it stays accepted)."""
        failed = next((r for r in j.tests if r.verdict != "accepted"), None)
        if failed is not None:
            j.verdict, j.detail = failed.verdict, f"{failed.name}: {failed.detail}".strip(": ")
        return j

    @staticmethod
    def _compare(test: TestCase, r: TestResult, checker: Checker) -> None:
        if r.verdict != "accepted":
            return
        if test.expected is None:
            r.verdict, r.detail = "judge_error", "the test has no expected output"
            return
        try:
            ok, why = check(checker, test.input, test.expected, r.output)
        except Exception as exc:  # noqa: BLE001  # a faulty special judge is the judge's failure, per test
            r.verdict, r.detail = "judge_error", f"checker failed: {type(exc).__name__}: {exc}"
            return
        if not ok:
            r.verdict = "wrong_answer"
        r.detail = why

    async def outputs(self, program: Program, inputs: Sequence[str], limits: JudgeLimits | None = None) -> Judgement:
        """Run a program on inputs and collect its outputs (e.g. a reference solution's); each test's
        verdict says whether it ran cleanly."""
        limits = limits or JudgeLimits()
        built, j = await self._compiled(program)
        if built.verdict is not None:
            return j
        j.tests = list(await asyncio.gather(*(self.run_one(built, TestCase(input=x), limits, f"test {i + 1}")
                                              for i, x in enumerate(inputs))))
        return self._first_failure(j)

    async def measure(self, programs: Sequence[Program], tests: Sequence[TestCase], limits: JudgeLimits | None = None,
                      *, repeats: int = 5) -> list[Usage]:
        """Each program's CPU time and peak memory over the tests, `repeats` times, the programs
        interleaved within each repeat and the runs one at a time (drift and load hit all alike)."""
        if repeats < 1:
            raise ValueError("measure needs at least one repeat")
        limits = limits or JudgeLimits()
        builds = [await self.build(p) for p in programs]
        usages = [Usage(cpu_s=[], memory_mb=[]) for _ in programs]
        for _ in range(repeats):
            for built, usage in zip(builds, usages, strict=True):
                if built.verdict is not None:
                    usage.failures += 1
                    continue
                cpu, mem, clean = 0.0, 0.0, True
                for t in tests:
                    r = await self.run_one(built, t, limits)
                    cpu += r.cpu_s
                    mem = max(mem, r.memory_mb)
                    clean = clean and r.verdict == "accepted"
                usage.cpu_s.append(cpu)
                usage.memory_mb.append(mem)
                usage.failures += not clean
        return usages


