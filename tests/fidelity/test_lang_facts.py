"""Functions, syntax facts and same-tree checks of the language layer, on hand-made code per language."""

from __future__ import annotations

import pytest

import server.fidelity.lang as L


def _src(lang: str, code: str) -> L.Source:
    return L.parse(code, L.by_name(lang))


FUNCTIONS = {
    "javascript": (
        "class K {\n  constructor(a) { this.a = a; }\n  m(p, {q, r} = {}) { return p; }\n}\n"
        "const f = (a, b = 1) => a + b;\nfunction g(x) {\n  function h(y) { return y; }\n  return h(x);\n}\n",
        [
            ("K.constructor", "constructor", ("a",)),
            ("K.m", "method", ("p", "q", "r")),
            ("f", "lambda", ("a", "b")),
            ("g", "function", ("x",)),
            ("g.h", "function", ("y",)),
        ],
    ),
    "typescript": (
        "class C {\n  private constructor(public y: string) {}\n  get z(): number { return 1; }\n}\n"
        "export const h = async (x?: number, ...r: T[]): Promise<void> => {};\nfunction ov(a: string): void;\n",
        [
            ("C.constructor", "constructor", ("y",)),
            ("C.z", "method", ()),
            ("h", "lambda", ("x", "r")),
            ("ov", "function", ("a",)),
        ],
    ),
    "tsx": (
        "const App = (p: Props) => <div>{p.x}</div>;\nfunction List() { return <ul/>; }\n",
        [("App", "lambda", ("p",)), ("List", "function", ())],
    ),
    "java": (
        "class A {\n  A(int x) { }\n  @Override\n  public int sum(int max, String... s) throws E { return 0; }\n"
        "  class In { void v() {} }\n}\n",
        [("A.A", "constructor", ("x",)), ("A.sum", "method", ("max", "s")), ("A.In.v", "method", ())],
    ),
    "c": (
        "static int *mk(int n, char **argv) {\n  return 0;\n}\nvoid g(void) {}\n",
        [("mk", "function", ("n", "argv")), ("g", "function", ())],
    ),
    "cpp": (
        "namespace ns {\nclass B {\n public:\n  B(int x) : x_(x) {}\n  int get() const { return x_; }\n};\n}\n"
        "int A::f(const std::vector<int>& v) const { return 1; }\n",
        [("ns.B.B", "constructor", ("x",)), ("ns.B.get", "method", ()), ("A.f", "function", ("v",))],
    ),
    "go": (
        "package m\n\nfunc (r *T) M(a int, b ...string) (int, error) {\n\treturn 0, nil\n}\n"
        "func F() {\n\tg := func(x int) {}\n\tg(1)\n}\n",
        [("T.M", "method", ("a", "b")), ("F", "function", ()), ("F.g", "lambda", ("x",))],
    ),
    "rust": (
        "impl<T> Foo<T> {\n    pub fn new(x: i32) -> Self { Foo {} }\n}\n"
        "fn free(v: &mut Vec<i32>) {\n    let c = |a: i32| a + 1;\n}\ntrait Tr { fn req(&self); }\n",
        [
            ("Foo.new", "method", ("x",)),
            ("free", "function", ("v",)),
            ("free.c", "lambda", ("a",)),
            ("Tr.req", "method", ()),
        ],
    ),
}


@pytest.mark.parametrize("lang", sorted(FUNCTIONS))
def test_functions_names_kinds_and_parameters(lang: str) -> None:
    code, expected = FUNCTIONS[lang]
    src = _src(lang, code)
    assert not src.errors
    assert [(f.qualname, f.kind, f.params) for f in L.functions(src)] == expected
    for f in L.functions(src):
        assert 1 <= f.start <= f.def_line <= f.signature_end <= f.end
        assert f.name in f.signature
        assert f.name in code[f.start_char : f.end_char]
        assert code.count("\n", 0, f.start_char) + 1 == f.start and code.count("\n", 0, f.end_char) + 1 == f.end


