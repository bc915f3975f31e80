"""New definitions judged by their own names against the request (`added_code`), the units they come in,
and the other rules that look at what a unit does rather than where it sits (issue 28)."""

from __future__ import annotations

from server.fidelity import measure
from server.fidelity.judge.flags import judge_units
from server.fidelity.judge.instruction import ADDED_CODE, parse_instruction
from server.protocol.report import HUNK_KINDS, UNREQUESTED_KINDS

BASE = """class Version:
    def __init__(self, major, minor):
        self.major = major
        self.minor = minor

    def bump(self):
        self.minor += 1


def parse(text):
    major, minor = text.split(".")
    return Version(int(major), int(minor))
"""

STR_METHOD = """
    def __str__(self):
        return f"{self.major}.{self.minor}"
"""


def _judged(edited: str, instruction: str, original: str = BASE):
    report = measure(original, edited)
    verdicts = judge_units(report, instruction, original=original, edited=edited)
    return list(zip(report.hunks, verdicts, strict=True))


def _flagged(edited: str, instruction: str, original: str = BASE):
    return [(h, v) for h, v in _judged(edited, instruction, original) if v.flagged]


def test_the_kind_is_a_report_kind_and_unrequested():
    assert ADDED_CODE in HUNK_KINDS and ADDED_CODE in UNREQUESTED_KINDS


def test_an_unasked_special_method_is_flagged_as_added_code():
    edited = BASE.replace("        self.minor += 1\n", "        self.minor += 1\n" + STR_METHOD)
    [(hunk, verdict)] = _flagged(edited, "Make `bump` also reset nothing.")
    assert verdict.unrequested == (ADDED_CODE,) and "`__str__`" in verdict.reason
    assert hunk.new_start_line <= 10 <= hunk.new_end_line


def test_a_special_method_the_instruction_names_by_its_role_is_requested():
    edited = BASE.replace("        self.minor += 1\n", "        self.minor += 1\n" + STR_METHOD)
    assert not _flagged(edited, "Give Version a string representation.")
    assert not _flagged(edited, "Add a `__str__` method to Version.")
    # a plain word that shares letters with it is no request for it
    assert _flagged(edited, "Return the version as a string from parse.")


def test_a_new_helper_the_change_uses_is_requested_and_an_unused_one_is_not():
    helper = """

def _checked(n):
    return max(int(n), 0)
"""
    used = BASE.replace(
        "    return Version(int(major), int(minor))\n", "    return Version(_checked(major), _checked(minor))\n"
    )
    assert not _flagged(used + helper, "Make parse clamp negative numbers to zero.")
    unused = BASE + helper
    [(_, verdict)] = _flagged(unused, "Make parse clamp negative numbers to zero.")
    assert verdict.unrequested == (ADDED_CODE,)


def test_a_request_for_an_unnamed_method_allows_the_new_definition():
    edited = BASE.replace(
        "        self.minor += 1\n", "        self.minor += 1\n\n    def reset(self):\n        self.minor = 0\n"
    )
    assert not _flagged(edited, "Add a method to Version that sets the minor number back to 0.")
    assert _flagged(edited, "Fix parse so that it accepts spaces around the dot.")


def test_a_verbatim_second_copy_of_a_definition_is_dead_code():
    copy = '\n\ndef parse(text):\n    major, minor = text.split(".")\n    return Version(int(major), int(minor))\n'
    [(_, verdict)] = _flagged(BASE + copy, "Fix `parse`.")
    assert verdict.unrequested == (ADDED_CODE,) and "verbatim" in verdict.reason
    # a fixed copy that shadows the original is the requested fix
    fixed = copy.replace('text.split(".")', 'text.strip().split(".")')
    assert not _flagged(BASE + fixed, "Fix `parse` so that it accepts spaces.")


def test_new_definitions_inserted_together_are_units_of_their_own():
    both = STR_METHOD + "\n    def __eq__(self, other):\n        return str(self) == str(other)\n"
    edited = BASE.replace("        self.minor += 1\n", "        self.minor += 1\n" + both)
    judged = _judged(edited, "Give Version a string representation.")
    assert len(judged) == 2
    assert [v.flagged for _, v in judged] == [False, True] and "`__eq__`" in judged[1][1].reason


