"""The necessity validity study: constructed over-edits of a task in the over-editing format, run in the
real sandbox; and the command on the shared data (a few CanItEdit problems and one BigCodeBench task)."""

from __future__ import annotations

import ast
import asyncio
import json
import statistics
from pathlib import Path

import pytest

from benchmark.run.reference_free import reference_free_metrics
from benchmark.run.testrun import run_tests
from benchmark.studies.necessity import study as ns
from benchmark.studies.necessity.figures import DECOMPOSITION_TERMS, pooled_excess
from sandbox import Sandbox, envs
from server.errors import UserError
from server.fidelity import distances
from server.fidelity.judge.ddmin import edits_by_unit, sub_edit

CANONICAL = '''import math


def task_func(values, limit=10):
    """Sum of the values above the limit, their count and mean, and how many values there were."""
    total = 0
    count = 0
    # only the large ones count
    for v in values:
        if v > limit:
            total += v
            count += 1
    mean = total / count if count else 0.0
    scaled = [math.floor(v) for v in values]
    checked = len(scaled)
    return (total, count, round(mean, 2), checked)
'''
CORRUPTED = ast.unparse(ast.parse(CANONICAL.replace("if v > limit", "if v >= limit")))
TESTS = """import unittest


class TestCases(unittest.TestCase):
    def test_above(self):
        self.assertEqual(task_func([1, 10, 20]), (20, 1, 20.0, 3))

    def test_empty(self):
        self.assertEqual(task_func([]), (0, 0, 0.0, 0))
"""


@pytest.fixture(scope="module")
def box():
    sandbox = Sandbox(workers=2)
    yield sandbox
    sandbox.close()


def passes_with(box: Sandbox, tests: str):
    async def passes(text: str) -> bool | None:
        run = await run_tests(box, text, tests, kind="unittest", env=None, timeout_s=30)
        return None if run.sandbox_error else run.passed

    return passes


def test_extras_keep_behaviour_and_add_hunks():
    gold = ns.gold_text(CANONICAL)
    assert len(edits_by_unit(CORRUPTED, gold)) == 1  # the corruption's inverse only: same form as C
    for kind in ns.EXTRAS:
        text = ns.with_extras(gold, [kind])
        assert text is not None and text != gold, kind
        assert len(edits_by_unit(gold, text)) >= 1
    everything = ns.with_extras(gold, list(ns.EXTRAS))
    assert "import typing" in everything and "values is NotImplemented" in everything
    assert "total_value" in everything and "return result_value" in everything
    namespace: dict = {}
    exec(compile(everything, "<candidate>", "exec"), namespace)  # noqa: S102 - our own constructed code
    assert namespace["task_func"]([1, 10, 20]) == (20, 1, 20.0, 3)
    # an extra that does not apply says so
    assert ns.with_extras("x = 1\n", ["defensive_guard"]) is None


def test_separate_extras_give_the_gold_excess_exactly(box):
    """The fix and three extras in units of their own (the temporary is two: `return` becomes the
    assignment, and the new `return` line): ddmin keeps exactly the fix, so the reference-free excess
    is the gold-based one."""
    gold = ns.gold_text(CANONICAL)
    candidate = ns.with_extras(gold, ["unused_import", "defensive_guard", "return_temp"])
    assert len(edits_by_unit(CORRUPTED, candidate)) == 5
    item = ns.StudyItem(source="overedit", task_id="constructed", condition="three extras")
    item = asyncio.run(ns.analyse(item, CORRUPTED, candidate, gold, passes_with(box, TESTS), max_runs=32, parallel=2))
    assert item.status == "minimal" and item.needed == [2] and item.unnecessary == [0, 1, 3, 4], item.error
    assert item.d_min == pytest.approx(distances(CORRUPTED, gold)["no_comments"].normalized)
    assert item.excess_ref_free == pytest.approx(item.excess_gold) and item.excess_gold > 0
    assert 0 < item.runs <= 32


