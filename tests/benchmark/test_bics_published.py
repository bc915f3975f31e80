"""The published BICS results (shared/data/bics/stats): the headline averages recomputed from the per-trial
rows, every stored verdict rescored, the report in three formats, and unreadable input reported per row."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from benchmark.suites.bics import published
from benchmark.suites.bics.scoring import headline, matrix
from benchmark.suites.bics.suite import published_report

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")
STATS = DATA / "bics" / "stats"
pytestmark = pytest.mark.skipif(not STATS.is_dir(), reason=f"no BICS stats at {STATS}")

HEADER = "target_length,target_depth,iter_no,bug_line_number,bug_type,pred_bug_line_number,pred_bug_type,result\n"


@pytest.fixture(scope="module")
def runs() -> dict[str, published.PublishedRun]:
    return {r.model: r for r in published.read_stats(STATS)}


def test_gpt4o_published_averages_reproduced(runs):
    """GPT-4o: 82.72 without the 15,500-token column, 81.20 with it (the paper's figures), from the rows."""
    run = runs["gpt_4o"]
    m, exact = matrix(run.trials)
    assert m.lengths == [500, 1000, 2000, 4000, 8000, 15500] and m.depths == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert all(n == 25 for row in m.trials for n in row)
    assert round(float(headline(exact, without_longest=True)), 2) == 82.72
    assert round(float(headline(exact)), 2) == 81.20
    s = published.summary(run)["parseable"]
    assert (round(s["accuracy"], 2), round(s["accuracy_without_longest"], 2)) == (81.20, 82.72)


def test_every_stored_verdict_agrees_with_our_scoring(runs):
    assert len(runs) == 14
    for run in runs.values():
        assert run.problems == [] and run.disagreements == [], run.model
        assert len(run.trials) in (625, 750)
    # TRUE/FALSE spelled in capitals reads like True/False
    assert sum(t.correct for t in runs["claude_3_opus"].trials) > 300
    # a model with another longest length (Llama 3's 8K context): that column is the one left out
    llama = published.summary(runs["llama3_70b"])["parseable"]
    assert llama["longest_length"] == 7750 and llama["accuracy_without_longest"] > llama["accuracy"]


def test_report_text_json_html():
    text = published_report(STATS, "text")
    row = next(line for line in text.splitlines() if line.startswith("gpt_4o "))
    assert row.split()[2:4] == ["81.20", "82.72"]
    doc = json.loads(published_report(STATS, "json"))
    by = {m["name"]: m for m in doc["models"]}
    assert len(by) == 14 and round(by["gpt_4o"]["parseable"]["accuracy_without_longest"], 2) == 82.72
    assert by["gpt_4o"]["parseable"]["matrix"]["accuracy"][0][0] == 84.0  # length 500, depth 0: 21 of 25
    page = published_report(STATS, "html")
    assert page.count("<svg") == 14 and "gpt_4o (among parseable)" in page
    # self-contained: the charts' SVG refers only to its own elements (href="#...")
    assert "<script" not in page and "src=" not in page and not re.search(r'href="(?!#)', page)


def test_unreadable_rows_and_files_are_reported(tmp_path):
    (tmp_path / "model_a").mkdir()
    (tmp_path / "model_a" / "result_20240101000000000000.csv").write_text(
        HEADER + "500,0.0,0,3,missing_colon,3,missing_colon,TRUE\n"
        "500,0.0,1,4,missing_comma,four,missing_comma,False\n"
        "500,0.0,2,4,missing_comma,4,missing_comma,maybe\n"
        "500,0.25,0,9,missing_comma,9,missing_colon,True\n"
    )
    (tmp_path / "model_a" / "result_20230101000000000000.csv").write_text(HEADER)
    (tmp_path / "model_b").mkdir()
    (tmp_path / "model_b" / "result_1.csv").write_text("a,b\n1,2\n")
    runs = {r.model: r for r in published.read_stats(tmp_path)}
    a = runs["model_a"]
    assert [t.correct for t in a.trials] == [True, True]
    assert a.problems == [
        "result_20240101000000000000.csv row 3: pred_bug_line_number 'four' is not a number",
        "result_20240101000000000000.csv row 4: result 'maybe' is not True/False",
        "result_20230101000000000000.csv: ignored, an older result file",
    ]
    assert a.disagreements == [
        ("result_20240101000000000000.csv row 5: stored True, answer 9, 'missing_colon' for 9, missing_comma")
    ]
    assert runs["model_b"].trials == [] and "missing columns" in runs["model_b"].problems[0]
    with pytest.raises(published.PublishedError, match="not a directory"):
        published.read_stats(tmp_path / "nothing")
