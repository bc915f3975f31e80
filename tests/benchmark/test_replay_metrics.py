"""Exact checks of the CanItEdit metric code against hand-computed values (SPEC 3.3)."""

from math import comb

import pytest

from benchmark.report import metrics
from benchmark.suites.canitedit import metrics as excess


@pytest.mark.parametrize(
    "n,c,k,expected",
    [
        (20, 5, 1, 0.25),
        (20, 0, 1, 0.0),
        (20, 20, 1, 1.0),
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (10, 3, 5, 1 - 21 / 252),  # 1 - C(7,5)/C(10,5)
        (4, 3, 2, 1.0),  # n - c < k
        (1, 1, 1, 1.0),
    ],
)
def test_pass_at_k_hand_values(n, c, k, expected):
    assert metrics.pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_k_product_equals_binomial_form():
    for n in range(1, 21):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1 - comb(n - c, k) / comb(n, k)
                assert metrics.pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12)


@pytest.mark.parametrize("n,c,k", [(0, 0, 1), (5, 6, 1), (5, -1, 1), (3, 1, 4), (3, 1, 0)])
def test_pass_at_k_rejects_bad_input(n, c, k):
    with pytest.raises(ValueError):
        metrics.pass_at_k(n, c, k)


def test_differ_lines_counts_every_output_line():
    # unchanged "a", "- b", "+ c": 3 lines
    assert excess.differ_lines("a\nb", "a\nc") == 3
    # a near match yields "- abcd", "? ^", "+ abce", "? ^": 4 lines
    assert excess.differ_lines("abcd", "abce") == 4
    assert excess.differ_lines("x\ny\n", "x\ny") == 2
    assert excess.differ_lines("", "") == 0


def test_completion_missing_keeps_only_the_completion_part():
    completion = "def f():\n    return 1\n\ndef g():\n    pass"  # 5 lines; the tests start at line 7
    assert excess.completion_missing([9, 5, 2, 6, 0], completion) == [2, 5]


def test_excess_code_of_one_completion():
    before = "def f(x):\n    return x"
    completion = "def f(x):\n    if x is None:\n        return 0\n    return x"
    # Differ: "  def f(x):", "+     if x is None:", "+         return 0", "      return x" -> 4 lines
    assert excess.differ_lines(before, completion) == 4
    assert excess.excess_code([3], before, completion) == pytest.approx(1 / 4)
    assert excess.excess_code([], before, completion) == 0.0
    assert excess.excess_code([], "", "") == 0.0


def test_suite_aggregates():
    # per problem mean over passing completions, then mean over problems with one, times 100
    assert excess.suite_excess_code([[0.1, 0.3], [], [0.0]]) == pytest.approx(100 * (0.2 + 0.0) / 2)
    assert excess.suite_excess_code([[], []]) is None
    assert metrics.suite_pass_at_k([(20, 5), (20, 0), (20, 20)], 1) == pytest.approx(100 * 1.25 / 3)
    assert metrics.suite_pass_at_k([(20, 5), (3, 1)], 5) is None  # a problem with fewer than k samples


def test_report_missing_lines_reads_ranges_like_the_evaluator():
    # CanItEdit 9_sorting as coverage.py 7.x reports it on 3.11: "15-22", so the `else:` on line 20 counts
    statements = [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 21, 22]
    missing = [15, 16, 17, 18, 19, 21, 22]
    assert excess.report_ranges(statements, missing) == [(15, 22)]
    assert excess.report_missing_lines(statements, missing) == list(range(15, 23))
    # an executed statement between missing ones breaks the range; non-statements do not
    assert excess.report_missing_lines([1, 2, 4, 5, 8, 9], [2, 4, 8, 9]) == [2, 3, 4, 8, 9]
    assert excess.report_missing_lines([1, 2], []) == []


def test_report_ranges_match_coverage_format_lines():
    import random

    from coverage.results import format_lines

    rng = random.Random(5)
    for _ in range(300):
        statements = sorted(rng.sample(range(1, 60), rng.randint(0, 40)))
        missing = [s for s in statements if rng.random() < 0.4]
        expected = []
        for part in filter(None, format_lines(statements, missing).split(", ")):
            a, _, b = part.partition("-")
            expected.append((int(a), int(b or a)))
        assert excess.report_ranges(statements, missing) == expected