def test_function_spans_and_signatures() -> None:
    code = "class A {\n  /** Doc. */\n  @Deprecated\n  public int f(int a,\n               int b) {\n    return a;\n  }\n}\n"
    (f,) = L.functions(_src("java", code))
    assert (f.start, f.def_line, f.signature_end, f.end) == (3, 4, 5, 7)  # the doc comment is not part of it
    assert f.signature == "@ Deprecated public int f ( int a , int b )"
    assert code[f.body_char :].lstrip().startswith("return a;")
    # a signature change is visible, a body change is not
    g = L.functions(_src("java", code.replace("int b", "long b")))[0]
    h = L.functions(_src("java", code.replace("return a", "return b")))[0]
    assert g.signature != f.signature and h.signature == f.signature


@pytest.mark.parametrize(
    "lang, code, doc",
    [
        ("javascript", "/** Adds. */\nfunction f() {}\n// plain\n", [True, False]),
        ("java", "/** Doc. */\nclass A {}\n/* block */\n// line\n", [True, False, False]),
        ("rust", "/// Doc\n//! Inner\n// plain\nfn f() {}\n", [True, True, False]),
        ("cpp", "/// Doc\n// plain\nint f();\n", [True, False]),
        ("go", "package m\n\n// F does x.\n// More.\nfunc F() {}\n\n// stray\n\nvar x = 1\n", [True, True, False]),
    ],
)
def test_comments_and_doc_comments(lang: str, code: str, doc: list[bool]) -> None:
    assert [c.doc for c in L.comments(_src(lang, code))] == doc


@pytest.mark.parametrize(
    "text, placeholder",
    [
        ("// ... existing code ...", True),
        ("/* rest of the function unchanged */", True),
        ("// ...", True),
        ("# ... same as before", True),
        ("// remaining methods", True),
        ("/** Adds two numbers. */", False),
        ("// TODO: handle overflow", False),
        ("// keeps the rest", False),
    ],
)
def test_lazy_placeholders_in_comment_syntax(text: str, placeholder: bool) -> None:
    assert L.is_placeholder(text) is placeholder


@pytest.mark.parametrize(
    "lang, code, names",
    [
        ("javascript", 'import x, {a as b, c} from "m";\nimport "side";\nconst y = 1;\n', [("x", "b", "c"), ()]),
        ("typescript", 'import type { A } from "./a";\nimport * as ns from "n";\n', [("A",), ("ns",)]),
        ("java", "import java.util.Objects;\nimport static a.B.*;\nclass K {}\n", [("Objects",), ("B",)]),
        ("go", 'package m\nimport (\n\t"fmt"\n\ts "strings"\n\t"net/http"\n)\n', [("fmt", "s", "http")]),
        ("rust", "use std::collections::{HashMap, HashSet as S};\nuse a::b;\n", [("HashMap", "S"), ("b",)]),
        ("cpp", '#include <vector>\n#include "a.h"\nint x;\n', [(), ()]),
    ],
)
def test_imports_and_what_they_bind(lang: str, code: str, names: list[tuple[str, ...]]) -> None:
    found = L.imports(_src(lang, code))
    assert [i.names for i in found] == names
    for i in found:
        assert code[i.start : i.end] == i.text and code.count("\n", 0, i.start) + 1 == i.start_line <= i.end_line


GUARDS = [
    ("javascript", "function f(x) {\n  if (typeof x !== 'string') return;\n  return x;\n}\n", "type_check"),
    ("javascript", "function f(x) {\n  if (x === undefined) { throw new Error('x'); }\n  return x;\n}\n", "null_check"),
    ("typescript", "function f(x: A) {\n  if (!(x instanceof A)) return null;\n  return x;\n}\n", "type_check"),
    ("javascript", "function f(x) {\n  if (!x) return 0;\n  return x;\n}\n", "emptiness"),
    ("javascript", "function f(x) {\n  try { return g(x); } catch (e) { return null; }\n}\n", "try_catch"),
    ("javascript", "function f(x) {\n  return x?.y;\n}\n", "null_safe"),
    ("java", "class A { int f(String s) {\n  Objects.requireNonNull(s);\n  return 1; } }\n", "library_null_check"),
    (
        "java",
        "class A { int f(String s) {\n  if (s == null) throw new IllegalArgumentException();\n  return 1; } }\n",
        "null_check",
    ),
    ("java", "class A { int f(String s) {\n  assert s != null;\n  return 1; } }\n", "assert"),
    (
        "go",
        "package m\nfunc F() error {\n\tx, err := g()\n\tif err != nil {\n\t\treturn err\n\t}\n\t_ = x\n\treturn nil\n}\n",
        "err_check",
    ),
    ("go", 'package m\nfunc F(p *T) {\n\tif p == nil {\n\t\tpanic("nil")\n\t}\n}\n', "null_check"),
    ("rust", "fn f(o: Option<i32>) -> i32 {\n    match o { Some(a) => a, None => 0 }\n}\n", "option_match"),
    ("rust", "fn f(o: Option<i32>) -> i32 {\n    if let Some(a) = o { a } else { 0 }\n}\n", "option_match"),
    ("cpp", 'int f(int* p) {\n  if (p == nullptr) throw std::invalid_argument("p");\n  return *p;\n}\n', "null_check"),
    ("c", "int f(int* p) {\n  if (p == NULL) return -1;\n  return *p;\n}\n", "null_check"),
]


