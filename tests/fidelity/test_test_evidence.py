"""Test-backed evidence (`server.fidelity.judge.test_evidence`): a unit the tests pass without, that the
instruction asks for neither by kind nor by name, is unrequested; everything else keeps the instruction's
verdict."""

from __future__ import annotations

import ast

from server.fidelity import measure
from server.fidelity.judge.flags import judge_units
from server.fidelity.judge.test_evidence import REASON, completes_kept, evidence, judge_units_with_tests, slid

ORIGINAL = """def mean_above(values, limit):
    chosen = [v for v in values if v < limit]
    return sum(chosen) / len(chosen) if chosen else 0.0


def step(x, grad):
    for _ in range(10):
        x = x - grad(x)
    return x
"""


def _judge(edited: str, instruction: str, unneeded: set[int]) -> tuple[list, list]:
    report = measure(ORIGINAL, edited)
    verdicts = judge_units_with_tests(report, instruction, unneeded, original=ORIGINAL, edited=edited)
    return report.hunks, verdicts


def _unit(hunks, text: str) -> int:
    """The index of the unit whose edits insert `text`."""
    return next(i for i, h in enumerate(hunks) if any(text in e.new_text for e in h.edits))


def test_evidence_needs_a_passing_subset_that_is_not_empty():
    assert evidence("minimal", [0], [1, 2]) == {1, 2}
    assert evidence("budget", [0, 1], [2]) == {2}
    assert evidence("minimal", [], [0, 1]) == set()  # the tests pass on the original: they test nothing here
    for status in ("full_fails", "unresolved", "no_hunks"):
        assert evidence(status, [0], [1]) == set()


def test_an_extra_break_the_tests_do_not_need_is_flagged_the_fix_is_not():
    edited = ORIGINAL.replace("if v < limit", "if v > limit").replace(
        "        x = x - grad(x)\n", "        x = x - grad(x)\n        if abs(grad(x)) < 1e-9:\n            break\n"
    )
    hunks, verdicts = _judge(edited, "Fix the mean: it keeps the values below the limit.", set())
    fix, extra = _unit(hunks, ">"), _unit(hunks, "break")
    assert not verdicts[extra].flagged  # the words alone cannot tell an extra branch from the fix
    hunks, verdicts = _judge(edited, "Fix the mean: it keeps the values below the limit.", {extra})
    assert verdicts[extra].flagged and verdicts[extra].reason == REASON and verdicts[extra].unrequested == ("logic",)
    assert not verdicts[fix].flagged
    # an instruction that names `mean_above` points away from `step`: the words tell (`target_scope`)
    hunks, verdicts = _judge(edited, "Fix `mean_above`: it keeps the values below the limit.", set())
    assert verdicts[extra].unrequested == ("outside_target",) and not verdicts[fix].flagged


def test_what_the_instruction_asks_for_by_kind_or_by_name_is_not_flagged():
    guard = ORIGINAL.replace(
        "    chosen = [v for v",
        '    if limit is None:\n        raise ValueError("limit is required")\n    chosen = [v for v',
    )
    # validation asked for (a kind): the tests need not exercise it
    hunks, verdicts = _judge(guard, "Validate the input: raise a ValueError when the limit is None.", {0})
    assert not verdicts[0].flagged
    # a word the original lacks, which the instruction uses: asked for by name
    tolerance = ORIGINAL.replace("    for _ in range(10):", "    tolerance = 1e-9\n    for _ in range(10):")
    hunks, verdicts = _judge(tolerance, "Add a tolerance to the loop of step.", {0})
    assert not verdicts[0].flagged
    hunks, verdicts = _judge(tolerance, "Fix the filter of mean_above.", {0})
    assert verdicts[0].flagged


def test_no_test_can_need_a_docstring_or_a_layout_change():
    documented = ORIGINAL.replace("def step(x, grad):\n", 'def step(x, grad):\n    """Ten gradient steps."""\n')
    hunks, verdicts = _judge(documented, "Fix the filter of mean_above.", {0})
    assert [h.kinds for h in hunks] == [["docstring"]]
    assert verdicts == judge_units(measure(ORIGINAL, documented), "Fix the filter of mean_above.", original=ORIGINAL)


def test_a_named_target_whose_changes_the_tests_need_none_of_is_no_evidence():
    edited = ORIGINAL.replace("x = x - grad(x)", "x -= grad(x)")
    # `step` named, and nothing in it needed: the tests do not test what was asked there
    assert not _judge(edited, "Rewrite the update in `step`.", {0})[1][0].flagged
    # another function named: the change in `step` is an extra the tests do not need
    assert _judge(edited, "Fix the filter in `mean_above`.", {0})[1][0].flagged


def test_no_instruction_or_no_evidence_changes_nothing():
    edited = ORIGINAL.replace("x = x - grad(x)", "x -= grad(x)")
    report = measure(ORIGINAL, edited)
    plain = judge_units(report, None, original=ORIGINAL, edited=edited)
    assert judge_units_with_tests(report, None, {0}, original=ORIGINAL, edited=edited) == plain
    words = judge_units(report, "Fix the filter.", original=ORIGINAL, edited=edited)
    assert judge_units_with_tests(report, "Fix the filter.", set(), original=ORIGINAL, edited=edited) == words


