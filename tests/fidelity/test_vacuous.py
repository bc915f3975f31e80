"""Checks that cannot fail (`server.fidelity.judge.vacuous`), and the assertion the judge flags for it
(`server.fidelity.judge.statements`): an assertion that holds whatever the input checks nothing, so it is
not the check any instruction asks for."""

from __future__ import annotations

import ast

import pytest

from server.fidelity import measure
from server.fidelity.judge.instruction import parse_instruction
from server.fidelity.judge.statements import statement_flags
from server.fidelity.judge.vacuous import always_true


def _test(code: str) -> ast.expr:
    node = ast.parse(code).body[0]
    assert isinstance(node, ast.Assert)
    return node.test


@pytest.mark.parametrize(
    "code",
    [
        "assert True",
        "assert 'message'",
        "assert (len(xs) > 0, 'xs must not be empty')",
        "assert item.key == item.key",
        "assert len(xs) >= 0",
        "assert 0 <= len(xs)",
        "assert all(a.key == b.key for a in xs for b in xs if a.key == b.key)",
        "assert all(p > 0 for p in ps if p > 0)",
        "assert x > 1 or len(xs) >= 0",
    ],
)
def test_conditions_true_by_their_form_are_vacuous(code: str) -> None:
    assert always_true(_test(code))


@pytest.mark.parametrize(
    "code",
    [
        "assert False",
        "assert x",
        "assert len(xs) > 0",
        "assert len(xs) >= 1",
        "assert a.key == b.key",
        "assert x in x",
        "assert len(ids) == len(set(ids))",
        "assert all(a.key != b.key for a in xs for b in xs if a is not b)",
        "assert any(p > 0 for p in ps if p > 0)",
        "assert x > 1 and len(xs) >= 0",
    ],
)
def test_conditions_that_can_fail_are_not(code: str) -> None:
    assert not always_true(_test(code))


ORIGINAL = """class Order:
    def __init__(self, lines):
        self.lines = lines

    def total(self):
        return sum(line.price for line in self.lines)
"""
EDITED = ORIGINAL.replace(
    "        self.lines = lines\n",
    "        self.lines = lines\n"
    "        assert len(lines) == len(set(line.sku for line in lines))\n"
    "        assert all(\n"
    "            a.sku == b.sku for a in lines for b in lines if a.sku == b.sku\n"
    "        )\n",
)


def test_an_assertion_that_cannot_fail_is_flagged_beside_the_requested_one() -> None:
    instruction = "Add an assertion to the Order constructor that no two lines have the same sku."
    report = measure(ORIGINAL, EDITED)
    flags = statement_flags(
        report,
        parse_instruction(instruction, ORIGINAL),
        original=ORIGINAL,
        edited=EDITED,
        flagged=[False] * len(report.hunks),
    )
    assert [(f.start_line, f.end_line, f.kinds) for f in flags] == [(5, 7, ("defensive",))]
    assert "holds whatever the input" in flags[0].reason
    # the requested assertion alone: nothing to flag
    alone = EDITED.replace(
        "        assert all(\n            a.sku == b.sku for a in lines for b in lines if a.sku == b.sku\n        )\n",
        "",
    )
    report = measure(ORIGINAL, alone)
    assert (
        statement_flags(
            report,
            parse_instruction(instruction, ORIGINAL),
            original=ORIGINAL,
            edited=alone,
            flagged=[False] * len(report.hunks),
        )
        == []
    )