@pytest.mark.parametrize("lang, code, kind", GUARDS)
def test_defensive_forms(lang: str, code: str, kind: str) -> None:
    src = _src(lang, code)
    assert not src.errors
    kinds = [g.kind for g in L.guards(src)]
    assert kind in kinds, kinds
    for g in L.guards(src):
        assert 2 <= g.start_line <= g.end_line and 0 <= g.start < g.end <= len(code)


@pytest.mark.parametrize(
    "lang, code",
    [
        ("javascript", "function f(x) {\n  if (x > 3) { g(); }\n  return x;\n}\n"),
        ("java", "class A { int f(int s) {\n  if (s == 1) return 2;\n  return 1; } }\n"),
        ("go", "package m\nfunc F(a int) int {\n\tif a > 0 {\n\t\ta++\n\t}\n\treturn a\n}\n"),
        ("rust", "fn f(a: i32) -> i32 {\n    match a { 1 => 2, _ => 3 }\n}\n"),
    ],
)
def test_ordinary_branches_are_not_guards(lang: str, code: str) -> None:
    assert L.guards(_src(lang, code)) == []


def test_unwraps_are_listed() -> None:
    src = _src("rust", 'fn f(o: Option<i32>) -> i32 {\n    let a = o.unwrap();\n    g().expect("g")\n}\n')
    assert [line for line, _, _ in L.unwraps(src)] == [2, 3]


@pytest.mark.parametrize(
    "lang, code, expected",
    [
        (
            "javascript",
            "import {z} from 'm';\nfunction f(a, b) {\n  let c = a;\n  const [d, e] = b;\n  return c;\n}\n",
            {
                ("z", "import", ""),
                ("f", "function", ""),
                ("a", "parameter", "f"),
                ("b", "parameter", "f"),
                ("c", "local", "f"),
                ("d", "local", "f"),
                ("e", "local", "f"),
            },
        ),
        (
            "javascript",
            "function g(x) {\n  function h(y) {\n    let z = y;\n  }\n  let w = x;\n}\nconst t = 1;\n",
            {
                ("g", "function", ""),
                ("x", "parameter", "g"),
                ("h", "function", "g"),
                ("y", "parameter", "g.h"),
                ("z", "local", "g.h"),
                ("w", "local", "g"),
                ("t", "global", ""),
            },
        ),
        (
            "java",
            "class A {\n  int f(int a) {\n    int b = a, c = 2;\n    return b;\n  }\n}\n",
            {
                ("A", "class", ""),
                ("f", "method", ""),
                ("a", "parameter", "A.f"),
                ("b", "local", "A.f"),
                ("c", "local", "A.f"),
            },
        ),
        (
            "go",
            "package m\nvar g = 1\nfunc F(a int) int {\n\tb, c := a, 2\n\treturn b + c\n}\n",
            {
                ("g", "global", ""),
                ("F", "function", ""),
                ("a", "parameter", "F"),
                ("b", "local", "F"),
                ("c", "local", "F"),
            },
        ),
        (
            "rust",
            "fn f(a: i32) -> i32 {\n    let (b, c) = (a, 1);\n    b + c\n}\n",
            {("f", "function", ""), ("a", "parameter", "f"), ("b", "local", "f"), ("c", "local", "f")},
        ),
        (
            "cpp",
            "int f(int a) {\n  int b = a, *c = nullptr;\n  return b;\n}\n",
            {("f", "function", ""), ("a", "parameter", "f"), ("b", "local", "f"), ("c", "local", "f")},
        ),
    ],
)
def test_bindings_with_their_kinds(lang: str, code: str, expected: set[tuple[str, str, str]]) -> None:
    assert {(b.name, b.kind, b.scope) for b in L.bindings(_src(lang, code))} == expected


