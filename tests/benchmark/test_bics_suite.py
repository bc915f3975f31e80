"""Suite `bics` end to end: the real CLI, the real language server (`editFidelity.locateBug` over stdio), a
real OpenAI-protocol endpoint on 127.0.0.1, our run's report next to the published ones."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from benchmark import cli
from benchmark.run.records import RunConfig, SampleRecord
from benchmark.run.store import RESULTS, read_records
from benchmark.suite import Verdict
from benchmark.suites.bics import snippets
from benchmark.suites.bics.suite import make, published_report
from tools.doubles.scripted import ScriptedServer, Step

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")
pytestmark = pytest.mark.skipif(not (DATA / "bics" / snippets.CSV_NAME).exists(), reason=f"no BICS data at {DATA}")


def bench(*argv: str) -> int:
    return cli.main(["bench", *argv])


def run(out: Path, *args: str) -> dict:
    assert (
        bench("run", "--suite", "bics", "--out", str(out), "--data", str(DATA), "--quiet", "--workers", "1", *args) == 0
    )
    return json.loads((out / "summary.json").read_text())


def test_gold_answers_are_all_right_for_both_bug_sources(tmp_path, monkeypatch):
    s = run(tmp_path / "gold", "--backend", "gold", "--conditions", "dataset,inserted", "--limit", "5")
    assert s["suite"] == "bics" and set(s["conditions"]) == {"dataset", "inserted"}
    for cond in ("dataset", "inserted"):
        c = s["conditions"][cond]
        assert (c["accuracy"], c["accuracy_all"], c["trials"], c["unparseable"], c["errors"]) == (100.0, 100.0, 5, 0, 0)
    records = read_records(tmp_path / "gold" / RESULTS)
    tasks = {t.task_id: t for t in make().dataset.load(DATA, 5)}
    for r in records:
        h = tasks[r.task_id].haystack(r.condition)
        answer = json.loads(r.completion)
        assert answer["raw"] == f"{h.label_line}, {h.bug_type}" and answer["line"] == h.label_line
        assert r.metrics["label_line"] == h.label_line and r.metrics["tokens"] == h.tokens
    # our results replay as a recorded run, with the same verdicts
    again = run(
        tmp_path / "again",
        "--backend",
        f"recorded:{tmp_path / 'gold'}",
        "--conditions",
        "dataset,inserted",
        "--limit",
        "5",
    )
    assert again["conditions"] == s["conditions"]
    assert all(r.recorded_pass is True for r in read_records(tmp_path / "again" / RESULTS))
    # the run's own HTML report: tables and a heatmap per condition and view
    assert bench("report", str(tmp_path / "gold"), "--format", "html") == 0
    assert (tmp_path / "gold" / "report.html").read_text().count("<svg") == 4
    # our run beside the published ones, heatmaps included
    page = published_report(DATA / "bics" / "stats", "html", [tmp_path / "gold"])
    assert "gold [dataset]" in page and "gold [inserted]" in page and page.count("<svg") == 14 + 4
    text = published_report(DATA / "bics" / "stats", "text", [tmp_path / "gold"])
    assert re.search(r"^gold \[inserted\]\s+ours\s+100\.00", text, re.MULTILINE)


def test_a_model_through_the_server_both_accuracies(tmp_path, monkeypatch):
    """A scripted model that knows the labels and answers by cell: right, wrong line, not in the format, wrong
    type, right (length 500, depths 0..1); always right at length 1000. Expected, computed by hand:
    among parseable (cells 100, 0, 0, 100 and five of 100) 700/9; unparseable wrong 700/10; without the
    longest length 200/4 and 200/5."""
    tasks = make().dataset.load(DATA, 10)
    by_context = {t.haystack("dataset").numbered: t for t in tasks}

    def answer(request: dict) -> str:
        content = request["messages"][-1]["content"]
        context = re.search(r"<context>\n(.*)\n</context>", content, re.DOTALL).group(1)
        t = by_context[context]
        h = t.haystack("dataset")
        if t.length == 1000 or t.depth in (0.0, 1.0):
            return f"{h.label_line}, {h.bug_type}"
        if t.depth == 0.25:
            return f"{h.label_line + 1}, {h.bug_type}"
        if t.depth == 0.5:
            return f"The bug is on line {h.label_line}."
        return f"{h.label_line}, {'missing_comma' if h.bug_type != 'missing_comma' else 'missing_colon'}"

    with ScriptedServer({"oracle": [Step(content=answer)]}) as srv:
        s = run(
            tmp_path / "oracle", "--backend", "openai", "--base-url", srv.base_url, "--model", "oracle", "--limit", "10"
        )
        assert len(srv.requests_for("oracle")) == 10
    c = s["conditions"]["dataset"]
    assert c["accuracy"] == round(700 / 9, 4) and c["accuracy_all"] == 70.0
    assert c["accuracy_without_longest"] == 50.0 and c["accuracy_all_without_longest"] == 40.0
    assert (c["trials"], c["unparseable"], c["errors"]) == (10, 1, 0)
    d = s["details"]["dataset"]
    assert d["parseable"]["matrix"]["accuracy"] == [
        [100.0, 100.0],
        [0.0, 100.0],
        [None, 100.0],
        [0.0, 100.0],
        [100.0, 100.0],
    ]
    assert d["all"]["matrix"]["accuracy"][2] == [0.0, 100.0]
    assert sum(v["trials"] for v in d["all"]["per_bug_type"].values()) == 10
    unparsed = [r for r in read_records(tmp_path / "oracle" / RESULTS) if not r.metrics["parseable"]]
    assert len(unparsed) == 1 and json.loads(unparsed[0].completion)["raw"].startswith("The bug is on line")
    assert unparsed[0].exec_status == "unparseable" and unparsed[0].outcome == "fail"


async def test_errors_are_counted_apart_from_answers():
    suite = make()
    [task] = suite.dataset.load(DATA, 1)
    h = task.haystack("dataset")
    right = await suite.scorer.judge(
        None, task, "dataset", json.dumps({"line": h.label_line, "bugType": h.bug_type, "parseable": True})
    )
    garbled = await suite.scorer.judge(None, task, "dataset", "not json")
    assert isinstance(right, Verdict) and right.passed and right.exec_status == "correct"
    assert not garbled.passed and garbled.exec_status == "unparseable"
    recs = []
    for i, v in enumerate((right, garbled)):
        rec = SampleRecord(
            suite="bics",
            task_id=task.task_id,
            task=task.name,
            condition="dataset",
            backend="m",
            sample=i,
            outcome="pass" if v.passed else "fail",
        )
        v.fill(rec)
        recs.append(rec)
    recs.append(
        SampleRecord(
            suite="bics",
            task_id=task.task_id,
            task=task.name,
            condition="dataset",
            backend="m",
            sample=2,
            outcome="backend_error",
            error_kind="timeout",
        )
    )
    s = suite.reporter.summarise(RunConfig(suite="bics", backend="m", samples=3, conditions=["dataset"]), recs)
    c = s.conditions["dataset"]
    assert (c["accuracy"], c["accuracy_all"], c["trials"], c["unparseable"], c["errors"]) == (100.0, 50.0, 2, 1, 1)
    assert s.details["dataset"]["error_kinds"] == {"timeout": 1}


def test_grid_options_on_the_command_line_and_the_published_report(tmp_path, capsys):
    s = run(
        tmp_path / "grid",
        "--backend",
        "gold",
        "--suite-option",
        "lengths=500",
        "--suite-option",
        "depths=0.5",
        "--suite-option",
        "trials=2",
        "--suite-option",
        "seed=7",
    )
    assert s["conditions"]["dataset"]["trials"] == 2
    assert sorted(r.task_id for r in read_records(tmp_path / "grid" / RESULTS)) == ["s7-500-0.5-0", "s7-500-0.5-1"]
    assert json.loads((tmp_path / "grid" / "config.json").read_text())["options"]["seed"] == "7"
    # a resume must ask for the same grid
    assert (
        bench(
            "run",
            "--suite",
            "bics",
            "--backend",
            "gold",
            "--out",
            str(tmp_path / "grid"),
            "--data",
            str(DATA),
            "--resume",
            "--quiet",
            "--suite-option",
            "lengths=500",
            "--suite-option",
            "trials=3",
        )
        == 2
    )
    assert "different run" in capsys.readouterr().err
    assert (
        bench(
            "run", "--suite", "bics", "--backend", "gold", "--out", str(tmp_path / "x"), "--suite-option", "colour=red"
        )
        == 2
    )
    assert "unknown key" in capsys.readouterr().err
    assert (
        bench("run", "--suite", "canitedit", "--backend", "gold", "--out", str(tmp_path / "y"), "--suite-option", "a=b")
        == 2
    )
    assert "takes no options" in capsys.readouterr().err
    assert bench("report", "--published", "bics", str(DATA / "bics" / "stats"), str(tmp_path / "grid")) == 0
    out = capsys.readouterr().out
    assert re.search(r"^gpt_4o\s+published\s+81\.20\s+82\.72", out, re.MULTILINE) and "gold [dataset]" in out