COLLECT = """def collect(xs):
    out = []
    for x in xs:
        log(x)
        out.append(x * 2)
    return out
"""
# the needed change stores a new `doubled`; a second unit filters on it (a case no test builds)
COLLECT_EDITED = """def collect(xs):
    out = []
    for x in xs:
        doubled = x * 2
        log(x)
        if doubled not in out:
            out.append(doubled)
    return out
"""


def test_a_unit_that_completes_the_needed_new_code_keeps_the_instruction_verdict():
    report = measure(COLLECT, COLLECT_EDITED)
    filter_unit = _unit(report.hunks, "if doubled")
    store_unit = _unit(report.hunks, "doubled = x * 2")
    assert filter_unit != store_unit
    words = judge_units(report, "Skip the repeated values.", original=COLLECT, edited=COLLECT_EDITED)
    tested = judge_units_with_tests(
        report, "Skip the repeated values.", {filter_unit}, original=COLLECT, edited=COLLECT_EDITED
    )
    assert tested == words  # the only reader of the needed `doubled`: part of that change
    # the same filter on an old name completes nothing: the tests' silence is evidence again
    edited = COLLECT_EDITED.replace(
        "if doubled not in out:\n            out.append(doubled)", "if x not in out:\n            out.append(x * 2)"
    )
    report = measure(COLLECT, edited)
    unit = _unit(report.hunks, "if x not in out")
    assert judge_units_with_tests(report, "Skip the repeated values.", {unit}, original=COLLECT, edited=edited)[
        unit
    ].flagged


def test_completes_kept_reads_and_builds_of_new_names_only():
    code = """def f(xs):
    seen = []
    total = 0
    for x in xs:
        seen.append(x)
        total += x
        if total > 10:
            break
    return seen, total
"""
    tree = ast.parse(code)
    new = {2, 5, 7, 8, 9}  # the edit's lines: `seen` is new, `total` is the original's (lines 3 and 6 are old)
    # builds `seen`, which the kept return reads after it
    assert "seen" in (completes_kept(tree, {5}, {2, 9}, new) or "")
    # a break on a name the kept code reads anyway completes nothing; nor does an old name's update
    assert completes_kept(tree, {7, 8}, {2, 5, 9}, new) is None
    assert completes_kept(tree, {6}, {2, 9}, new | {6}) is None
    # a value built after its last kept reader builds nothing the kept code reads
    assert completes_kept(tree, {5}, {2}, new) is None
    # the only reader of a new name the kept code stores
    assert "seen" in (completes_kept(tree, {9}, {2, 5}, new) or "")
    # a name an old line of the function uses is not new, wherever else it is stored
    assert completes_kept(tree, {9}, {2, 5}, new - {5}) is None


SHOUT = """def shout(words):
    out = ""
    for i in range(len(words) - 1):
        out += words[i].upper()
    return out"""
# a fixed copy of the function added after the original (no newline at the end of either): the line diff
# pairs the original's last line with the copy's, so the first inserted unit is a repeat of `return out`
SHOUT_COPY = (
    SHOUT
    + """

def shout(words):
    out = ""
    for i in range(len(words)):
        out += words[i].upper()
    return out"""
)


def test_an_insertion_where_the_line_diff_cut_a_repeated_line_is_no_evidence():
    report = measure(SHOUT, SHOUT_COPY)
    lines = SHOUT_COPY.splitlines(keepends=True)
    cut = [i for i, h in enumerate(report.hunks) if slid(h, report.hunks, lines)]
    assert len(cut) == 1 and lines[report.hunks[cut[0]].new_start_line - 1].strip() == "return out"
    verdicts = judge_units_with_tests(
        report, "Fix the loop: it skips the last word.", set(cut), original=SHOUT, edited=SHOUT_COPY
    )
    assert verdicts == judge_units(report, "Fix the loop: it skips the last word.", original=SHOUT, edited=SHOUT_COPY)
    # an insertion that repeats nothing beside it is judged as ever
    extra = SHOUT.replace("    return out", "    print(out)\n    return out")
    report = measure(SHOUT, extra)
    assert not any(slid(h, report.hunks, extra.splitlines(keepends=True)) for h in report.hunks)


def test_tests_passed_by_unrequested_changes_alone_are_no_evidence_on_the_rest():
    # the request (skip repeated values) in two units, an unrequested new function in a third
    edited = COLLECT_EDITED + "\n\ndef helper_nobody_uses():\n    return 1\n"
    report = measure(COLLECT, edited)
    instruction = "Skip the repeated values."
    words = judge_units(report, instruction, original=COLLECT, edited=edited)
    extra = _unit(report.hunks, "helper_nobody_uses")
    assert words[extra].flagged  # an unrequested new definition
    rest = set(range(len(report.hunks))) - {extra}
    # the tests need only the unrequested unit: they do not test the request, so nothing more is flagged
    assert judge_units_with_tests(report, instruction, rest, original=COLLECT, edited=edited) == words
