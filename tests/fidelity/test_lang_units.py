"""Change units of brace languages where a line diff alone goes wrong (issue 18's corpus found them):
a body wrapped in try/catch, a helper appended after the last function, CommonJS imports, loop
variables renamed, doc comments removed."""

from __future__ import annotations

import pytest

from server.fidelity import apply_text_edits, measure
from server.fidelity.units.regions import line_regions

JS = """function f(n) {
  // base case
  if (n < 2) {
    return 1;
  }
  return n * f(n - 1);
}
"""
JS_TRY = """function f(n) {
  // base case
  try {
    if (n < 2) {
      return 1;
    }
    return n * f(n - 1);
  } catch (e) {
    throw e;
  }
}
"""
CPP = """int total(const std::vector<int>& xs) {
    int sum = 0;
    for (int x : xs) {
        if (x > 0) {
            sum += x;
        }
    }
    return sum;
}
"""
CPP_TRY = """int total(const std::vector<int>& xs) {
    try {
        int sum = 0;
        for (int x : xs) {
            if (x > 0) {
                sum += x;
            }
        }
        return sum;
    } catch (...) {
        throw;
    }
}
"""


def _kinds(original: str, edited: str, language: str, target: tuple[int, int] | None = None) -> list[list[str]]:
    report = measure(original, edited, language=language, target=range(*target) if target else None)
    assert apply_text_edits(original, report.edits) == edited
    return [h.kinds for h in report.hunks]


@pytest.mark.parametrize(("original", "edited", "language"), [(JS, JS_TRY, "javascript"), (CPP, CPP_TRY, "cpp")])
def test_a_body_wrapped_in_try_catch_is_one_defensive_unit(original: str, edited: str, language: str) -> None:
    # the re-indented lines belong to the wrapper: no formatting unit, no chance match of an old `}`
    assert _kinds(original, edited, language) == [["defensive"]]


def test_a_wrapped_body_with_a_fix_inside_keeps_the_fix_apart() -> None:
    edited = CPP_TRY.replace("if (x > 0)", "if (x >= 0)")
    kinds = _kinds(CPP, edited, "cpp")
    assert sorted(kinds) == [["defensive"], ["logic"]]


def test_a_helper_appended_after_the_last_function_is_outside_it() -> None:
    edited = JS + "\nfunction helper(value) {\n  return value;\n}\n"
    assert _kinds(JS, edited, "javascript", (1, 8)) == [["logic", "outside_target"]]
    # with the function's last line changed too, the old closing brace still stays the function's (a line
    # diff matched it to the helper's, which put the helper inside the function)
    edited = (
        JS.replace("return n * f(n - 1);", "return (n * f(n - 1));")
        + "\nfunction helper(value) {\n  return value;\n}\n"
    )
    assert _kinds(JS, edited, "javascript", (1, 8)) == [["formatting_only"], ["logic", "outside_target"]]
    assert measure(JS, edited, language="javascript", target=range(1, 8)).hunks[1].start_line == 8


def test_commonjs_require_is_an_import() -> None:
    edited = "const util = require('util');\n" + JS
    assert _kinds(JS, edited, "javascript", (1, 8)) == [["import_change", "outside_target"]]


@pytest.mark.parametrize(
    ("language", "original"),
    [
        (
            "java",
            "class A {\n    int f(int[] xs) {\n        int s = 0;\n        for (int x : xs) {\n            s += x;\n"
            "        }\n        return s;\n    }\n}\n",
        ),
        ("cpp", CPP),
        ("javascript", "function f(xs) {\n  let s = 0;\n  for (const x of xs) {\n    s += x;\n  }\n  return s;\n}\n"),
    ],
)
def test_a_renamed_loop_variable_is_a_rename(language: str, original: str) -> None:
    edited = (
        original.replace("x :", "item :")
        .replace("x of", "item of")
        .replace("+= x", "+= item")
        .replace("(x > 0)", "(item > 0)")
    )
    assert edited != original
    assert _kinds(original, edited, language) == [["rename"]]


@pytest.mark.parametrize(
    ("language", "doc"),
    [
        ("java", "    /** Adds. */\n"),
        ("javascript", "/** Adds. */\n"),
        ("cpp", "/// Adds.\n"),
        ("typescript", "/**\n * Adds.\n */\n"),
    ],
)
def test_a_removed_doc_comment_is_a_docstring_and_a_comment_is_a_comment(language: str, doc: str) -> None:
    body = {
        "java": "class A {\n%s    int f(int a) {\n        // one\n        return a + 1;\n    }\n}\n",
        "cpp": "%sint f(int a) {\n    // one\n    return a + 1;\n}\n",
    }.get(language, "%sfunction f(a) {\n  // one\n  return a + 1;\n}\n")
    original = body % doc
    assert _kinds(original, body % "", language) == [["docstring"]]
    no_comment = original.replace("        // one\n", "").replace("    // one\n", "").replace("  // one\n", "")
    assert _kinds(original, no_comment, language) == [["comment_removed"]]


def test_indent_free_regions_pair_reindented_lines_one_by_one() -> None:
    a = ["f() {\n", "  x;\n", "}\n"]
    b = ["f() {\n", "  try {\n", "    x;\n", "  } catch (e) {\n", "    throw e;\n", "  }\n", "}\n"]
    regions = [(r.a_start, r.a_end, r.b_start, r.b_end) for r in line_regions(a, b, indent_free=True)]
    assert regions == [(2, 1, 2, 2), (2, 2, 3, 3), (3, 2, 4, 6)]
    # Python keeps whole-line alignment (indentation is syntax there)
    assert [(r.a_start, r.a_end, r.b_start, r.b_end) for r in line_regions(a, b)] == [(2, 2, 2, 6)]