def test_an_extra_statement_beside_the_fix_counts_with_statement_granularity():
    """A model rewrites the line with the bug and adds a statement there: one change unit, which the tests
    need, so over units the reference-free excess misses the extra; the statement stage (the needed unit's
    new statements, ddmin again) drops it. The check is a predicate here (`reference_free_metrics` takes
    any): the tests need the fixed expression."""
    before = "def f(x):\n    return x + 1\n"
    completion = "def f(x):\n    doubled = x * 2\n    return x + 2\n"
    assert len(edits_by_unit(before, completion)) == 1

    async def passes(text: str) -> bool:
        return "return x + 2" in text

    units = asyncio.run(reference_free_metrics(before, completion, passes))
    both = asyncio.run(reference_free_metrics(before, completion, passes, statements=True))
    assert units["needed_hunks"] == [0] and units["excess_ref_free"] == pytest.approx(0.0)
    assert both["parts"] == 2 and both["needed_parts"] == [1]  # `doubled = x * 2` is not needed
    fixed_only = "def f(x):\n    pass\n    return x + 2\n"
    expected = (
        distances(before, completion)["no_comments"].normalized
        - distances(before, fixed_only)["no_comments"].normalized
    )
    assert both["excess_ref_free"] == pytest.approx(expected) and expected > 0


def test_study_on_a_task_file(box, tmp_path):
    """`overedit_items` reads the over-editing format. With every extra at once, the renamed local is
    used on the line after the fix; line hunks coupled that use to the fix, so the tests needed the
    rename. As change units the rename is one unit over all its occurrences: ddmin reverts it whole,
    keeps only the fix, and the reference-free excess equals the gold-based one."""
    (tmp_path / "overedit").mkdir()
    row = {
        "task_id": "Constructed/0",
        "canonical_solution": CANONICAL,
        "corrupted_solution": CORRUPTED,
        "test_code": TESTS,
        "mutation_type": "comparison_flip",
    }
    (tmp_path / ns.OVEREDIT_FILE).write_text(json.dumps(row) + "\n")
    [item] = asyncio.run(
        ns.overedit_items(
            box, tmp_path, tasks=1, per_task=1, env=None, timeout_s=30, max_runs=32, parallel=2, seed=0, concurrency=1
        )
    )
    assert item.condition == "+".join(ns.EXTRAS) and item.status == "minimal", item.error
    edits = edits_by_unit(CORRUPTED, ns.with_extras(ns.gold_text(CANONICAL), list(ns.EXTRAS)))
    assert item.hunks == len(edits) == 6 and item.needed == [3] and item.unnecessary == [0, 1, 2, 4, 5]
    assert "import typing" in edits[0][0].new_text
    assert [e.new_text for e in edits[2]] == ["total_value"] * 4  # the rename: one unit, every occurrence
    kept = sub_edit(CORRUPTED, edits, [3])
    assert "if v > limit:" in kept and "total_value" not in kept
    assert item.excess_ref_free == pytest.approx(item.excess_gold) and item.excess_gold > 0
    assert item.excess_ref_free == pytest.approx(item.distance - item.d_min)


def test_correlation_figures():
    xs, ys = [0.0, 0.1, 0.1, 0.3, 0.5], [0.0, 0.2, 0.1, 0.4, 0.4]
    assert ns.pearson(xs, ys) == pytest.approx(statistics.correlation(xs, ys))
    # Spearman: Pearson over mean ranks (ties share them)
    assert ns._ranks(xs) == [1.0, 2.5, 2.5, 4.0, 5.0]
    assert ns.spearman(xs, ys) == pytest.approx(statistics.correlation([1, 2.5, 2.5, 4, 5], [1, 3, 2, 4.5, 4.5]))
    assert ns.pearson([1.0, 1.0, 1.0], [0.0, 1.0, 2.0]) is None and ns.pearson([1.0, 2.0], [1.0, 2.0]) is None
    items = [
        ns.StudyItem(
            source="s", task_id=str(i), condition="c", status="minimal", runs=3, excess_gold=g, excess_ref_free=r
        )
        for i, (g, r) in enumerate(zip(xs, ys, strict=True))
    ]
    items.append(ns.StudyItem(source="s", task_id="x", condition="c", status="full_fails", runs=1, error="fails"))
    row = ns.summarise(items)["s"]
    assert (row["candidates"], row["analysed"], row["budget_hit"], row["max_runs"]) == (6, 5, 0, 3)
    assert row["mae"] == pytest.approx(statistics.fmean(abs(a - b) for a, b in zip(xs, ys, strict=True)))
    assert row["statuses"] == {"minimal": 5, "full_fails": 1}
    assert (row["ref_free_below_gold"], row["ref_free_above_gold"], row["exact"]) == (1, 2, 0.4)