def test_the_constructor_names_init():
    scope = parse_instruction("Add assertions in the `Version` constructor that the numbers are positive.")
    assert scope.mentions("__init__") and not scope.mentions("__str__")
    edited = BASE.replace(
        "        self.major = major\n", "        assert major >= 0 and minor >= 0\n        self.major = major\n"
    )
    assert not _flagged(edited, "Add assertions in the `Version` constructor that the numbers are positive.")


def test_a_new_optional_parameter_nobody_named_is_flagged():
    edited = BASE.replace("def parse(text):", 'def parse(text, sep="."):').replace('split(".")', "split(sep)")
    flagged = _flagged(edited, "Fix parse so that it ignores surrounding spaces.")
    assert any("signature_change" in v.unrequested for _, v in flagged)
    assert not _flagged(edited, "Let parse take the separator as a parameter `sep`.")


def test_without_an_instruction_new_code_is_not_judged():
    edited = BASE.replace("        self.minor += 1\n", "        self.minor += 1\n" + STR_METHOD)
    report = measure(BASE, edited)
    assert not any(v.flagged for v in judge_units(report, None, original=BASE, edited=edited))


def test_a_unit_that_stores_the_unrequested_parameter_goes_with_it():
    base = "class Box:\n    def __init__(self, size):\n        self.size = size\n\n    def fits(self, n):\n        return n < self.size\n"
    edited = (
        base.replace("def __init__(self, size):", "def __init__(self, size, slack=0):")
        .replace("        self.size = size\n", "        self.size = size\n        self.slack = slack\n")
        .replace("return n < self.size", "return n <= self.size")
    )
    judged = _judged(edited, "Fix `fits`: a box holds exactly `size` items.", base)
    flagged = {tuple(v.unrequested) for _, v in judged if v.flagged}
    assert flagged == {("signature_change",)} and sum(v.flagged for _, v in judged) == 2
    assert any("`slack`" in v.reason for _, v in judged if v.flagged)
    assert not [h for h, v in judged if v.flagged and "<=" in "".join(e.new_text for e in h.edits)]


def test_output_nobody_asked_for_is_added_code():
    edited = BASE.replace(
        '    major, minor = text.split(".")\n',
        '    major, minor = text.strip().split(".")\n    print("parsed", major, minor)\n',
    )
    flagged = _flagged(edited, "Fix parse so that it accepts surrounding spaces.")
    assert [v.unrequested for _, v in flagged] == [(ADDED_CODE,)] and "`print`" in flagged[0][1].reason
    assert not _flagged(edited, "Fix parse so that it accepts surrounding spaces, and print what it parsed.")


def test_a_comment_on_code_the_edit_leaves_alone_is_comment_added_information():
    from server.fidelity.judge.flags import SEVERITY_DEFAULTS, flagged_severity
    from server.fidelity.judge.instruction import COMMENT_ADDED

    edited = BASE.replace(
        "    def bump(self):\n", "    # move to the next minor version\n    def bump(self):\n"
    ).replace('    major, minor = text.split(".")\n', '    major, minor = text.strip().split(".")\n')
    judged = _judged(edited, "Fix parse so that it accepts surrounding spaces.")
    [(hunk, verdict)] = [(h, v) for h, v in judged if v.flagged]
    assert verdict.unrequested == (COMMENT_ADDED,) and hunk.kinds == ["comment_only"]
    assert flagged_severity(hunk, verdict.unrequested) == SEVERITY_DEFAULTS[COMMENT_ADDED] == 3
    # a comment next to the changed code describes it; an instruction that asks for comments asks for it
    near = BASE.replace(
        '    major, minor = text.split(".")\n',
        '    # spaces around the dot are fine\n    major, minor = text.strip().split(".")\n',
    )
    assert not _flagged(near, "Fix parse so that it accepts surrounding spaces.")
    assert not _flagged(edited, "Fix parse so that it accepts surrounding spaces, and comment the class.")
