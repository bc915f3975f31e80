"""Hunk classification on hand-made edits, one class at a time and mixed."""

from __future__ import annotations

import textwrap

from server.fidelity import measure

BASE = textwrap.dedent(
    '''\
    import os


    def total(items, start=0):
        """Add up the items."""
        # running sum
        result = start
        for item in items:
            result = result + item
        return result


    def count(items):
        return len(items)
    '''
)


def kinds_of(edited: str, original: str = BASE, **kwargs) -> list[list[str]]:
    return [h.kinds for h in measure(original, edited, **kwargs).hunks]


def test_identical_text_has_no_hunks():
    report = measure(BASE, BASE)
    assert report.identical and report.hunks == [] and report.edits == []
    assert report.distance["raw"].tokens == 0


def test_formatting_only():
    edited = BASE.replace("result = result + item", "result = result+item").replace(
        "return len(items)", "return len( items )"
    )
    assert kinds_of(edited) == [["formatting_only"], ["formatting_only"]]
    assert all(h.unrequested and h.tokens_changed == 0 for h in measure(BASE, edited).hunks)


def test_line_endings_and_blank_lines_are_formatting():
    assert kinds_of(BASE.replace("\n", "\r\n")) == [["formatting_only"]]
    assert kinds_of(BASE.replace("\n\n\ndef count", "\ndef count")) == [["formatting_only"]]


def test_comment_removed_and_comment_only():
    assert kinds_of(BASE.replace("    # running sum\n", "")) == [["comment_removed"]]
    assert kinds_of(BASE.replace("# running sum", "# the running total")) == [["comment_only"]]
    added = measure(BASE, BASE.replace("    return result\n", "    return result  # done\n"))
    assert [h.kinds for h in added.hunks] == [["comment_only"]] and not added.hunks[0].unrequested


def test_consistent_rename():
    report = measure(BASE, BASE.replace("result", "acc"))
    assert {k for h in report.hunks for k in h.kinds} == {"rename"}
    assert all(h.renames == {"result": "acc"} for h in report.hunks)
    assert "renamed `result` to `acc`" in report.hunks[0].message


def test_a_builtin_swap_is_logic_not_rename():
    # `len` is not bound in the file: swapping it for `sum` is a behaviour change
    assert kinds_of(BASE.replace("return len(items)", "return sum(items)")) == [["logic"]]


def test_inconsistent_rename_is_logic():
    edited = BASE.replace("result = start", "acc = start")  # other uses of `result` stay
    assert kinds_of(edited) == [["logic"]]


def test_parameter_rename_is_also_a_signature_change():
    report = measure(BASE, BASE.replace("items", "values"))
    kinds = [set(h.kinds) for h in report.hunks]
    assert {"rename", "signature_change"} in kinds


def test_docstring():
    assert kinds_of(BASE.replace("Add up the items.", "Return the sum of all items.")) == [["docstring"]]


def test_signature_change():
    edited = BASE.replace("def total(items, start=0):", "def total(items, start=0, *, strict=False):")
    assert kinds_of(edited) == [["signature_change"]]


def test_import_change():
    assert kinds_of(BASE.replace("import os\n", "import os\nimport sys\n")) == [["import_change"]]


def test_defensive_checks():
    guard = BASE.replace(
        "    result = start\n",
        "    if not isinstance(items, list):\n        raise TypeError('items must be a list')\n    result = start\n",
    )
    report = measure(BASE, guard)
    assert [h.kinds for h in report.hunks] == [["defensive"]]
    assert "input validation" in report.hunks[0].message
    wrapped = BASE.replace(
        "    return len(items)\n",
        "    try:\n        return len(items)\n    except TypeError:\n        return 0\n",
    )
    assert kinds_of(wrapped) == [["defensive"]]
    none_check = BASE.replace(
        "    return len(items)\n", "    if items is None:\n        return 0\n    return len(items)\n"
    )
    assert kinds_of(none_check) == [["defensive"]]


def test_a_new_branch_that_is_no_guard_is_logic():
    edited = BASE.replace(
        "    return len(items)\n", "    if len(items) > 3:\n        print('many')\n    return len(items)\n"
    )
    assert kinds_of(edited) == [["logic"]]