SAME = [
    ("javascript", "x = a - b;", "x = (a - b)", True),  # parentheses that only group, ASI
    ("javascript", "f('x', [1, 2,]);", 'f("x", [1, 2]);', True),  # quotes, trailing comma
    ("javascript", "f(`x`);", 'f("x");', True),  # a template without substitutions
    ("typescript", "const o = {\n  a: 1,\n  b: 2,\n};", "const o = { a: 1, b: 2 };", True),  # wrapping
    ("java", "int f() {\n return a - b; }", "int f() { return (a - b); }", True),
    ("go", "package m\nfunc f() { if (x) { g() } }", "package m\nfunc f() {\n\tif x {\n\t\tg()\n\t}\n}", True),
    ("rust", "fn f() { g(a, b,); }", "fn f() {\n    g(\n        a,\n        b,\n    );\n}", True),
    ("cpp", "int x = 1+2;  // c", "int x = 1 + 2; /* other */", True),  # comments do not count
    ("javascript", "y = (a - b) * c;", "y = a - b * c;", False),  # grouping that matters
    ("cpp", "int x = (1 + 2) * 3;", "int x = 1 + 2 * 3;", False),
    ("java", 'String s = "a";', 'String s = "b";', False),
    ("java", "char c = 'a';", 'String c = "a";', False),
    ("javascript", "f(`x${y}`);", 'f("x${y}");', False),
    ("c", "int f() { return 1; }", "int f() { return 1 }", False),  # the edited side does not parse
]


@pytest.mark.parametrize("lang, a, b, same", SAME)
def test_same_tree(lang: str, a: str, b: str, same: bool) -> None:
    assert L.same_tree(_src(lang, a), (0, len(a)), _src(lang, b), (0, len(b))) is same


def test_same_tree_on_the_statements_around_an_edit() -> None:
    a = "function f() {\n  const x = 1;\n  return x + y;\n}\n"
    b = "function f() {\n  const x = 2;\n  return (x + y);\n}\n"
    A, B = _src("javascript", a), _src("javascript", b)
    i, j = a.index("x + y"), b.index("(x + y)")
    assert [s.type for s in L.statements_at(A, i, i + 5)] == ["return_statement"]
    assert L.statements_at(B, j, j + 7)[0].start_line == 3
    assert L.same_tree(A, (i, i + 5), B, (j, j + 7))  # the return statement: same tree
    k = a.index("1;")
    assert not L.same_tree(A, (k, k + 1), B, (k, k + 1))  # the declaration: 1 became 2
    assert not L.same_text_tree(A, B)


@pytest.mark.parametrize(
    "lang, code, heads",
    [
        (
            "javascript",
            "function f(a) {\n  const x = 1;\n  if (a) {\n    return x;\n  }\n  switch (a) { case 1: g(); break; }\n}\n",
            ["function", "const", "if", "return", "switch", "g", "break"],
        ),
        (
            "java",
            "class A {\n  int f(int a) {\n    int b = a;\n    switch (a) { case 1: return 1; default: b++; }\n    return b;\n  }\n}\n",
            ["class", "int", "int", "switch", "return", "b", "return"],
        ),
        (
            "go",
            "package m\nfunc F(a int) int {\n\tb := a\n\tif b > 0 {\n\t\tb++\n\t}\n\treturn b\n}\n",
            ["package", "func", "b", "if", "b", "return"],
        ),
        (
            "rust",
            "fn f(a: i32) -> i32 {\n    let b = a;\n    if b > 0 { return 1; }\n    b\n}\n",
            ["fn", "let", "if", "return", "b"],
        ),
    ],
)
def test_statement_summaries(lang: str, code: str, heads: list[str]) -> None:
    found = L.statements(_src(lang, code))
    assert [s.head for s in found] == heads
    assert all(code[s.start : s.end].startswith(s.head) for s in found)