def _analysed(source: str, task: str, distance: float, d_min: float | None, excess_gold: float) -> ns.StudyItem:
    """A study item as an analysis leaves it (no D_min: the full edit failed)."""
    return ns.StudyItem(
        source=source,
        task_id=task,
        condition=source,
        status="minimal" if d_min is not None else "full_fails",
        distance=distance,
        d_min=d_min,
        excess_gold=excess_gold,
        excess_ref_free=None if d_min is None else distance - d_min,
    )


def test_the_pooled_estimate_measures_against_the_problem_smallest_minimal_edit():
    items = [
        _analysed("canitedit", "a", 0.30, 0.30, 0.10),  # all needed, but another completion fixes it with less
        _analysed("canitedit", "a", 0.12, 0.10, -0.08),
        _analysed("canitedit", "a", 0.50, None, 0.30),  # not analysed: no estimate, and not a floor
        _analysed("canitedit", "b", 0.05, 0.04, 0.01),
        _analysed("overedit", "a", 0.02, 0.01, 0.0),  # another source is another population
    ]
    pooled = pooled_excess(items)
    assert pooled == pytest.approx({0: 0.20, 1: 0.02, 3: 0.01, 4: 0.01})
    row = ns.summarise(items)["canitedit"]["pooled"]
    assert (row["n"], row["problems"], row["single"]) == (3, 2, 1)
    assert row["spearman"] == pytest.approx(ns.spearman([0.20, 0.02, 0.01], [0.10, -0.08, 0.01]))
    # the own estimate calls the first completion minimal; the pooled one sees its excess
    assert items[0].excess_ref_free == 0.0 < pooled[0]


def test_the_gold_edits_own_minimal_sub_edit_is_reported():
    items = [
        _analysed("gold", "a", 0.30, 0.20, 0.0),  # a third of the gold patch is not needed by the tests
        _analysed("gold", "b", 0.10, 0.10, 0.0),
        _analysed("canitedit", "a", 0.15, 0.15, -0.15),  # smaller than even the gold's minimal sub-edit
        _analysed("canitedit", "a", 0.25, 0.20, -0.05),
        _analysed("canitedit", "b", 0.05, 0.05, -0.05),
        _analysed("canitedit", "c", 0.05, 0.05, 0.0),  # no gold analysed for c: not counted
    ]
    summary = ns.summarise(items)
    assert summary["gold"]["untested"] == 1
    assert (summary["canitedit"]["below_gold_minimum"], summary["canitedit"]["with_gold_minimum"]) == (2, 3)
    text = ns.render_text(summary, {"max_runs": 32})
    assert "1 of 2 gold edits hold changes the tests do not need" in text
    assert "2 of 3 completions change less than the gold edit's own minimal sub-edit" in text


def test_the_gold_based_excess_is_split_into_its_three_terms():
    def item(source: str, task: str, distance: float, d_min: float, gold_distance: float) -> ns.StudyItem:
        return _analysed(source, task, distance, d_min, distance - gold_distance)

    golds = [item("gold", "a", 0.30, 0.20, 0.30), item("gold", "b", 0.10, 0.10, 0.10)]
    comps = [
        item("canitedit", "a", 0.15, 0.15, 0.30),  # another, smaller solution than the gold's needed part
        item("canitedit", "a", 0.40, 0.25, 0.30),
        item("canitedit", "b", 0.32, 0.32, 0.10),  # all needed, but three times the gold
        item("canitedit", "b", 0.12, 0.10, 0.10),
    ]
    row = ns.summarise(golds + comps)["canitedit"]["decomposition"]
    excess = [i.excess_gold for i in comps]
    own, needed, untested = [0.0, 0.15, 0.0, 0.02], [-0.05, 0.05, 0.22, 0.0], [-0.10, -0.10, 0.0, 0.0]
    for c, a, b, u in zip(comps, own, needed, untested, strict=True):  # the terms add up to the gold-based excess
        assert a + b + u == pytest.approx(c.excess_gold)
    assert row["n"] == 4
    for name, term in zip(DECOMPOSITION_TERMS, (own, needed, untested), strict=True):
        assert row["terms"][name]["spearman"] == pytest.approx(ns.spearman(term, excess))
        assert row["terms"][name]["variance_share"] == pytest.approx(
            statistics.pvariance(term) / statistics.pvariance(excess)
        )
    assert row["knowing_gold_minimum"] == pytest.approx(ns.spearman([-0.05, 0.20, 0.22, 0.02], excess))
    # the smallest passing sub-edit of a: the first completion's 0.15, below the gold's 0.20
    assert row["smallest_known_floor"] == pytest.approx(ns.spearman([0.0, 0.25, 0.22, 0.02], excess))
    text = ns.render_text(ns.summarise(golds + comps), {"max_runs": 32})
    assert "necessary difference spearman" in text and "the gold's D_min as the floor" in text
    # without the gold edits analysed there is nothing to split
    assert "decomposition" not in ns.summarise(comps)["canitedit"]


