"""Output checkers: whether a program's output is an accepted answer to one test."""

from __future__ import annotations

import json
import math
from typing import Any

from sandbox import pyast
from sandbox.judge.model import CHECKERS, Checker


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
        return pyast.literal_eval(s)
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
