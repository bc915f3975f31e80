"""The second stage of the test-backed search: new statements inside a needed unit (server.fidelity.judge.parts)."""

from __future__ import annotations

import ast

from server.fidelity.judge.parts import branch_body, judge_parts, new_lines, new_parts, without_parts

ORIGINAL = """def descend(f, x, steps):
    for _ in range(steps):
        x = x - f(x)
    return x
"""
# the fix (the step uses grad) comes with an early break and a value nobody reads, in one unit
EDITED = """def descend(f, x, steps):
    for _ in range(steps):
        g = grad(f)(x)
        if abs(g) < 1e-9:
            break
        x = x - 0.1 * g
        unused = f(x)
    return x
"""
INSTRUCTION = "Fix descend() so that each step follows the gradient: use grad()."


def lines_of(text: str, part) -> str:
    return "".join(text.splitlines(keepends=True)[part.start_line - 1 : part.end_line])


def test_the_new_statements_are_parts_at_every_depth_and_old_lines_are_not():
    parts = new_parts(ORIGINAL, EDITED)
    assert [lines_of(EDITED, p).strip().splitlines()[0] for p in parts] == [
        "g = grad(f)(x)",
        "if abs(g) < 1e-9:",
        "break",
        "x = x - 0.1 * g",
        "unused = f(x)",
    ]
    assert new_lines(ORIGINAL, EDITED) == {3, 4, 5, 6, 7}
    assert new_parts(ORIGINAL, "def broken(:\n") == []
    assert new_parts(ORIGINAL, EDITED, language="javascript") == []


def test_a_part_sharing_a_line_with_other_code_is_no_part_and_definitions_are_not_parts():
    edited = "def f(x):\n    a = 1; b = 2\n    return x\n\n\ndef helper():\n    return 3\n"
    parts = new_parts("def f(x):\n    return x\n", edited)
    assert [lines_of(edited, p).strip() for p in parts] == ["return 3"]


def test_cutting_parts_keeps_the_text_parseable_and_a_nested_part_goes_with_its_statement():
    parts = new_parts(ORIGINAL, EDITED)
    only_break = without_parts(EDITED, parts, [2])
    assert "            pass\n" in only_break and "break" not in only_break
    ast.parse(only_break)
    both = without_parts(EDITED, parts, [1, 2])
    assert "if abs" not in both and both.count("pass") == 1
    ast.parse(both)
    assert without_parts(EDITED, parts, [4], filler=False) == EDITED.replace("        unused = f(x)\n", "")


def test_unneeded_extras_inside_the_fix_are_flagged_and_the_fix_is_not():
    parts = new_parts(ORIGINAL, EDITED)
    units = [(3, 7)]  # the edit's one unit, as lines of EDITED
    verdicts = judge_parts(EDITED, parts, {1, 2, 4}, INSTRUCTION, original=ORIGINAL, edited=EDITED, unit_lines=units)
    flagged = {(v.start_line, v.end_line) for v in verdicts}
    assert flagged == {(4, 5), (7, 7)}  # the if/break once (its nested break with it), the dead store
    assert all(v.unit == 0 and "tests pass without it" in v.reason for v in verdicts)


def test_a_unit_the_tests_accept_as_a_bare_deletion_gives_no_evidence_on_its_statements():
    original = "def keep(xs):\n    out = []\n    for x in xs:\n        out.append(x)\n    return out\n"
    edited = (
        "def keep(xs):\n    out = []\n    for x in xs:\n        if x > 0:\n            out.append(x)\n    return out\n"
    )
    parts = new_parts(original, edited)
    every = set(range(len(parts)))
    verdicts = judge_parts(
        edited, parts, every, "Keep only the positive items.", original=original, edited=edited, unit_lines=[(4, 5)]
    )
    assert verdicts == []  # every new line can go and the tests pass: they do not test the filter


def test_a_statement_the_instruction_names_is_asked_for():
    original = 'TOKENS = ["if", "other"]\n\n\ndef count(xs):\n    for x in xs:\n        pass\n    return len(xs)\n'
    edited = original.replace("    return len(xs)\n", '    log("for")\n    return len(xs)\n')
    parts = new_parts(original, edited)
    verdicts = judge_parts(
        edited, parts, {0}, 'Add a "for" token to count.', original=original, edited=edited, unit_lines=[(6, 6)]
    )
    assert verdicts == []  # "for" is new as a string, and the instruction speaks of it


def test_the_whole_body_of_a_needed_new_branch_goes_with_its_branch():
    original = "def grade(score):\n    passed = False\n    if score > 50:\n        passed = True\n    return passed\n"
    # the new branch sets the value the flag already holds: the tests need the branch, not its body
    edited = (
        "def grade(score):\n    passed = False\n    if score == 51:\n        passed = False\n"
        "    elif score > 50:\n        passed = True\n    return passed\n"
    )
    parts = new_parts(original, edited)
    body = next(i for i, p in enumerate(parts) if lines_of(edited, p).strip() == "passed = False")
    tree = ast.parse(edited)
    assert branch_body(tree, parts[body], new_lines(original, edited))
    instruction = "A score of exactly 51 does not pass."
    assert judge_parts(edited, parts, {body}, instruction, original=original, edited=edited, unit_lines=[(3, 5)]) == []
    # an extra statement beside another one in the branch is no whole body: judged on its own
    extra = edited.replace("        passed = False\n    elif", "        passed = False\n        retries = 0\n    elif")
    parts = new_parts(original, extra)
    cut = next(i for i, p in enumerate(parts) if lines_of(extra, p).strip() == "retries = 0")
    assert not branch_body(ast.parse(extra), parts[cut], new_lines(original, extra))
    verdicts = judge_parts(extra, parts, {cut}, instruction, original=original, edited=extra, unit_lines=[(3, 6)])
    assert [(v.start_line, v.end_line) for v in verdicts] == [(5, 5)]


def test_a_statement_that_builds_the_needed_new_value_is_part_of_it():
    original = "def evens(xs):\n    return xs\n"
    edited = "def evens(xs):\n    kept = []\n    for x in xs:\n        if x % 2 == 0:\n            kept.append(x)\n    return kept\n"
    parts = new_parts(original, edited)
    loop = next(i for i, p in enumerate(parts) if lines_of(edited, p).startswith("    for"))
    # the tests pass with an empty result: they do not reach the loop that fills it, which the kept code returns
    assert (
        judge_parts(
            edited, parts, {loop}, "Return only the even items.", original=original, edited=edited, unit_lines=[(2, 6)]
        )
        == []
    )
