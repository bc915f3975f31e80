"""Scoring one check's value, with upstream's semantics (`evaluate.py`), pure (no I/O).

The expected value is `eq`, or `eq-any` when `eq` is absent (upstream: `check.get('eq', check.get('eq-any'))`):
- a non-empty `eq-any`: pass when the value is one of them (ratio 0 or 1);
- a string or an integer `eq` (booleans are integers): `value == eq` (ratio 0 or 1);
- a mapping: only the expected keys count, each compared with `value.get(key)`; ratio = good keys / keys,
  and a value that is not a mapping scores 0 (extra keys in the value are ignored);
- a list: compared position by position, ratio = equal positions / positions; a value that is not a
  list scores 0. Off by one in length: the shorter list is padded with one None at its end and,
  separately, at its start, and one of the two comparisons is kept (see `ListPadding`);
- points = int(weight x ratio) (a floor), pass = no error at all.

Upstream has no branch for a float or null `eq` (its run crashes or reuses the previous check's
result); here they compare with `==`, like strings and integers (the SPEC is silent).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from benchmark.suites.canaicode.interview import Check

# `better`: keep the padding with fewer errors (SPEC 3.6; upstream's current evaluate.py);
# `worse`: keep the start padding only when it has MORE errors (`if errors_pre > errors`), as older
# versions of upstream's evaluate.py did. Lists of equal length are unaffected by either.
ListPadding = Literal["better", "worse"]
LIST_PADDING: tuple[str, ...] = ("better", "worse")


class CheckScore(msgspec.Struct, frozen=True, kw_only=True):
    passed: bool
    ratio: float
    points: int


def _compare_lists(expected: list, got: list) -> tuple[int, float]:
    bad = good = 0
    for i in range(max(len(expected), len(got))):
        a = expected[i] if i < len(expected) else None
        b = got[i] if i < len(got) else None
        if a != b:
            bad += 1
        else:
            good += 1
    return bad, good / (bad + good) if bad + good else 1.0  # two empty lists (upstream divides by zero)


def _list_ratio(expected: list, got: Any, padding: ListPadding) -> tuple[int, float]:
    if not isinstance(got, list):
        return 1, 0.0
    if len(expected) == len(got):
        return _compare_lists(expected, got)
    if len(expected) > len(got):
        errors, ratio = _compare_lists(expected, got + [None])
        errors_pre, ratio_pre = _compare_lists(expected, [None] + got)
    else:
        errors, ratio = _compare_lists(expected + [None], got)
        errors_pre, ratio_pre = _compare_lists([None] + expected, got)
    take_pre = errors_pre < errors if padding == "better" else errors_pre > errors
    return (errors_pre, ratio_pre) if take_pre else (errors, ratio)


def expected_value(check: Check) -> Any:
    return check.eq if check.has_eq else check.eq_any


def score(check: Check, got: Any, *, padding: ListPadding = "better") -> CheckScore:
    if padding not in LIST_PADDING:
        raise ValueError(f"unknown list padding {padding!r}; known: {', '.join(LIST_PADDING)}")
    expected = expected_value(check)
    if check.eq_any:
        passed = _contains(check.eq_any, got)
        ratio = 1.0 if passed else 0.0
    elif isinstance(expected, dict):
        if not isinstance(got, dict):
            errors, ratio = 1, 0.0
        else:
            errors = sum(1 for k, v in expected.items() if not _equal(got.get(k), v))
            ratio = (len(expected) - errors) / len(expected) if expected else 1.0
        passed = errors == 0
    elif isinstance(expected, list):
        errors, ratio = _list_ratio(expected, got, padding)
        passed = errors == 0
    else:  # str, int, bool (upstream), float, None (here)
        passed = _equal(got, expected)
        ratio = 1.0 if passed else 0.0
    return CheckScore(passed=passed, ratio=ratio, points=int(check.weight * ratio))


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001  # a value whose comparison raises is simply not equal
        return False


def _contains(options: list, got: Any) -> bool:
    return any(_equal(got, o) for o in options)