def test_a_runs_folder_without_runs_is_one_line(shared_data: Path):
    argv = ["--data", str(shared_data), "--runs", "no_such_folder", "--canitedit-tasks", "1", "--overedit-tasks", "0"]
    with pytest.raises(SystemExit, match=r"no recorded CanItEdit runs .*no_such_folder: name a folder .* --runs"):
        ns.main(argv)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, r"--items: cannot read .*: No such file"),
        (b"not json\n", r"--items: .* line 1 is not a study item \(JSON is malformed"),
        (b'{"source": "canitedit"}\n', r"--items: .* line 1 is not a study item \(Object missing required field"),
        (b"\n", r"--items: .* holds no study items: give the items.jsonl a study wrote with --out"),
    ],
)
def test_unreadable_items_are_one_line(tmp_path, content, says):
    path = tmp_path / "items.jsonl"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(UserError, match=says):
        ns.main(["--items", str(path)])


def test_gold_without_problems_is_one_line(shared_data: Path):
    with pytest.raises(UserError, match="--gold analyses .* give --canitedit-tasks 1 or more"):
        ns.main(["--data", str(shared_data), "--gold", "--canitedit-tasks", "0", "--overedit-tasks", "0"])


def test_a_study_of_nothing_is_one_line(shared_data: Path, tmp_path):
    with pytest.raises(UserError, match="nothing to study: give --canitedit-tasks N or --overedit-tasks N"):
        ns.main(["--data", str(shared_data), "--canitedit-tasks", "0", "--overedit-tasks", "0", "--out", str(tmp_path)])
    assert list(tmp_path.iterdir()) == []  # no empty figures written


@pytest.mark.skipif(not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox")
def test_command_on_the_shared_data(shared_data: Path, tmp_path, capsys):
    argv = [
        "--data",
        str(shared_data),
        "--canitedit-tasks",
        "3",
        "--overedit-tasks",
        "0",
        "--gold",
        "--out",
        str(tmp_path),
    ]
    with_overedit = "overedit" in envs.SUITES and envs.is_prepared("overedit")
    if with_overedit:
        argv += ["--overedit-ids", "BigCodeBench/1", "--per-task", "1"]
    assert ns.main(argv) == 0
    printed = capsys.readouterr().out
    assert "pearson" in printed and "canitedit" in printed
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    cie = [i for i in items if i["source"] == "canitedit"]
    golds = [i for i in items if i["source"] == "gold"]
    assert len(golds) == 3 and all(i["status"] == "minimal" and i["excess_gold"] == 0.0 for i in golds)
    assert len(cie) >= 6 and all(i["status"] == "minimal" for i in cie)
    assert all(i["excess_code"] is not None for i in cie)
    for i in cie:
        assert i["excess_ref_free"] == pytest.approx(i["distance"] - i["d_min"])
        assert i["excess_gold"] == pytest.approx(i["distance"] - i["gold_distance"])
        assert i["runs"] <= 32
    summary = json.loads((tmp_path / "summary.json").read_text())["sources"]
    assert summary["canitedit"]["analysed"] == len(cie) and summary["canitedit"]["excess_code_n"] == len(cie)
    report = (tmp_path / "report.html").read_text()
    # a scatter without information (all points in one place) is left out with a line saying why
    # per source: own and pooled estimate against the gold-based excess; CanItEdit also against ExcessCode
    assert report.count("<svg") + report.count('class="left-out"') == 3 + 2 + (2 if with_overedit else 0)
    assert summary["canitedit"]["with_gold_minimum"] == len(cie) and "gold edits hold" in printed
    assert "pooled" in printed and summary["canitedit"]["pooled"]["n"] == len(cie)
    if with_overedit:
        [bcb] = [i for i in items if i["source"] == "overedit"]
        assert bcb["status"] == "minimal" and bcb["needed"], bcb
