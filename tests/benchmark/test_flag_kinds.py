"""Unrequested units by kind (issue 28 item 5): the record counts a proposal's flagged units at warning
severity per kind they are flagged for (`hunkUnrequested`, flagged statements as units of their own), the
summary gives the warned share and the units per passing completion by kind, and `bench report` (text and
HTML in a real Chromium) and `bench compare` (text and HTML) show them per run. End to end through the real
CLI, language server, endpoint and sandbox; older records without the field stay readable."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from benchmark import cli
from benchmark.report.metrics import mean
from benchmark.report.summary import render_text, summarise
from benchmark.run.engine import flag_kinds
from benchmark.run.records import RunConfig, SampleRecord, unit_views
from benchmark.run.store import RESULTS, read_records
from benchmark.suites import canitedit
from sandbox import envs
from server.protocol.commands import FlaggedStatement, ProposalRecord
from server.protocol.report import FidelityReport, Hunk, ParseStatus
from tests.benchmark.cli_runs import quiet_run
from tools import headless
from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code


def _hunk(start: int, end: int, new_start: int, new_end: int, kinds: list[str]) -> Hunk:
    return Hunk(
        start_line=start,
        end_line=end,
        new_start_line=new_start,
        new_end_line=new_end,
        kinds=kinds,
        tokens_changed=1,
        unrequested=kinds != ["logic"],
        message="",
    )


REPORT = FidelityReport(
    distance={},
    excess=None,
    gold_distance=None,
    complexity={},
    hunks=[_hunk(1, 1, 1, 1, ["rename"]), _hunk(3, 4, 3, 6, ["logic"]), _hunk(8, 8, 10, 10, ["formatting_only"])],
    functions=[],
    edits=[],
    parse_errors=ParseStatus(original=None, edited=None),
    identical=False,
)
PROPOSAL = ProposalRecord(
    id="p",
    backend="b",
    status="ok",
    edits=[],
    report=REPORT,
    latency_ms=0.0,
    flagged_hunks=[0, 2],
    hunk_severities=[2, 4, 4],
    hunk_unrequested=[["rename", "docstring"], [], ["formatting_only"]],
    flagged_statements=[
        FlaggedStatement(hunk=1, start_line=5, end_line=5, kinds=["added_code"], severity=2, message="dead"),
        FlaggedStatement(hunk=1, start_line=6, end_line=6, kinds=["defensive"], severity=4, message="guard"),
    ],
)


def test_a_proposals_warning_units_by_kind():
    # the hint (a whitespace unit, a statement at hint severity) is no warning; a unit of two kinds counts twice
    assert flag_kinds(PROPOSAL) == {"added_code": 1, "docstring": 1, "rename": 1}
    assert flag_kinds(msgspec.structs.replace(PROPOSAL, hunk_unrequested=[])) is None  # an older server's answer
    assert flag_kinds(msgspec.structs.replace(PROPOSAL, report=None)) is None  # not an edit: no units
    none = msgspec.structs.replace(
        PROPOSAL, flagged_hunks=[], hunk_severities=[], hunk_unrequested=[], flagged_statements=[]
    )
    assert flag_kinds(none) == {}


def test_flagged_statements_are_units_of_the_browser():
    units = unit_views(PROPOSAL)
    assert len(units) == 5
    dead, guard = units[3:]
    # its lines on the edited side, an insertion point at its unit's first original line
    assert dead.lines == (3, 2, 5, 5) and dead.kinds == ["added_code"] and dead.flagged and dead.severity == "warning"
    assert guard.severity == "hint" and guard.message == "guard"


def _kinds_block(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The text's per-kind table: its header's words and its rows' words by their first."""
    block = text[text.index("unrequested units at warning severity") :].splitlines()
    end = next(i for i, ln in enumerate(block) if ln.startswith("n: "))
    return block[1].split(), {ln.split()[0]: ln.split() for ln in block[3:end]}


