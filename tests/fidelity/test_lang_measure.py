"""`measure(..., language=...)`: the report of another language (distances, complexity, functions),
an unsupported language (token distance only, never Python), and Python unchanged."""

from __future__ import annotations

import msgspec
import pytest

from server.fidelity.measure import measure
from server.fidelity.text.textedits import apply_text_edits

JS = """import { log } from './log';

// Clamp a value.
function clamp(x, lo, hi) {
  if (x < lo) {
    return lo;
  }
  return x;
}

function twice(y) {
  return y * 2;
}
"""
JS_EDITED = """import { log } from './log';

function clamp(x, lo, hi) {
  if (x < lo || x == null) {
    return lo;
  } else if (x > hi) {
    return hi;
  }
  return x;
}

function thrice(y) {
  return y * 3;
}
"""


def test_javascript_report() -> None:
    r = measure(JS, JS_EDITED, language="javascript")
    assert r.language == "javascript" and not r.identical
    # comments count in `raw` only; the import line is outside the first function's body
    assert r.distance["raw"].tokens == r.distance["no_comments"].tokens + 1
    assert r.distance["body_no_comments"].tokens == r.distance["no_comments"].tokens
    c = r.complexity
    # clamp: if (+1), || (+1) ; else if (+1), the edited twice->thrice is 1 either way
    assert (c["cyclomatic"].before, c["cyclomatic"].after, c["cyclomatic"].delta) == (3, 5, 2)
    # Sonar: if +1, `||` +1, `else if` +1 (no nesting increment for else-if)
    assert (c["sonar"].before, c["sonar"].after, c["sonar"].delta) == (1, 3, 2)
    for name in ("paper", "maintainability"):
        assert c[name].before is None and c[name].delta is None and "Python only" in (c[name].reason or "")
    by_name = {f.name: f for f in r.functions}
    assert by_name["clamp"].status == "changed"
    assert (by_name["clamp"].cyclomatic_before, by_name["clamp"].cyclomatic_after) == (2, 4)
    assert (by_name["clamp"].sonar_before, by_name["clamp"].sonar_after) == (1, 3)
    assert by_name["twice"].status == "removed" and by_name["thrice"].status == "added"
    assert (by_name["clamp"].start_line, by_name["clamp"].new_start_line) == (4, 3)


def test_unparseable_side_and_parse_errors() -> None:
    broken = JS_EDITED.replace("return hi;", "return hi;;)")
    r = measure(JS, broken, language="javascript")
    assert r.parse_errors.original is None and r.parse_errors.edited is not None
    assert r.complexity["cyclomatic"].delta is None and r.complexity["cyclomatic"].reason == "does not parse"
    assert {f.name: f.status for f in r.functions}["clamp"] == "unparseable"


def test_gold_and_excess() -> None:
    gold = JS.replace("return x;", "return x + 0;")
    r = measure(JS, JS_EDITED, gold=gold, language="js")
    assert r.gold_distance is not None and r.excess is not None
    assert r.excess["no_comments"] == pytest.approx(
        r.distance["no_comments"].normalized - r.gold_distance["no_comments"].normalized
    )


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("javascript", "javascript"),
        ("JavaScriptReact", "javascript"),
        ("typescript", "typescript"),
        ("typescriptreact", "tsx"),
        ("java", "java"),
        ("c", "c"),
        ("cpp", "cpp"),
        ("go", "go"),
        ("rust", "rust"),
    ],
)
def test_language_ids(given: str, name: str) -> None:
    assert measure("x", "y", language=given).language == name


def test_unsupported_language_is_token_distance_only() -> None:
    old, new = "x = 1  # one\nprint(x)\n", "x = 2\nprint(x)\n"
    r = measure(old, new, language="ruby")
    assert r.language == "unsupported:ruby"
    # words, numbers and single other characters; `#` is no comment without a grammar
    assert r.distance["raw"].tokens == r.distance["no_comments"].tokens == 3  # `1`->`2`, `#` and `one` gone
    assert r.distance["raw"].normalized == 3 / 9
    # units: the changed line regions, unclassified, so an editor can still accept or revert each
    assert [(h.start_line, h.end_line, h.kinds) for h in r.hunks] == [(1, 1, ["logic"])]
    assert "not classified" in r.hunks[0].message and not r.hunks[0].unrequested
    assert apply_text_edits(old, r.edits) == new and r.functions == []
    assert all(v.before is None and "unsupported language 'ruby'" in (v.reason or "") for v in r.complexity.values())
    python = measure(old, new)
    assert python.language == "python" and python.hunks  # the same text as Python is analysed
    assert measure(old, old, language="ruby").identical


def test_python_is_unchanged() -> None:
    old = "def f(a):\n    # one\n    return a + 1\n"
    new = "def f(b):\n    return b + 2\n"
    default, named = measure(old, new), measure(old, new, language="python")
    assert msgspec.json.encode(default) == msgspec.json.encode(named)
    assert msgspec.json.encode(measure(old, new, language="py")) == msgspec.json.encode(default)
    assert default.language == "python"
    # Python's complexity records carry no `reason` (omitted when absent): stored records read as before
    encoded = msgspec.to_builtins(default)
    assert all("reason" not in v for v in encoded["complexity"].values())
