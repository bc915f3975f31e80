"""Each corruption family on a constructed function: the corruption it makes and its inverse."""

from __future__ import annotations

import ast
import textwrap

import pytest

from benchmark.build.corruptions import (
    BY_NAME,
    FAMILIES,
    HELD_OUT,
    IN_DISTRIBUTION,
    Chooser,
    CorruptionError,
    corrupt,
    invert,
    select,
    signatures,
)

# family -> (function, target before, the corrupted target's possible texts)
CASES: dict[str, tuple[str, str, set[str]]] = {
    "mutate_comparison_operators": ("def f(a, b):\n    return a < b\n", "a < b", {"a <= b"}),
    "mutate_range_bounds": ("def f(n):\n    return list(range(n))\n", "range(n)", {"range(n - 1)", "range(n + 1)"}),
    "mutate_sort_order": ("def f(xs):\n    return sorted(xs)\n", "sorted(xs)", {"sorted(xs, reverse=True)"}),
    "mutate_accumulator_init": (
        "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n",
        "total = 0",
        {"total = 1"},
    ),
    "mutate_arithmetic_operators": ("def f(a, b):\n    return a * b\n", "a * b", {"a // b"}),
    "mutate_edge_case_guards": (
        "def f(xs):\n    if not xs:\n        return None\n    return xs[-1]\n",
        "not xs",
        {"xs"},
    ),
    "mutate_list_indexing": ("def f(xs):\n    return xs[0]\n", "xs[0]", {"xs[1]"}),
    "mutate_function_call_name": ("def f(xs):\n    return max(xs)\n", "max(xs)", {"min(xs)"}),
    "mutate_remove_copy_calls": (
        "def f(xs):\n    ys = xs.copy()\n    ys.clear()\n    return xs\n",
        "xs.copy()",
        {"xs"},
    ),
    "mutate_boolean_constants": ("def f(x):\n    return x is True\n", "True", {"False"}),
    "mutate_numeric_constants": ("def f(x):\n    return x * 7\n", "7", {"6", "8"}),
    "mutate_slice_bounds": ("def f(xs):\n    return xs[2:]\n", "xs[2:]", {"xs[1:]", "xs[3:]"}),
    "mutate_conditional_inversion": ("def f(a, b):\n    return a and b\n", "a and b", {"not a and b", "a and (not b)"}),
    "mutate_range_step": ("def f(n):\n    return list(range(n))\n", "range(n)", {"range(0, n, 2)"}),
    "mutate_min_max": ("def f(xs):\n    return min(xs)\n", "min(xs)", {"max(xs)"}),
    "mutate_abs_removal": ("def f(x):\n    return abs(x)\n", "abs(x)", {"x"}),
    "mutate_append_extend": ("def f(xs, y):\n    xs.append(y)\n    return xs\n", "xs.append(y)", {"xs.extend(y)"}),
    "mutate_enumerate_start": ("def f(xs):\n    return list(enumerate(xs))\n", "enumerate(xs)", {"enumerate(xs, 1)"}),
    "mutate_break_continue": (
        "def f(xs):\n    for x in xs:\n        if x:\n            break\n    return x\n",
        "break",
        {"continue"},
    ),
    "mutate_dict_get_default": ("def f(d):\n    return d.get('k', 0)\n", "d.get('k', 0)", {"d.get('k')"}),
    "mutate_lower_upper": ("def f(s):\n    return s.lower()\n", "s.lower()", {"s.upper()"}),
    "mutate_strip_variants": ("def f(s):\n    return s.strip()\n", "s.strip()", {"s.lstrip()", "s.rstrip()"}),
    "mutate_join_separator": ("def f(xs):\n    return ', '.join(xs)\n", "', '.join(xs)", {"''.join(xs)"}),
    "mutate_sorted_key_len": ("def f(xs):\n    return sorted(xs)\n", "sorted(xs)", {"sorted(xs, key=len)"}),
    "mutate_set_list_cast": ("def f(xs):\n    return set(xs)\n", "set(xs)", {"list(xs)"}),
    "mutate_round_int": ("def f(x):\n    return round(x)\n", "round(x)", {"int(x)"}),
    "mutate_comprehension_filter": (
        "def f(xs):\n    return [x for x in xs if x > 0]\n",
        "[x for x in xs if x > 0]",
        {"[x for x in xs]"},
    ),
    "mutate_find_index": ("def f(s):\n    return s.find('a')\n", "s.find('a')", {"s.index('a')"}),
    "mutate_any_all": ("def f(xs):\n    return any(xs)\n", "any(xs)", {"all(xs)"}),
    "mutate_zip_order": ("def f(a, b):\n    return list(zip(a, b))\n", "zip(a, b)", {"zip(b, a)"}),
    "mutate_range_len_endpoint": (
        "def f(xs):\n    return [xs[i] for i in range(len(xs))]\n",
        "range(len(xs))",
        {"range(len(xs) - 1)"},
    ),
    "mutate_negative_index": ("def f(xs):\n    return xs[-1]\n", "xs[-1]", {"xs[-2]"}),
    "mutate_dict_views": ("def f(d):\n    return list(d.keys())\n", "d.keys()", {"d.values()"}),
    "mutate_none_comparison": ("def f(x):\n    return x == None\n", "x == None", {"x is None"}),
}