def test_lazy_placeholder():
    edited = BASE.replace(
        "    result = start\n    for item in items:\n        result = result + item\n",
        "    # ... existing code ...\n",
    )
    report = measure(BASE, edited)
    assert [h.kinds for h in report.hunks] == [["lazy_placeholder"]]
    assert "existing code" in report.hunks[0].message
    ellipsis = BASE.replace("    return len(items)\n", "    ...\n")
    assert kinds_of(ellipsis) == [["lazy_placeholder"]]


def test_deletion():
    edited = BASE.replace("\n\ndef count(items):\n    return len(items)\n", "")
    assert kinds_of(edited) == [["deletion"]]


def test_logic_fix_is_not_flagged():
    report = measure(BASE, BASE.replace("result + item", "result - item"))
    assert [h.kinds for h in report.hunks] == [["logic"]]
    assert not report.hunks[0].unrequested
    assert report.hunks[0].tokens_changed == 1


def test_outside_target():
    edited = BASE.replace("result + item", "result - item").replace("return len(items)", "return len(list(items))")
    report = measure(BASE, edited, target=range(4, 11))
    assert [h.kinds for h in report.hunks] == [["logic"], ["logic", "outside_target"]]
    assert [h.unrequested for h in report.hunks] == [False, True]
    assert "outside the target lines 4-10" in report.hunks[1].message


def test_mixed_change_splits_into_units():
    edited = BASE.replace(
        "    # running sum\n    result = start\n    for item in items:\n        result = result + item\n    return result\n",
        "    if items is None:\n        raise ValueError('no items')\n    acc = start\n    for item in items:\n        acc = acc - item\n    return acc\n",
    )
    report = measure(BASE, edited)
    assert [h.kinds for h in report.hunks] == [["comment_removed"], ["defensive"], ["rename"], ["logic"]]
    rename = report.hunks[2]
    assert rename.renames == {"result": "acc"} and len(rename.edits) == 4  # every occurrence, one unit
    assert [h.unrequested for h in report.hunks] == [True, True, True, False]
    assert report.hunks[3].edits[0].new_text == "-"


def test_hunk_lines_on_both_sides():
    edited = BASE.replace("    return len(items)\n", "    n = len(items)\n    return n\n")
    hunks = measure(BASE, edited).hunks
    assert (hunks[0].start_line, hunks[0].end_line, hunks[-1].new_end_line) == (14, 14, 15)
    assert all(h.kinds == ["logic"] for h in hunks)
    inserted = measure(BASE, BASE.replace("import os\n", "import os\nimport re\n")).hunks[0]
    assert (inserted.start_line, inserted.end_line, inserted.new_start_line, inserted.new_end_line) == (2, 1, 2, 2)


def test_function_breakdown():
    edited = BASE.replace("result + item", "result - item") + "\n\ndef extra():\n    return 1\n"
    functions = {f.name: f for f in measure(BASE, edited).functions}
    assert set(functions) == {"total", "extra"}
    assert functions["total"].status == "changed" and functions["total"].tokens_changed == 1
    assert functions["extra"].status == "added" and functions["extra"].start_line is None
    assert functions["total"].cognitive_before == functions["total"].cognitive_after == 1
    assert functions["total"].cyclomatic_before == 2


def test_renames_inside_a_rewrite_are_found_and_chance_alignments_are_not():
    original = (
        "def total_positive(items):\n    # sum of the positive items\n    s = 0\n"
        "    for i in range(1, len(items)):\n        if items[i] > 0:\n            s += items[i]\n    return s\n"
    )
    edited = (
        'def total_positive(values):\n    """Sum the positive values."""\n    if values is None:\n'
        '        raise ValueError("values must not be None")\n    result = 0\n    for value in values:\n'
        "        if value > 0:\n            result += value\n    return result\n"
    )
    hunks = measure(original, edited).hunks
    # `i` lines up with `values` once by chance; it is no rename, `items` and `s` are
    renames = {k: v for h in hunks for k, v in h.renames.items()}
    assert renames == {"items": "values", "s": "result"}
    assert [h.kinds for h in hunks if h.renames] == [["rename", "signature_change"], ["rename"]]
    assert {"docstring", "defensive", "logic", "comment_removed"} <= {k for h in hunks for k in h.kinds}
