"""Flagged change units in the suites: warnings and hints counted apart from the server's `hunkSeverities`,
the flagged-unit rate of passing completions, and the over-editing suite's count on the paper's
(normalised) footing. End to end through the real CLI, language server, endpoint and sandbox."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from benchmark import cli
from benchmark.report.summary import render_compare, summarise
from benchmark.run.engine import flag_counts
from benchmark.run.records import RunConfig, SampleRecord
from benchmark.run.store import RESULTS, read_records
from benchmark.suites import canitedit, overedit
from sandbox import envs
from server.fidelity import measure
from server.fidelity.judge.flags import count_unit_flags
from server.protocol.commands import ProposalRecord
from tests.benchmark.cli_runs import quiet_run
from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code


def _proposal(flagged: list[int], severities: list[int], *, report: bool = True) -> ProposalRecord:
    rep = measure("x = 1\n", "x = 2\n") if report else None
    return ProposalRecord(
        id="p",
        backend="b",
        status="ok",
        edits=[],
        report=rep,
        latency_ms=0.0,
        flagged_hunks=flagged,
        hunk_severities=severities,
    )


def test_a_proposals_flags_split_by_severity():
    # LSP severities: 1 error and 2 warning are warnings, 3 information and 4 hint are hints
    assert flag_counts(_proposal([0, 2, 3, 4], [1, 4, 4, 3, 2, 2])) == (4, 2, 2)
    assert flag_counts(_proposal([], [4, 4])) == (0, 0, 0)
    assert flag_counts(_proposal([1], [])) == (1, None, None)  # an older server: no severities
    assert flag_counts(_proposal([], [], report=False)) == (0, None, None)  # not an edit (a located bug)


def _rec(
    task: str,
    sample: int,
    warn: int | None,
    hint: int | None,
    *,
    passed: bool = True,
    condition: str = "descriptive",
    **metrics,
) -> SampleRecord:
    return SampleRecord(
        suite="canitedit",
        task_id=task,
        task=task,
        condition=condition,
        backend="b",
        sample=sample,
        outcome="pass" if passed else "fail",
        flagged_warning=warn,
        flagged_hint=hint,
        flagged_hunks=(warn or 0) + (hint or 0),
        metrics=metrics,
    )


def test_summary_counts_warnings_and_hints_apart_in_any_record_order():
    config = RunConfig(suite="canitedit", backend="b", samples=2, conditions=["descriptive"])
    records = [
        _rec("t1", 0, 0, 3),
        _rec("t1", 1, 2, 0),
        _rec("t2", 0, 1, 1),
        _rec("t2", 1, None, None),
        _rec("t3", 0, 5, 5, passed=False),
        _rec("t3", 1, 0, 0),
    ]
    s = summarise(config, records)
    d = s["details"]["descriptive"]
    # over the 4 passing records with severities; the failing one and the old one are left out
    assert d["n_flag_counted"] == 4 and d["n_passing"] == 5
    assert d["flagged_warning_mean"] == (0 + 2 + 1 + 0) / 4
    assert d["flagged_hint_mean"] == (3 + 0 + 1 + 0) / 4
    assert d["flagged_warning_rate"] == 2 / 4  # t1/1 and t2/0 have a warning-severity unit
    assert "flagged_hunks_mean" in d  # the old key stays
    for seed in range(3):
        shuffled = records[:]
        random.Random(seed).shuffle(shuffled)
        assert json.dumps(summarise(config, shuffled)) == json.dumps(s)
    text = render_compare([s, s])
    assert "warned" in text and "50.0%" in text


def test_overedit_summary_has_both_footings():
    config = RunConfig(suite="overedit", backend="b", samples=1, conditions=["generic"])
    recs = [
        _rec(
            "a", 0, 2, 1, condition="generic", families=["x"], flagged_warning_normalised=0, flagged_hint_normalised=0
        ),
        _rec(
            "b", 0, 1, 0, condition="generic", families=["x"], flagged_warning_normalised=1, flagged_hint_normalised=2
        ),
    ]
    for r in recs:
        r.suite = "overedit"
    m = summarise(config, recs)["conditions"]["generic"]
    assert (m["flagged_warning_mean"], m["flagged_hint_mean"], m["flagged_warning_rate"]) == (1.5, 0.5, 1.0)
    assert (
        m["flagged_warning_normalised_mean"],
        m["flagged_hint_normalised_mean"],
        m["flagged_warning_normalised_rate"],
    ) == (0.5, 1.0, 0.5)


# -- end to end -------------------------------------------------------------------------------------


def _data(shared_data: Path) -> Path:
    if not (shared_data / canitedit.FILE).exists():
        pytest.skip(f"no CanItEdit data at {shared_data}")
    return shared_data


DOC = '        """Computes the sample mean of the data"""\n'


def _overedited(after: str) -> str:
    """A removed docstring (unrequested: a warning) and a blank line added (whitespace only: a hint)."""
    out = after.replace(DOC, "").replace("        mean = sum(X) / len(X)\n", "        mean = sum(X) / len(X)\n\n", 1)
    assert out != after
    return out


@pytest.mark.skipif(not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox")
def test_canitedit_warnings_and_hints_through_the_server(shared_data: Path, tmp_path: Path, capsys):
    data = _data(shared_data)
    problems = canitedit.load(data, 3)
    gold_of = {p.before.strip(): p.after for p in problems}

    def answer(req: dict) -> str:  # the gold, and for 2_cov_corr the gold with two over-edits on top
        after = gold_of[user_code(req).strip()]
        return fenced((_overedited(after) if DOC in after else after).rstrip("\n") + "\n")  # the fence on its own line

    common = ("--limit", "3", "--conditions", "descriptive")
    gold = quiet_run(tmp_path / "gold", "canitedit", "gold", data, *common)
    with ScriptedServer({"over": [Step(content=answer)]}) as srv:
        model = quiet_run(
            tmp_path / "model", "canitedit", "openai", data, "--base-url", srv.base_url, "--model", "over", *common
        )
    g = {r.task_id: r for r in read_records(tmp_path / "gold" / RESULTS)}
    m = {r.task_id: r for r in read_records(tmp_path / "model" / RESULTS)}
    assert all(r.passed and r.flagged_warning is not None for r in [*g.values(), *m.values()])
    for task, r in m.items():
        extra = (1, 1) if task == "2_cov_corr" else (0, 0)
        assert (r.flagged_warning, r.flagged_hint) == (
            g[task].flagged_warning + extra[0],
            g[task].flagged_hint + extra[1],
        )
        assert r.flagged_warning + r.flagged_hint == r.flagged_hunks
    gd, md = gold["details"]["descriptive"], model["details"]["descriptive"]
    assert md["flagged_warning_mean"] == pytest.approx(gd["flagged_warning_mean"] + 1 / 3)
    assert md["flagged_hint_mean"] == pytest.approx(gd["flagged_hint_mean"] + 1 / 3)
    assert md["flagged_warning_rate"] > gd["flagged_warning_rate"]
    # the text report, the HTML report and `bench compare` show them
    capsys.readouterr()
    assert cli.main(["bench", "report", str(tmp_path / "model"), "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"warn\s+hint\s+warned", text)
    assert cli.main(["bench", "report", str(tmp_path / "model"), "--format", "html"]) == 0
    page = (tmp_path / "model" / "report.html").read_text()
    assert "flagged-unit rate" in page and f"{100 * md['flagged_warning_rate']:.1f}%" in page
    capsys.readouterr()
    assert cli.main(["bench", "compare", str(tmp_path / "gold"), str(tmp_path / "model")]) == 0
    paper_table = capsys.readouterr().out.split("unrequested units at warning severity")[0]  # not the per-kind one
    rows = [ln for ln in paper_table.splitlines() if "descriptive" in ln]
    assert len(rows) == 2 and f"{100 * md['flagged_warning_rate']:.1f}%" in rows[1]


FAST = ("BigCodeBench/1", "BigCodeBench/5", "BigCodeBench/2", "BigCodeBench/263")


def test_overedit_counts_on_the_normalised_footing(shared_data: Path, tmp_path: Path):
    """The gold repair is never warned about on the paper's footing; a renamed local on top of it is."""
    raw = shared_data / "overedit" / overedit.DATA_FILE
    if not raw.exists():
        pytest.skip(f"no overedit data at {shared_data}")
    rows = [json.loads(line) for line in raw.read_text().splitlines()]
    subset = tmp_path / "subset.jsonl"
    subset.write_text("".join(json.dumps(r) + "\n" for r in rows if r["task_id"] in FAST))
    tasks = {t.task_id: t for t in overedit.make().dataset.load(subset, None)}
    task = tasks["BigCodeBench/5"]
    renamed = re.sub(r"\brandom_dict\b", "samples", task.after)
    for cond in overedit.CONDITIONS:
        gold = overedit.normalised_flags(task, cond, task.after)
        assert gold["flagged_warning_normalised"] == 0 and gold["units_normalised"] >= 1
        assert overedit.normalised_flags(task, cond, renamed)["flagged_warning_normalised"] >= 1

    envs.prepare("base", log=lambda m: None)
    corrupted = {t.before.strip(): t for t in tasks.values()}

    def answer(req: dict) -> str:
        t = corrupted[user_code(req).strip()]
        return fenced((renamed if t is task else t.after).rstrip("\n") + "\n")  # the fence on its own line

    env = {"EDIT_FIDELITY_OVEREDIT_ENV": "base"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        gold = quiet_run(tmp_path / "gold", "overedit", "gold", subset)
        with ScriptedServer({"over": [Step(content=answer)]}) as srv:
            model = quiet_run(
                tmp_path / "model", "overedit", "openai", subset, "--base-url", srv.base_url, "--model", "over"
            )
    for cond in overedit.CONDITIONS:
        assert gold["conditions"][cond]["flagged_warning_normalised_mean"] == 0.0
        assert gold["conditions"][cond]["n_flag_counted_normalised"] == 4
        m = model["conditions"][cond]
        assert m["n_passing"] == 4 and m["flagged_warning_normalised_rate"] == 0.25
    recs = read_records(tmp_path / "model" / RESULTS)
    for r in recs:
        warned = r.metrics["flagged_warning_normalised"]
        assert (warned >= 1) == (r.task_id == task.task_id), r.task_id
        # the server's count of the raw texts, beside it: the rules count_unit_flags applies are the server's
        t = tasks[r.task_id]
        raw_report = measure(t.before, r.completion)
        assert (r.flagged_warning, r.flagged_hint) == count_unit_flags(
            raw_report, t.instruction(r.condition), original=t.before, edited=r.completion
        )