def _rec(task: str, kinds: dict[str, int] | None, *, passed: bool = True, warn: int = 0) -> SampleRecord:
    return SampleRecord(
        suite="canitedit",
        task_id=task,
        task=task,
        condition="descriptive",
        backend="b",
        sample=0,
        outcome="pass" if passed else "fail",
        flagged_warning=warn,
        flagged_hint=0,
        flagged_warning_kinds=kinds,
    )


def test_summary_means_by_kind_over_records_that_say_them():
    config = RunConfig(suite="canitedit", backend="b", samples=1, conditions=["descriptive"])
    old = msgspec.json.decode(
        json.dumps(
            {
                "suite": "canitedit",
                "task_id": "t4",
                "task": "t4",
                "condition": "descriptive",
                "backend": "b",
                "sample": 0,
                "outcome": "pass",
                "flagged_warning": 1,
                "flagged_hint": 0,
            }
        ),
        type=SampleRecord,
    )
    assert old.flagged_warning_kinds is None  # a record from before the field reads
    recs = [
        _rec("t1", {"rename": 2, "docstring": 1}, warn=2),
        _rec("t2", {}),
        _rec("t3", {"added_code": 3}, passed=False, warn=3),
        old,
    ]
    d = summarise(config, recs)["details"]["descriptive"]
    assert d["n_kind_counted"] == 2  # passing and with the field: t1 and t2
    assert d["flagged_warning_kinds"] == {"docstring": 0.5, "rename": 1.0}
    assert list(d["flagged_warning_kinds"]) == sorted(d["flagged_warning_kinds"])
    assert d["flagged_warning_rate"] == pytest.approx(2 / 3)  # t1 and old of t1, t2, old
    head, rows = _kinds_block(render_text(summarise(config, recs)))
    assert head[-2:] == ["docstring", "rename"] and rows["descriptive"][1:] == ["2", "66.7%", "1.00", "0.50", "1.00"]
    # only old records: the per-kind cells say there is nothing to count
    d = summarise(config, [old])["details"]["descriptive"]
    assert d["n_kind_counted"] == 0 and d["flagged_warning_kinds"] == {}


# -- end to end -------------------------------------------------------------------------------------

DOC = '        """Computes the sample mean of the data"""\n'


def _overedited(task: str, after: str) -> str:
    """2_cov_corr: a removed docstring and a renamed local; 3_hello_world: a value computed and never read
    beside the fix (one unit with the fix: a flagged statement of its own); any other task: the gold."""
    if task == "2_cov_corr":
        out = after.replace(DOC, "").replace("std_y = var_y", "sd_y = var_y").replace("* std_y", "* sd_y")
    elif task == "3_hello_world":
        out = after.replace("    return f", "    shout = name.upper()\n    return f")
    else:
        return after
    assert out != after
    return out


