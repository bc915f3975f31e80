"""Necessity analysis in the core: ddmin over the hunks of constructed edits whose needed hunks are known.

The check executes the sub-edit's code with its tests (the constructed snippets are ours), so what
is "needed" comes from running code, not from a table of answers.
"""

from __future__ import annotations

import asyncio

import pytest

from server.fidelity import distances, measure
from server.fidelity.judge.ddmin import (
    edits_by_unit,
    find_needed_units,
    find_needed_units_sync,
    reference_free_excess,
    sub_edit,
)

# One bug (`<` for `>`) among five hunks; the other four: a comment, a rename in another function, a
# defensive check the tests never reach, a reformatted expression.
ONE_NEEDED_BEFORE = """LIMIT = 10


def above(values, limit):
    return [v for v in values if v < limit]


def helper(x):
    return x + 1


def ratio(a, b):
    return a / b


def double(y):
    return y * 2


def unused():
    return 0
"""
ONE_NEEDED_AFTER = """LIMIT = 10  # the default


def above(values, limit):
    return [v for v in values if v > limit]


def helper(number):
    return number + 1


def ratio(a, b):
    if b is None:
        raise ValueError("b must not be None")
    return a / b


def double(y):
    return y*2


def unused():
    return 0
"""
ONE_NEEDED_TESTS = """
assert above([1, 5, 20], 4) == [5, 20]
assert helper(1) == 2
assert ratio(6, 3) == 2
assert double(4) == 8
"""

# Two hunks needed only together: a new parameter and the call that passes it (each alone raises
# TypeError); three more hunks nobody needs.
TOGETHER_BEFORE = """def scale(x):
    return x


def total(xs):
    # sum of the scaled values
    return sum(scale(v) for v in xs)


def name():
    return "total"


def version():
    return 1
"""
TOGETHER_AFTER = """def scale(x, k):
    return x * k


def total(xs):
    # sum of the values, each scaled by two
    return sum(scale(v, 2) for v in xs)


def name():
    return 'total'


def version():
    return 1  # first release
"""
TOGETHER_TESTS = """
assert total([1, 2]) == 6
assert name() == "total"
"""

# Every hunk needed: three constants, each checked by its own assertion.
ALL_BEFORE = """def a():
    return 1


def b():
    return 2


def c():
    return 3
"""
ALL_AFTER = (
    ALL_BEFORE.replace("return 1", "return 10").replace("return 2", "return 20").replace("return 3", "return 30")
)
ALL_TESTS = "assert a() == 10\nassert b() == 20\nassert c() == 30\n"


def passes(program: str) -> bool:
    try:
        exec(compile(program, "<candidate>", "exec"), {})  # noqa: S102 - our own constructed snippets
    except Exception:  # noqa: BLE001 - any failure is a failing test run
        return False
    return True


def checker(before: str, after: str, tests: str):
    edits = edits_by_unit(before, after)
    calls: list[frozenset[int]] = []

    def check(keep: frozenset[int]) -> bool:
        calls.append(keep)
        return passes(sub_edit(before, edits, keep) + "\n" + tests)

    return edits, check, calls


def test_hunk_edits_are_the_reports_edits():
    for before, after in (
        (ONE_NEEDED_BEFORE, ONE_NEEDED_AFTER),
        (TOGETHER_BEFORE, TOGETHER_AFTER),
        (ALL_BEFORE, ALL_AFTER),
    ):
        units = edits_by_unit(before, after)
        assert units == [h.edits for h in measure(before, after).hunks]
        assert sub_edit(before, units, range(len(units))) == after
        assert sub_edit(before, measure(before, after).edits, range(len(measure(before, after).edits))) == after


@pytest.mark.parametrize("parallel", [1, 3])
def test_one_needed_hunk_among_five(parallel):
    edits, check, calls = checker(ONE_NEEDED_BEFORE, ONE_NEEDED_AFTER, ONE_NEEDED_TESTS)
    assert len(edits) == 5  # the rename is one unit over its two occurrences
    res = find_needed_units_sync(len(edits), check, parallel=parallel)
    assert res.status == "minimal" and res.one_minimal
    assert res.needed == [1]  # the comparison flip, the second unit
    assert res.unnecessary == [0, 2, 3, 4]
    assert res.runs == len(calls) == len(res.probes) == len(set(calls))  # each subset runs once
    assert res.runs <= res.max_runs


def test_two_hunks_needed_only_together():
    edits, check, calls = checker(TOGETHER_BEFORE, TOGETHER_AFTER, TOGETHER_TESTS)
    # units: `, k` / ` * k` / the comment / `, 2` / the quotes / the added comment
    assert len(edits) == 6
    assert not check(frozenset({0, 1})) and not check(frozenset({3})) and check(frozenset({0, 1, 3}))
    calls.clear()
    res = find_needed_units_sync(len(edits), check)
    assert (res.status, res.needed, res.unnecessary) == ("minimal", [0, 1, 3], [2, 4, 5])
    assert res.runs == len(set(calls))


def test_every_hunk_needed():
    edits, check, _ = checker(ALL_BEFORE, ALL_AFTER, ALL_TESTS)
    res = find_needed_units_sync(len(edits), check)
    assert (res.status, res.needed, res.unnecessary) == ("minimal", [0, 1, 2], [])
    # 1-minimal is proved by the runs: each hunk left out on its own failed
    failed = {frozenset(p.hunks) for p in res.probes if p.passed is False}
    assert all(frozenset({0, 1, 2} - {i}) in failed for i in range(3))


