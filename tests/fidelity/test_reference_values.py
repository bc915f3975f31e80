"""The published reference values of SPEC 3.1 and 3.2, computed from the shared 400-task set."""

from __future__ import annotations

import ast
import statistics

import pytest

from server.fidelity import distances, measure
from server.fidelity.text.analysis import analyze
from server.fidelity.text.complexity import paper_cognitive


@pytest.fixture(scope="module")
def gold_distances(overedit_tasks):
    return {t["task_id"]: distances(t["corrupted_solution"], t["canonical_solution"]) for t in overedit_tasks}


def test_the_set_has_400_tasks(overedit_tasks):
    assert len(overedit_tasks) == 400


def test_no_comments_distance_statistics(gold_distances):
    normalized = [d["no_comments"].normalized for d in gold_distances.values()]
    tokens = [d["no_comments"].tokens for d in gold_distances.values()]
    assert statistics.mean(normalized) == pytest.approx(0.0128, abs=0.0002)
    assert statistics.median(normalized) == pytest.approx(0.0111, abs=0.0001)
    assert max(normalized) == pytest.approx(0.0490, abs=0.0001)
    assert statistics.mean(tokens) == pytest.approx(1.63, abs=0.005)
    assert (min(tokens), max(tokens)) == (1, 5)


def test_other_variants(gold_distances):
    assert statistics.mean(d["body_no_comments"].normalized for d in gold_distances.values()) == pytest.approx(
        0.0172, abs=0.0002
    )
    assert statistics.mean(d["raw"].normalized for d in gold_distances.values()) == pytest.approx(0.0342, abs=0.0002)


@pytest.mark.parametrize(
    ("task", "tokens", "normalized"),
    [(0, 2, 0.01802), (1, 1, 0.01471), (5, 1, 0.00833), (6, 1, 0.01042), (7, 1, 0.00909)],
)
def test_single_tasks(gold_distances, task, tokens, normalized):
    d = gold_distances[f"BigCodeBench/{task}"]["no_comments"]
    assert d.tokens == tokens
    assert round(d.normalized, 5) == normalized


def test_distance_is_symmetric_and_excess_of_gold_is_zero(overedit_tasks):
    task = overedit_tasks[0]
    report = measure(task["corrupted_solution"], task["canonical_solution"], gold=task["canonical_solution"])
    assert report.excess == {"raw": 0.0, "no_comments": 0.0, "body_no_comments": 0.0}
    back = distances(task["canonical_solution"], task["corrupted_solution"])
    assert back == distances(task["corrupted_solution"], task["canonical_solution"])


def test_paper_cognitive_complexity_is_unchanged_by_every_corruption(overedit_tasks):
    changed = [
        t["task_id"]
        for t in overedit_tasks
        if analyze(t["canonical_solution"]).paper_cognitive != analyze(t["corrupted_solution"]).paper_cognitive
    ]
    assert changed == []
    # and the complexity is really computed: most solutions score above zero
    assert sum(analyze(t["canonical_solution"]).paper_cognitive > 0 for t in overedit_tasks) > 200


def test_paper_mode_does_not_visit_conditions():
    assert paper_cognitive(ast.parse("if a and b or c:\n    pass\n")) == 1
    # outside a condition the boolean operators count: 1 for `and`, 1 for `or` (two BoolOp nodes)
    assert paper_cognitive(ast.parse("x = a and b or c\n")) == 2
