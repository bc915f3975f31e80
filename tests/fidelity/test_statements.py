"""New statements judged one by one (`server.fidelity.judge.statements`): a value never read, an early exit or a
raise nobody asked for, inside a unit that also holds the requested fix, each flagged on its own lines;
the fix itself, a guard the instruction speaks of and an exit of the code's own logic left alone."""

from __future__ import annotations

import pytest

from server.fidelity import measure
from server.fidelity.judge.flags import count_unit_flags, judge_statements, judged_units
from server.fidelity.judge.statements import StatementFlag, dead_stores, statement_flags
from server.fidelity.text import pyast

NEWTON = """import numpy as np


class Descent:
    def __init__(self, tol=1e-6):
        self.tol = tol

    def minimum(self, f, grad, x):
        steps = 0
        while steps < 100 and abs(grad(x)) > self.tol:
            x = x - f(x) / grad(x)
            steps += 1
        return x
"""

# the fix (a gradient step) with an extra stop and a value recomputed at the end of the body that the
# next turn overwrites before anything reads it
EXTRA = NEWTON.replace(
    "            x = x - f(x) / grad(x)\n",
    "            g = grad(x)\n"
    "            if abs(g) < self.tol:\n"
    "                break\n"
    "            x = x - 0.1 * g\n"
    "            g = grad(x)\n",
)
FIX_ONLY = NEWTON.replace(
    "            x = x - f(x) / grad(x)\n", "            g = grad(x)\n            x = x - 0.1 * g\n"
)


def _flags(original: str, edited: str, instruction: str | None) -> list[StatementFlag]:
    report = measure(original, edited)
    scope, _, verdicts = judged_units(report, instruction, original=original, edited=edited)
    assert not any(v.flagged for v in verdicts), [v.reason for v in verdicts]  # the unit holds the fix
    return judge_statements(report, scope, verdicts, original=original, edited=edited)


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def test_an_extra_stop_and_a_value_never_read_are_flagged_on_their_own_lines():
    flags = _flags(NEWTON, EXTRA, "Fix `minimum` so that it converges: take a gradient step.")
    by_line = {f.start_line: f for f in flags}
    stop, dead = _line(EXTRA, "if abs(g)"), len(EXTRA.splitlines()) - 2  # the second `g = grad(x)`
    assert set(by_line) == {stop, dead}, flags
    assert by_line[stop].end_line == stop + 1 and by_line[stop].kinds == ("defensive",)
    assert "early exit `break` when `abs(g) < self.tol`" in by_line[stop].reason
    assert by_line[dead].kinds == ("added_code",) and "`g` is assigned here and never read" in by_line[dead].reason
    [unit] = {f.unit for f in flags}  # inside the unit that holds the fix, which stays unflagged
    hunk = measure(NEWTON, EXTRA).hunks[unit]
    assert hunk.new_start_line <= _line(EXTRA, "x = x - 0.1 * g") <= hunk.new_end_line
    # counted as units of their own where the benchmark counts flags on texts the server never saw
    assert count_unit_flags(measure(NEWTON, EXTRA), "Fix `minimum`.", original=NEWTON, edited=EXTRA) == (2, 0)


def test_the_fix_alone_gives_no_flag():
    assert _flags(NEWTON, FIX_ONLY, "Fix `minimum`: take a gradient step.") == []


@pytest.mark.parametrize(
    "instruction",
    [
        "Fix `minimum`; stop as soon as the gradient is below the tolerance.",  # speaks of stopping
        "Fix `minimum` and return early when the gradient is less than the tolerance.",
        "Rewrite `minimum` as a gradient descent.",  # the code may change shape
    ],
)
def test_a_stop_the_instruction_speaks_of_is_requested(instruction):
    flags = _flags(NEWTON, EXTRA, instruction)
    assert [f.kinds for f in flags] == [("added_code",)]  # the value never read is flagged all the same


def test_an_exit_on_the_codes_own_condition_is_not_judged():
    """`if a == b: return` is logic (a swap of a city with itself), not an input check: words cannot judge it."""
    original = "def swap(route, i, j):\n    route[i], route[j] = route[j], route[i]\n    return route\n"
    edited = (
        "def swap(route, i, j):\n    if i == j:\n        return route\n"
        "    route[i], route[j] = route[j], route[i]\n    route.sort()\n    return route\n"
    )
    assert _flags(original, edited, "Make `swap` keep the route sorted.") == []


def test_a_guard_that_is_the_whole_change_is_the_fix():
    original = "def head(queue):\n    return queue[0]\n"
    edited = "def head(queue):\n    if not queue:\n        return None\n    return queue[0]\n"
    report = measure(original, edited)
    scope, _, verdicts = judged_units(report, "Fix the crash.", original=original, edited=edited)
    assert statement_flags(report, scope, original=original, edited=edited, flagged=[False] * len(verdicts)) == []


DISPATCH = """class Visitor:
    def visit(self, node):
        if node.kind == "light":
            return node.traffic
        elif node.kind == "stop":
            return node.traffic * 2
        return 0
"""
DISPATCH_NEW = """class Visitor:
    def visit(self, node):
        if node.kind == "light":
            return node.traffic
        elif node.kind == "stop":
            return node.traffic * 2
        elif node.kind == "roundabout":
            return node.traffic * 0.7
        else:
            raise ValueError(f"unknown kind {node.kind}")
"""


