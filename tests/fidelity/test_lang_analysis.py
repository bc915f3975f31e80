"""`LangAnalysis` offers the surface of the Python path's `Analysis` for the other languages."""

from __future__ import annotations

import server.fidelity.lang as L
from server.fidelity.text.analysis import analyze

JAVA = """import java.util.Objects;

/** A class. */
class A {
  // helper
  int f(String s, int n) {
    Objects.requireNonNull(s);
    if (n > 0 && s.isEmpty()) { return 1; }
    return n;
  }
}
"""


def test_the_same_members_as_the_python_analysis() -> None:
    a = L.analyze_lang(JAVA, L.by_name("java"))
    py = analyze("x = 1\n")
    for name in (
        "text",
        "lines",
        "lexed",
        "token_rows",
        "line_map",
        "parses",
        "parse_error",
        "structure",
        "bound_names",
        "cyclomatic",
        "sonar",
        "paper_cognitive",
        "maintainability",
        "identifiers",
    ):
        assert hasattr(a, name) and hasattr(py, name), name
    for method in ("token_span", "tokens_in", "comments_in", "variant_tokens"):
        assert callable(getattr(a, method)) and callable(getattr(py, method))
    assert a.parses and a.parse_error is None
    assert a.tokens_in(1, 1) == ["import", "java", ".", "util", ".", "Objects", ";"]
    assert a.comments_in(3, 5) == ["/** A class. */", "// helper"]
    (fn,) = a.structure.functions
    assert (fn.qualname, fn.start, fn.def_line, fn.end, fn.cognitive) == ("A.f", 6, 6, 10, 2)
    assert a.structure.docstrings == [(3, 3)] and a.structure.imports == [(1, 1)]
    assert [g[2] for g in a.structure.guards] == ["a null check (Objects.requireNonNull)", "an early exit on emptiness"]
    assert a.cyclomatic == (3, {6: 3}) and a.sonar == (2, {6: 2})
    assert {"s", "n", "f", "A", "Objects"} <= a.bound_names
    assert a.variant_tokens("no_comments") == a.lexed.strings
    assert L.analyze_lang(JAVA, L.by_name("java")) is a  # cached


def test_lone_carriage_returns_map_to_lsp_lines() -> None:
    text = "int a = 1;\rint b = 2;\nint c = 3;\n"
    a = L.analyze_lang(text, L.by_name("c"))
    assert len(a.lines) == 3
    assert a.tokens_in(2, 2) == ["int", "b", "=", "2", ";"]
    assert a.tokens_in(3, 3) == ["int", "c", "=", "3", ";"]


def test_a_broken_text_says_where() -> None:
    a = L.analyze_lang("class A {\n  int f() { return 1 }\n}\n", L.by_name("java"))
    assert not a.parses and a.parse_error is not None and "line 2" in a.parse_error
    b = L.analyze_lang("class A {\n  int f() { return 2; }\n}\n", L.by_name("java"), previous=a)
    assert b.parses and "2" in b.lexed.strings
