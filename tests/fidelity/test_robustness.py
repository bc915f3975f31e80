"""Text that does not parse, tokenize or even look like Python still gets a report."""

from __future__ import annotations

import pytest

from server.fidelity import measure

CASES = [
    ("", ""),
    ("", "x = 1\n"),
    ("x = 1\n", ""),
    ("def f(:\n    pass\n", "def f():\n    pass\n"),
    ('s = """never closed\n', 's = """closed"""\n'),
    ("if x:\n  a\n b\n", "if x:\n  a\n"),  # inconsistent dedent: tokenize raises
    ("function f() { return 1; }\n", "function f() { return 2; }\n"),  # not Python at all
    ("x = (" * 300 + ")" * 300 + "\n", "x = 1\n"),  # deeper than the parser allows
    ("\x00\x01 binary-ish \xff\n", "text\n"),
    ("a = 1\r", "a = 2\r"),  # lone carriage returns
]


@pytest.mark.parametrize(("original", "edited"), CASES)
def test_always_a_report(original, edited):
    report = measure(original, edited)
    assert report.identical == (original == edited)
    assert set(report.distance) == {"raw", "no_comments", "body_no_comments"}
    if original != edited:
        assert report.hunks


def test_unparsable_side_reports_why_and_has_no_complexity():
    report = measure("def f(:\n    pass\n", "def f():\n    pass\n")
    assert report.parse_errors.original is not None and "line 1" in report.parse_errors.original
    assert report.parse_errors.edited is None
    assert report.complexity["paper"].before is None and report.complexity["paper"].delta is None
    assert report.complexity["paper"].after == 0
    assert report.distance["raw"].tokens > 0


def test_gold_and_target_together():
    original = "def f(a):\n    return a + 1\n\n\ndef g():\n    return 0\n"
    edited = "def f(a):\n    return a + 2\n\n\ndef g():\n    return 1\n"
    gold = "def f(a):\n    return a + 2\n\n\ndef g():\n    return 0\n"
    report = measure(original, edited, gold=gold, target=range(1, 3))
    assert report.excess is not None and report.excess["raw"] > 0
    assert [h.unrequested for h in report.hunks] == [False, True]