def _cells(dom: str, table: str) -> list[list[str]]:
    body = dom[dom.index(f'<table id="{table}"') :]
    body = body[: body.index("</table>")]
    return [re.findall(r"<t[dh][^>]*>([^<]*)", row) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


@pytest.mark.skipif(not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox")
def test_unrequested_kinds_per_run_through_the_server(shared_data: Path, tmp_path: Path, capsys):
    if not (shared_data / canitedit.FILE).exists():
        pytest.skip(f"no CanItEdit data at {shared_data}")
    problems = canitedit.load(shared_data, 3)
    by_before = {p.before.strip(): p for p in problems}

    def answer(req: dict) -> str:
        p = by_before[user_code(req).strip()]
        return fenced(_overedited(p.full_name, p.after).rstrip("\n") + "\n")

    common = ("--limit", "3", "--conditions", "descriptive")
    gold = quiet_run(tmp_path / "gold", "canitedit", "gold", shared_data, *common)
    with ScriptedServer({"over": [Step(content=answer)]}) as srv:
        model = quiet_run(
            tmp_path / "model",
            "canitedit",
            "openai",
            shared_data,
            "--base-url",
            srv.base_url,
            "--model",
            "over",
            *common,
        )
    g = {r.task_id: r for r in read_records(tmp_path / "gold" / RESULTS)}
    m = {r.task_id: r for r in read_records(tmp_path / "model" / RESULTS)}
    assert all(r.passed and r.flagged_warning_kinds is not None for r in [*g.values(), *m.values()])

    def extra(task: str) -> dict[str, int]:
        mk, gk = m[task].flagged_warning_kinds or {}, g[task].flagged_warning_kinds or {}
        return {k: mk.get(k, 0) - gk.get(k, 0) for k in {*mk, *gk} if mk.get(k, 0) != gk.get(k, 0)}

    assert extra("2_cov_corr").get("rename", 0) >= 1 and extra("2_cov_corr").get("docstring", 0) >= 1
    assert extra("3_hello_world") == {"added_code": 1}
    # the extra value is a flagged statement inside the fix's unit: a unit of its own in the browser
    shout = [u for u in m["3_hello_world"].units or [] if u.flagged and u.kinds == ["added_code"]]
    assert len(shout) == 1 and shout[0].lines[2] == 2 and shout[0].lines[0] > shout[0].lines[1]
    # the summary: warned share and per-kind means over the passing completions, kinds sorted
    md = model["details"]["descriptive"]
    kinds = md["flagged_warning_kinds"]
    assert md["n_kind_counted"] == 3 and list(kinds) == sorted(kinds)
    for k, v in kinds.items():
        assert v == pytest.approx(mean([float((r.flagged_warning_kinds or {}).get(k, 0)) for r in m.values()]))
    assert md["flagged_warning_rate"] == pytest.approx(mean([float(bool(r.flagged_warning)) for r in m.values()]))

    # `bench report`: the text
    capsys.readouterr()
    assert cli.main(["bench", "report", str(tmp_path / "model"), "--format", "text"]) == 0
    head, rows = _kinds_block(capsys.readouterr().out)
    assert rows["descriptive"][head.index("added_code")] == f"{kinds['added_code']:.2f}"
    # ... and the HTML page, in Chromium
    if headless.chromium() is None:
        pytest.skip("chromium missing: scripts/setup installs it")
    assert cli.main(["bench", "report", str(tmp_path / "model"), "--format", "html"]) == 0
    cells = _cells(headless.dump_dom(tmp_path / "model" / "report.html"), "unrequested-kinds")
    assert cells[0][:5] == ["condition", "passing counted", "warned share", "warning units", *sorted(kinds)][:5]
    assert cells[1][cells[0].index("added_code")] == f"{kinds['added_code']:.2f}"
    assert cells[1][cells[0].index("warned share")] == f"{100 * md['flagged_warning_rate']:.1f}%"

    # `bench compare`: a row per run, text and HTML
    capsys.readouterr()
    assert cli.main(["bench", "compare", str(tmp_path / "gold"), str(tmp_path / "model")]) == 0
    head, rows = _kinds_block(capsys.readouterr().out)
    assert set(rows) == {"gold", "openai"}
    assert rows["openai"][head.index("added_code")] == f"{kinds['added_code']:.2f}"
    gold_added = gold["details"]["descriptive"]["flagged_warning_kinds"].get("added_code", 0.0)
    assert rows["gold"][head.index("added_code")] == f"{gold_added:.2f}"
    page = tmp_path / "cmp.html"
    assert cli.main(["bench", "compare", str(tmp_path / "gold"), str(tmp_path / "model"), "--html", str(page)]) == 0
    cells = _cells(headless.dump_dom(page), "unrequested-kinds")
    assert [c[0] for c in cells] == ["run", "gold", "openai"]
    assert cells[2][cells[0].index("added_code")] == f"{kinds['added_code']:.2f}"
