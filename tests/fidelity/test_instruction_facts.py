"""The facts the judge weighs, gathered from real fidelity reports (whatever the units' granularity)."""

from __future__ import annotations

from server.fidelity import measure
from server.fidelity.judge.unit_facts import unit_facts

BASE = '''import math


def area(r):
    """Area of a circle."""
    if r:
        return math.pi * r * r
    return 0.0


def total(values):
    acc = 0
    for v in values:
        acc += v
    return acc
'''


def _facts(edited: str, kind: str):
    report = measure(BASE, edited)
    found = [f for h, f in zip(report.hunks, unit_facts(report, BASE, edited)) if kind in h.kinds]
    assert found, [h.kinds for h in report.hunks]
    return found


def test_an_import_the_changed_code_uses_and_one_nothing_uses():
    used = BASE.replace("import math\n", "import math\nimport statistics\n").replace(
        "    return acc\n", "    return statistics.fsum(values)\n"
    )
    [f] = _facts(used, "import_change")
    assert f.import_used and not f.import_unused
    unused = BASE.replace("import math\n", "import math\nimport os\n")
    [f] = _facts(unused, "import_change")
    assert not f.import_used and f.import_unused == {"os"}


def test_a_changed_condition_is_not_an_added_guard():
    flipped = BASE.replace("    if r:\n", "    if not r:\n")
    report = measure(BASE, flipped)
    facts = unit_facts(report, BASE, flipped)
    for h, f in zip(report.hunks, facts):
        if "defensive" in h.kinds:  # wherever the core puts the change, it keeps its statements
            assert f.same_statements


def test_a_guard_that_raises_and_its_function():
    guarded = BASE.replace(
        '    """Area of a circle."""\n',
        '    """Area of a circle."""\n    if r < 0:\n        raise ValueError("negative radius")\n',
    )
    [f] = _facts(guarded, "defensive")
    assert {"raise", "ValueError"} <= f.raises and f.function == "area"


def test_docstring_edit_and_removal():
    [edit] = _facts(BASE.replace("Area of a circle.", "The area of a circle of radius r."), "docstring")
    assert edit.docstring_kept and edit.function == "area"
    [removal] = _facts(BASE.replace('    """Area of a circle."""\n', ""), "docstring")
    assert not removal.docstring_kept


def test_a_pure_rename_is_not_rewritten_code():
    renamed = BASE.replace("acc", "running_sum")
    facts = _facts(renamed, "rename")
    assert all(not f.rename_rewritten for f in facts)


def test_a_rename_beside_a_fix_on_the_same_line_is_a_rename_of_its_own():
    # the fix (`+ 1` dropped) and the rename of the loop variable share a line but are two units
    original = "def f(n):\n    xs = [i * 2 for i in range(n + 1)]\n    return xs\n"
    edited = "def f(n):\n    xs = [j * 2 for j in range(n)]\n    return xs\n"
    report = measure(original, edited)
    [f] = [f for h, f in zip(report.hunks, unit_facts(report, original, edited)) if h.renames]
    assert f.renames == {"i": "j"} and not f.rename_rewritten
    # a variable repurposed (its value changes next to it) belongs to rewritten code
    original = "def g(xs):\n    count = {}\n    for x in xs:\n        count[x] = 1\n    return len(count)\n"
    edited = "def g(xs):\n    s = 0\n    for x in xs:\n        s ^= x\n    return s\n"
    report = measure(original, edited)
    assert all(f.rename_rewritten for h, f in zip(report.hunks, unit_facts(report, original, edited)) if h.renames)


def test_imported_names_are_the_names_imports_bind():
    original = (
        "from random import seed as random_seed\nfrom a.text import Vec\n\ndef f(seed, text):\n    return seed, text\n"
    )
    edited = original.replace(
        "def f(seed, text):\n    return seed, text", "def f(the_seed, text_value):\n    return the_seed, text_value"
    )
    report = measure(original, edited)
    facts = [f for h, f in zip(report.hunks, unit_facts(report, original, edited)) if h.renames]
    assert facts and all(not f.imported for f in facts)
    aliased = "import numpy as np\n\ndef f(x):\n    y = np.sum(x)\n    return np.abs(y)\n"
    plain = aliased.replace("np.", "numpy.").replace(" as np", "")
    report = measure(aliased, plain)
    assert [f.imported for h, f in zip(report.hunks, unit_facts(report, aliased, plain)) if h.renames] == [{"np"}]


def test_a_name_in_a_string_or_comment_does_not_use_an_import():
    edited = BASE.replace("import math\n", "import math\nimport string\n").replace(
        "    return acc\n", "    # a string of digits\n    return str(acc) + 'string'\n"
    )
    [f] = _facts(edited, "import_change")
    assert not f.import_used and f.import_unused == {"string"}
