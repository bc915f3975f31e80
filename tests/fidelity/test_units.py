"""Change units finer than lines (issue 17): hand-made pairs for each case the issue lists."""

from __future__ import annotations

import textwrap

from server.fidelity import apply_text_edits, measure, paper_tokens
from server.fidelity.judge.ddmin import edits_by_unit, find_needed_units_sync, sub_edit

MEAN = textwrap.dedent(
    """\
    def mean(numbers):
        total = 0
        for n in numbers:
            total += n
        return total / len(numbers)
    """
)
MEAN_EDITED = MEAN.replace("numbers", "values").replace("len(values)", "len(values) + 1")


def keep(original: str, report, chosen) -> str:
    return apply_text_edits(original, report.unit_edits(chosen))


def test_a_fix_and_a_rename_on_one_line_are_two_units():
    report = measure(MEAN, MEAN_EDITED)
    assert [h.kinds for h in report.hunks] == [["rename", "signature_change"], ["logic"]]
    rename, fix = report.hunks
    assert rename.renames == {"numbers": "values"} and len(rename.edits) == 3  # every occurrence
    assert rename.unrequested and not fix.unrequested
    assert fix.edits[0].new_text == " + 1" and fix.names == []
    # reverting the rename keeps the fix; accepting everything is the edit, nothing the original
    assert keep(MEAN, report, [1]) == MEAN.replace("len(numbers)", "len(numbers) + 1")
    assert keep(MEAN, report, [0, 1]) == MEAN_EDITED
    assert keep(MEAN, report, []) == MEAN
    assert keep(MEAN, report, [0]) == MEAN.replace("numbers", "values")


def test_ddmin_over_units_keeps_only_the_fix():
    units = edits_by_unit(MEAN, MEAN_EDITED)
    assert len(units) == 2

    def check(kept: frozenset[int]) -> bool:
        scope: dict = {}
        exec(sub_edit(MEAN, units, kept), scope)  # noqa: S102 - our own test program
        return scope["mean"]([1, 2, 3]) == 3

    res = find_needed_units_sync(len(units), check)
    assert (res.status, res.needed, res.unnecessary) == ("minimal", [1], [0])


def test_a_removed_trailing_comment_is_not_part_of_the_fix():
    original = "def f(x):\n    return x + 1  # add one\n"
    report = measure(original, "def f(x):\n    return x + 2\n")
    assert [h.kinds for h in report.hunks] == [["logic"], ["comment_removed"]]
    assert keep(original, report, [0]) == "def f(x):\n    return x + 2  # add one\n"


def test_same_syntax_tree_is_formatting_only_per_statement():
    original = "def f(a, b):\n    x = a - b\n    y = 'name'\n    z = g(a, b)\n    return x < b\n"
    edited = (
        'def f(a, b):\n    x = (a - b)\n    y = "name"\n    z = g(\n        a,\n        b,\n    )\n    return x <= b\n'
    )
    report = measure(original, edited)
    assert [h.kinds for h in report.hunks] == [["formatting_only"]] * 3 + [["logic"]]
    assert all(h.unrequested for h in report.hunks[:3]) and not report.hunks[3].unrequested
    reverted = keep(original, report, [3])
    assert reverted == original.replace("x < b", "x <= b")
    # a tuple's trailing comma changes the tree: not formatting
    assert measure("x = (1)\n", "x = (1,)\n").hunks[0].kinds == ["logic"]


def test_try_except_around_the_body_is_one_unit_and_the_fix_inside_another():
    original = "def f(xs):\n    total = sum(xs)\n    return total / len(xs)\n"
    edited = (
        "def f(xs):\n    try:\n        total = sum(xs)\n        return total / (len(xs) - 1)\n"
        "    except ZeroDivisionError:\n        return 0\n"
    )
    report = measure(original, edited)
    kinds = [h.kinds for h in report.hunks]
    assert kinds == [["defensive"], ["logic"]]
    wrap = report.hunks[0]
    assert len(wrap.edits) > 1 and wrap.unrequested  # `try:`, the indentation and the handler together
    assert keep(original, report, [1]) == original.replace("len(xs)", "(len(xs) - 1)")
    assert keep(original, report, [0, 1]) == edited


def test_revert_unrequested_gives_the_gold_tokens():
    original = "import os\n\n\ndef area(w, h):\n    # width times height\n    return w + h\n"
    gold = original.replace("w + h", "w * h")
    edited = (
        "import os\nimport json\n\n\ndef area(width, h):\n    if width is None:\n        raise ValueError('no width')\n"
        "    return (width * h)\n"
    )
    report = measure(original, edited)
    minimal = apply_text_edits(original, [e for h in report.hunks if not h.unrequested for e in h.edits])
    assert paper_tokens(minimal) == paper_tokens(gold)
    assert {k for h in report.hunks if h.unrequested for k in h.kinds} >= {
        "import_change",
        "rename",
        "defensive",
        "comment_removed",
        "formatting_only",
    }