def test_whole_edit_failing_and_original_passing():
    edits, check, _ = checker(ALL_BEFORE, ALL_AFTER, "assert a() == 11\n")
    res = find_needed_units_sync(len(edits), check)
    assert (res.status, res.needed, res.unnecessary, res.one_minimal) == ("full_fails", [0, 1, 2], [], False)
    edits, check, _ = checker(ALL_BEFORE, ALL_AFTER, "assert b() in (2, 20)\n")
    res = find_needed_units_sync(len(edits), check, parallel=2)
    assert (res.status, res.needed, res.unnecessary) == ("minimal", [], [0, 1, 2])
    assert res.runs == 2  # the whole edit and the original, side by side
    assert find_needed_units_sync(0, check).status == "no_hunks"


def test_unresolved_checks():
    res = find_needed_units_sync(3, lambda keep: None)
    assert (res.status, res.unresolved, res.unnecessary) == ("unresolved", res.runs, [])
    # a subset whose check cannot run counts as not passing, and then minimality is not proved
    _, check, _ = checker(ALL_BEFORE, ALL_AFTER, ALL_TESTS)
    res = find_needed_units_sync(3, lambda keep: None if keep == frozenset({0, 1}) else check(keep))
    assert res.status == "minimal" and res.needed == [0, 1, 2] and not res.one_minimal and res.unresolved == 1


def test_run_budget_bounds_the_search():
    edits, check, calls = checker(ONE_NEEDED_BEFORE, ONE_NEEDED_AFTER, ONE_NEEDED_TESTS)
    full = find_needed_units_sync(len(edits), check)
    for budget in range(1, full.runs):
        calls.clear()
        res = find_needed_units_sync(len(edits), check, max_runs=budget)
        assert res.status == "budget" and not res.one_minimal
        assert res.runs == len(calls) <= budget
        # what it has is still a passing subset, and the hunks left out are unnecessary together
        assert check(frozenset(res.needed))
        assert set(res.needed) >= {1}
    with pytest.raises(ValueError, match="max_runs"):
        find_needed_units_sync(3, check, max_runs=0)


def test_known_results_seed_the_cache():
    _, check, calls = checker(ALL_BEFORE, ALL_AFTER, ALL_TESTS)
    res = find_needed_units_sync(3, check, known={frozenset({0, 1, 2}): True, frozenset(): False})
    assert res.needed == [0, 1, 2]
    assert frozenset({0, 1, 2}) not in calls and frozenset() not in calls
    assert res.cache_hits >= 2


def test_parallel_async_probes_give_the_sequential_answer():
    edits, check, _ = checker(ONE_NEEDED_BEFORE, ONE_NEEDED_AFTER, ONE_NEEDED_TESTS)
    sequential = find_needed_units_sync(len(edits), check)
    running = 0
    peak = 0

    async def slow_check(keep: frozenset[int]) -> bool:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        # later subsets answer first: the order of answers must not change the result
        await asyncio.sleep(0.01 * (5 - len(keep)) + 0.001)
        running -= 1
        return check(keep)

    res = asyncio.run(find_needed_units(len(edits), slow_check, parallel=4))
    assert res.needed == sequential.needed == [1]
    assert peak > 1  # probes really overlapped
    assert res.runs <= res.max_runs


def test_cancelling_stops_the_runs():
    started: list[frozenset[int]] = []
    cancelled: list[frozenset[int]] = []

    async def hanging_check(keep: frozenset[int]) -> bool:
        started.append(keep)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(keep)
            raise
        return True

    async def scenario() -> None:
        task = asyncio.create_task(find_needed_units(6, hanging_check, parallel=2))
        while len(started) < 2:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert sorted(map(len, started)) == [0, 6]  # the whole edit and the original, then nothing more
    assert sorted(map(len, cancelled)) == [0, 6]


def test_reference_free_excess_from_the_minimal_sub_edit():
    edits, check, _ = checker(ONE_NEEDED_BEFORE, ONE_NEEDED_AFTER, ONE_NEEDED_TESTS)
    res = find_needed_units_sync(len(edits), check)
    minimal = sub_edit(ONE_NEEDED_BEFORE, edits, res.needed)
    assert minimal == ONE_NEEDED_BEFORE.replace("if v < limit", "if v > limit")
    est = reference_free_excess(ONE_NEEDED_BEFORE, ONE_NEEDED_AFTER, minimal)
    full = distances(ONE_NEEDED_BEFORE, ONE_NEEDED_AFTER)
    assert est.distance == full
    assert est.d_min["raw"].tokens == 1  # one token flipped
    for v in full:
        assert est.excess[v] == pytest.approx(full[v].normalized - est.d_min[v].normalized)
    assert est.excess["raw"] > 0
    # with the gold patch as the minimal edit, the estimate is the gold-based excess of measure()
    gold = measure(ONE_NEEDED_BEFORE, ONE_NEEDED_AFTER, gold=minimal)
    assert est.excess == pytest.approx(gold.excess)


def test_a_sub_edit_farther_than_the_edit_itself_gives_no_negative_excess():
    # the "minimal" text leaves a statement as `pass`: more tokens changed than the whole edit made
    before = "def f(x):\n    y = x + 1\n    return y\n"
    edited = "def f(x):\n    y = x + 2\n    return y\n"
    padded = "def f(x):\n    pass\n    return x + 2\n"
    est = reference_free_excess(before, edited, padded)
    assert distances(before, padded)["raw"].normalized > distances(before, edited)["raw"].normalized
    for v in est.excess:
        assert est.excess[v] == 0.0
        assert est.d_min[v] == est.distance[v]