@pytest.mark.parametrize(
    ("instruction", "flagged"),
    [
        ("Add a new kind of node, 'roundabout', that reduces traffic by 30%.", True),
        ("Add a 'roundabout' kind that reduces traffic by 30%; raise a ValueError on unknown kinds.", False),
        ("Add a 'roundabout' kind (30% less traffic) and check that the kind is known.", False),
        ("Add a 'roundabout' kind (30% less traffic); unknown kinds raise a KeyError.", True),  # another class
    ],
)
def test_a_raise_nobody_asked_for(instruction, flagged):
    flags = _flags(DISPATCH, DISPATCH_NEW, instruction)
    assert bool(flags) is flagged, flags
    if flagged:
        [f] = flags
        assert f.start_line == _line(DISPATCH_NEW, "raise") and "raises `ValueError`" in f.reason


def test_a_raise_of_the_codes_own_exception_follows_its_convention():
    original = DISPATCH.replace("        return 0\n", '        raise ValueError("no kind")\n')
    edited = DISPATCH_NEW
    assert _flags(original, edited, "Add a 'roundabout' kind that reduces traffic by 30%.") == []


def test_without_an_instruction_only_values_never_read():
    report = measure(NEWTON, EXTRA)
    flags = statement_flags(report, None, original=NEWTON, edited=EXTRA, flagged=[False] * len(report.hunks))
    assert [f.kinds for f in flags] == [("added_code",)]


def test_statements_of_a_new_loop_and_other_languages_are_not_judged():
    original = "def pick(xs):\n    return xs[0]\n"
    edited = "def pick(xs):\n    for x in xs:\n        if x > 0:\n            break\n    return x\n"
    assert _flags(original, edited, "Return the first positive element.") == []
    js = measure("function f(a) { return a; }\n", "function f(a) { let b = 1; return a; }\n", language="javascript")
    assert statement_flags(js, None, original="x", edited="y", flagged=[False] * len(js.hunks)) == []


@pytest.mark.parametrize(
    ("body", "dead"),
    [
        ("    a = 1\n    a = 2\n    return a\n", {2: {"a"}}),
        ("    for i in range(3):\n        g = i\n        g = i * 2\n    return 0\n", {3: {"g"}, 4: {"g"}}),
        ("    a, b = 1, 2\n    return a\n", {2: {"b"}}),
        ("    _ = 1\n    return 0\n", {}),  # a name that says it is unused
        ("    a = 1\n    return locals()\n", {}),  # the frame is read dynamically
        ("    global a\n    a = 1\n", {}),
        ("    a = 1\n    def inner():\n        return a\n    return inner\n", {}),  # a closure reads it
    ],
)
def test_dead_stores_are_flow_sensitive(body, dead):
    tree = pyast.parse("def f():\n" + body)
    assert dead_stores(tree.body[0]) == dead  # type: ignore[arg-type]


SHUFFLE = """import random


def swap_two(items):
    i = random.randrange(len(items))
    j = random.randrange(len(items))
    items[i], items[j] = items[j], items[i]
    return items


def build(n):
    out = []
    for k in range(n):
        out.append(k)
    return out
"""


def test_a_shortcut_returning_what_an_untouched_function_returns_anyway_is_flagged():
    edited = SHUFFLE.replace(
        "    j = random.randrange(len(items))\n",
        "    j = random.randrange(len(items))\n    if i == j:\n        return items\n",
    ).replace("out.append(k)", "out.append(k * 2)")
    flags = _flags(SHUFFLE, edited, "Make build return the even numbers.")
    assert [(f.start_line, f.kinds) for f in flags] == [(_line(edited, "if i == j"), ("logic",))]
    assert "shortcut" in flags[0].reason and "`swap_two`" in flags[0].reason
    # the instruction names the function, or speaks of stopping early: it may be what was asked
    assert _flags(SHUFFLE, edited, "Make build return the even numbers and fix swap_two.") == []
    assert _flags(SHUFFLE, edited, "Make build return the even numbers; skip needless swaps.") == []
    # another value returned, or more changes in the function: the exit is part of a change of its own
    other = edited.replace("        return items\n", "        return None\n")
    assert _flags(SHUFFLE, other, "Make build return the even numbers.") == []
    more = edited.replace("items[i], items[j] = items[j], items[i]", "items[j], items[i] = items[i], items[j]")
    assert _flags(SHUFFLE, more, "Make build return the even numbers.") == []
    # a condition on an input case is judged as a guard (by the words), never as a shortcut
    empty = SHUFFLE.replace(
        "    i = random.randrange(len(items))\n",
        "    if not items:\n        return items\n    i = random.randrange(len(items))\n",
    ).replace("out.append(k)", "out.append(k * 2)")
    report = measure(SHUFFLE, empty)
    scope = judged_units(report, "Make build return the even numbers.", original=SHUFFLE, edited=empty)[0]
    found = statement_flags(report, scope, original=SHUFFLE, edited=empty, flagged=[False] * len(report.hunks))
    assert not any("shortcut" in f.reason for f in found)
