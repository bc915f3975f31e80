"""CodeEditorBench's C++/Java fidelity numbers through the core's language layer (issue 18): token
distance, excess over the gold edit and complexity deltas, on the shared sample and by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from rapidfuzz.distance import Levenshtein

import server.fidelity.lang as L
from benchmark.run.lang_fidelity import lang_fidelity
from benchmark.run.records import RunConfig, SampleRecord
from benchmark.suites import codeeditorbench as ceb

CPP = """#include <vector>
int count(const std::vector<int>& v) {
  int n = 0;
  for (int x : v) n += x;
  return n;
}
"""
GOLD = CPP.replace("n += x;", "n += 1;")
OVER = CPP.replace("for (int x : v) n += x;", "for (int x : v) {\n    if (x != 0) n += 1;\n  }")


def test_cpp_answer_numbers_by_hand() -> None:
    f = lang_fidelity("cpp", CPP, OVER, GOLD)
    assert f is not None and f["language"] == "cpp"
    assert (f["cyclomatic_delta"], f["cognitive_delta"]) == (1, 2)  # the `if`: +1, nested in the loop: +2
    assert f["added_cognitive"] == 2  # the gold edit adds none
    assert f["excess"] is not None and f["excess"] > 0
    gold = lang_fidelity("cpp", CPP, GOLD, GOLD)
    assert gold is not None and gold["excess"] == 0 and gold["distance_tokens"] == 1
    assert lang_fidelity("python", "x = 1\n", "x = 2\n", None) is None  # Python keeps the paper's numbers


def test_sample_tasks_in_cpp_and_java(shared_data: Path) -> None:
    tasks = [t for t in ceb.load(shared_data) if t.kind != "translate" and t.language != "python"]
    assert {t.language for t in tasks} == {"cpp", "java"}
    for t in tasks:
        f = lang_fidelity(t.language, t.before, t.after, t.after)
        assert f is not None and f["language"] == t.language, t.task_id
        lang = L.by_name(t.language)
        a, b = L.parse(t.before, lang), L.parse(t.after, lang)
        assert not a.errors and not b.errors, t.task_id
        tokens = Levenshtein.distance(L.lex(a).strings, L.lex(b).strings)  # the layer's tokens, not whitespace
        assert f["distance_tokens"] == tokens and f["excess"] == 0, t.task_id
        assert isinstance(f["cyclomatic_delta"], (int, float)) and isinstance(f["cognitive_delta"], (int, float))
        assert f["cyclomatic_delta"] == L.file_complexity(b)[0] - L.file_complexity(a)[0]


def test_summary_averages_the_language_numbers() -> None:
    config = RunConfig(suite="codeeditorbench", backend="gold", samples=1, conditions=["debug"])

    def rec(task: str, passed: bool, fid: dict | None) -> SampleRecord:
        return SampleRecord(
            suite="codeeditorbench",
            task_id=task,
            task=task,
            condition="debug",
            backend="gold",
            sample=0,
            outcome="pass" if passed else "fail",
            metrics={"verdict": "accepted", **({"lang_fidelity": fid} if fid else {})},
        )

    fid = {"distance": 0.2, "excess": 0.1, "cyclomatic_delta": 1, "cognitive_delta": 2, "added_cognitive": None}
    records = [
        rec("debug/1", True, fid),
        rec("debug/2", True, {**fid, "cyclomatic_delta": 3}),
        rec("debug/3", False, {**fid, "cyclomatic_delta": 100}),
        rec("debug/4", True, None),
    ]
    d = ceb.summarise(config, records)["details"]["debug"]["fidelity"]
    assert d["n_lang"] == 2 and d["cyclomatic_delta_mean"] == 2.0 and d["cognitive_delta_mean"] == 2.0
    assert d["lang_distance_mean"] == pytest.approx(0.2) and d["added_cognitive_mean"] is None