def test_the_spec_families_are_all_there():
    assert len(IN_DISTRIBUTION) == 14 and len(HELD_OUT) == 20
    assert set(CASES) == {f.name for f in FAMILIES}
    assert len({f.name for f in FAMILIES}) == 34


@pytest.mark.parametrize("name", sorted(CASES))
def test_family_corrupts_and_inverts(name: str):
    source, before, afters = CASES[name]
    for seed in range(4):  # several draws: every outcome of a coin is one of the expected texts
        made = corrupt(source, [BY_NAME[name]], max_corruptions=1, chooser=Chooser(seed, name))
        assert len(made.corruptions) == 1
        c = made.corruptions[0]
        assert (c.family, c.before) == (name, before)
        assert c.after in afters, f"{name}: {c.after!r}"
        assert made.source != ast.unparse(ast.parse(source))
        assert signatures(ast.parse(made.source)) == signatures(ast.parse(source))
        assert invert(made.source, made.corruptions) == ast.unparse(ast.parse(source))


def test_two_corruptions_are_undone_in_reverse_order():
    source = textwrap.dedent("""
        def f(xs, n):
            total = 0
            for i in range(n):
                if xs[i] > 3:
                    total += xs[i] * 2
            return total
    """)
    made = corrupt(source, IN_DISTRIBUTION, max_corruptions=2, chooser=Chooser(5, "pair"))
    seen = {
        len(corrupt(source, IN_DISTRIBUTION, max_corruptions=2, chooser=Chooser(s, "pair")).corruptions)
        for s in range(12)
    }
    assert seen == {1, 2}  # 1..N corruptions
    assert invert(made.source, made.corruptions) == ast.unparse(ast.parse(source))


def test_a_default_argument_is_never_corrupted():
    source = "def f(x, scale=3):\n    return x * scale\n"
    for seed in range(10):
        made = corrupt(
            source,
            select("mutate_numeric_constants,arithmetic_operators"),
            max_corruptions=2,
            chooser=Chooser(seed, "sig"),
        )
        assert "scale=3" in made.source
        assert [c.family for c in made.corruptions] == ["mutate_arithmetic_operators"]


def test_a_corruption_that_changes_a_nested_signature_is_rejected():
    source = "def f(xs):\n    def g(x, k=5):\n        return x\n    return [g(x) for x in xs]\n"
    with pytest.raises(CorruptionError, match="rejected: mutate_numeric_constants: changes a function signature"):
        corrupt(source, [BY_NAME["mutate_numeric_constants"]], max_corruptions=1, chooser=Chooser(0, "k"))


def test_a_family_that_does_not_apply_is_named():
    with pytest.raises(CorruptionError, match="no target for: mutate_abs_removal"):
        corrupt("def f(x):\n    return x\n", select("abs_removal"), max_corruptions=1, chooser=Chooser(0, "x"))


def test_bad_programs_are_refused_with_the_reason():
    with pytest.raises(CorruptionError, match="does not parse"):
        corrupt("def f(:\n", FAMILIES, max_corruptions=1, chooser=Chooser(0, "x"))
    with pytest.raises(CorruptionError, match="no function definition"):
        corrupt("x = 1 + 2\n", FAMILIES, max_corruptions=1, chooser=Chooser(0, "x"))
    with pytest.raises(ValueError, match="unknown corruption family 'nope'"):
        select("nope")


def test_choices_depend_on_seed_and_key_only():
    draws = [Chooser(7, "BigCodeBench/3").below(1000) for _ in range(3)]
    assert len(set(draws)) == 1
    ch = Chooser(7, "BigCodeBench/3")
    seq = [ch.below(1000) for _ in range(20)]
    assert len(set(seq)) > 10
    assert sorted(Chooser(1, "k").shuffled(range(10))) == list(range(10))


def test_any_function_reaches_past_an_empty_first_method():
    source = textwrap.dedent("""
        class Box:
            def __init__(self, items):
                self.items = items

            def heaviest(self):
                return max(self.items)
    """)
    with pytest.raises(CorruptionError, match="to the first function"):
        corrupt(source, FAMILIES, max_corruptions=1, chooser=Chooser(0, "box"))
    made = corrupt(source, FAMILIES, max_corruptions=1, chooser=Chooser(0, "box"), functions="all")
    (c,) = made.corruptions
    assert (c.function, c.before, c.after) == (1, "max(self.items)", "min(self.items)")
    assert invert(made.source, made.corruptions) == ast.unparse(ast.parse(source))