def test_an_unparseable_side_is_localised():
    original = "def a():\n    return 1\n\n\ndef b():\n    return [1, 2]\n\n\ndef c():\n    return 3\n"
    edited = original.replace("return [1, 2]", "return [1, 2")  # one character: b no longer parses
    report = measure(original, edited)
    status = {f.name: f.status for f in report.functions}
    assert status["b"] == "unparseable" and "a" not in status and "c" not in status
    # the paper's distance falls back to str.split() over the whole file; the localised one does not
    assert report.distance["raw"].normalized > 0.3
    assert report.localized_distance is not None and report.localized_distance["raw"].tokens <= 3
    assert report.localized_distance["no_comments"].tokens <= 3
    same = measure(original, original.replace("return 3", "return 4"))
    assert same.localized_distance == same.distance


def _unit(report, kind: str):
    [found] = [i for i, h in enumerate(report.hunks) if kind in h.kinds]
    return found


def _all_but(report, i: int) -> list[int]:
    return [j for j in range(len(report.hunks)) if j != i]


def test_lines_inserted_at_one_point_are_split_where_statements_differ():
    original = "def f(m):\n    return m\n"
    helper = "def g(m):\n    return m * 2\n\n"
    gold = helper + original.replace("return m", "return g(m)")
    edited = "import functools\n" + gold
    report = measure(original, edited)
    imp = _unit(report, "import_change")
    assert [h.kinds for h in report.hunks].count(["logic"]) == 2  # the helper and the call: the fix
    # the import reverts alone: the helper inserted at the same point stays, in its place
    assert keep(original, report, _all_but(report, imp)) == gold
    assert keep(original, report, range(len(report.hunks))) == edited


def test_an_omission_marker_is_its_own_unit_beside_inserted_code():
    original = "def f(xs):\n    total = 0\n    return total\n"
    gold = original.replace("    return total", "    for x in xs:\n        total += x\n    return total")
    edited = gold.replace("        total += x\n", "        total += x\n    # ... rest of the function unchanged\n")
    report = measure(original, edited)
    lazy = _unit(report, "lazy_placeholder")
    assert report.hunks[lazy].unrequested
    assert paper_tokens(keep(original, report, _all_but(report, lazy))) == paper_tokens(gold)


def test_a_fix_at_the_end_of_a_last_line_without_a_line_break_and_lines_appended():
    original = "def f(a, b):\n    return g(a * (a - b) * a - b)"
    gold = "def f(a, b):\n    return g(a * (a - b) * (a - b))"
    edited = gold + "\n\n\ndef helper(v):\n    return v\n"
    report = measure(original, edited, target=range(1, 3))
    outside = _unit(report, "outside_target")
    assert report.hunks[outside].kinds == ["logic", "outside_target"]
    assert "outside_target" not in {k for i, h in enumerate(report.hunks) if i != outside for k in h.kinds}
    assert keep(original, report, _all_but(report, outside)) == gold


def test_parentheses_around_one_expression_next_to_a_fix_are_formatting():
    original = "def area(a, b, c):\n    s = (a + b + c)/2\n    return sqrt(s * (s - a) * (s - b) * s - c)\n"
    gold = original.replace("* s - c)", "* (s - c))")
    edited = gold.replace("s = (a + b + c)/2", "s = ((a + b + c)/2)")
    report = measure(original, edited)
    assert sorted(h.kinds for h in report.hunks) == [["formatting_only"], ["logic"]]
    assert keep(original, report, [_unit(report, "logic")]) == gold


def test_an_f_string_holding_a_rename_and_a_fix_gives_two_units():
    original = "def hello(name):\n    return f'{name} says hi'\n"
    edited = "def hello(name_value):\n    return f'{name_value.upper()} says hi'\n"
    report = measure(original, edited)
    rename = _unit(report, "rename")
    assert report.hunks[rename].renames == {"name": "name_value"} and len(report.hunks[rename].edits) == 2
    assert (
        keep(original, report, _all_but(report, rename)) == "def hello(name):\n    return f'{name.upper()} says hi'\n"
    )


def test_a_rename_is_not_taken_from_a_name_of_an_added_function():
    original = "def fmt(a):\n    text = f'{a}!'\n    return text\n"
    edited = (
        "def helper(m):\n    part = m.strip()\n    return part\n\n"
        "def fmt(a):\n    the_text = f'{helper(a)}!'\n    return the_text\n"
    )
    renames = {k: v for h in measure(original, edited).hunks for k, v in h.renames.items()}
    assert renames == {"text": "the_text"}
