"""can-ai-code end to end through the real CLI, the real language server (an empty document per question,
its language the condition), the replay endpoint on 127.0.0.1 and the real sandbox."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from benchmark import cli
from benchmark.run.store import RESULTS, read_records
from tests.benchmark.cli_runs import quiet_run


def run(out: Path, backend: str, data: Path, *extra: str) -> dict:
    return quiet_run(out, "canaicode", backend, data, *extra)


def test_gold_answers_score_full_points_in_both_languages(canaicode_root: Path, tmp_path: Path) -> None:
    s = run(tmp_path / "gold", "gold", canaicode_root.parent, "--limit", "2")
    assert s["suite"] == "canaicode" and s["backend"] == "gold"
    # junior-dev's first two questions: FactorialZeroShot (4 points) and FactorialRecursiveZeroShot (4)
    for lang in ("python", "javascript"):
        assert s["conditions"][lang] == {"points": 8, "total": 8, "score": 1.0, "n_questions": 2}
        assert s["details"][lang]["statuses"] == {"PASS": 2}
    records = read_records(tmp_path / "gold" / RESULTS)
    assert len(records) == 4 and all(r.passed and r.metrics["calls"] == 3 for r in records)
    js = next(r for r in records if r.condition == "javascript")
    assert js.completion.startswith("function factorial(n) {") and js.metrics["function"] == "factorial"
    # one interview set, chosen on the command line: senior's 3 questions, 74 weighted points a language
    senior = run(
        tmp_path / "senior",
        "gold",
        canaicode_root.parent,
        "--suite-option",
        "interviews=senior",
        "--conditions",
        "python",
    )
    assert senior["conditions"]["python"] == {"points": 74, "total": 74, "score": 1.0, "n_questions": 3}
    assert s["details"]["overall"]["list_padding"] == "better"  # the default
    worse = run(tmp_path / "worse", "gold", canaicode_root.parent, "--limit", "1", "--suite-option", "padding=worse")
    assert worse["details"]["overall"]["list_padding"] == "worse"  # the summary is made with the run's options


def test_recorded_eval_file_regrades_row_by_row_through_the_server(
    canaicode_root: Path, tmp_path: Path, capsys
) -> None:
    path = next((canaicode_root / "results_sample").glob("eval_senior_*gpt-3.5-turbo*.ndjson"))
    stored = {(r["name"], r["language"]): r for r in map(json.loads, path.read_text().splitlines())}
    s = run(tmp_path / "rec", f"recorded:{path}", canaicode_root.parent)
    assert {c: (m["points"], m["total"]) for c, m in s["conditions"].items()} == {
        "python": (sum(r["passed"] for r in stored.values() if r["language"] == "python"), 74),
        "javascript": (sum(r["passed"] for r in stored.values() if r["language"] == "javascript"), 74),
    }
    records = read_records(tmp_path / "rec" / RESULTS)
    assert len(records) == len(stored) == 6
    for r in records:
        want = stored[(r.task, r.condition)]
        assert r.completion == want["code"]  # the stored code went through the server unchanged
        assert (r.metrics["points"], r.metrics["status"]) == (want["passed"], want["status"])
        assert [c["got"] for c in r.metrics["checks"]] == [c["got"] for c in want["checks"]]
        assert r.recorded_pass == (want["status"] == "PASS") == r.passed
    for lang in ("python", "javascript"):
        rec = s["details"][lang]["recorded"]
        assert rec["same_points"] == rec["rows"] == 3 and rec["disagreements"] == []
    capsys.readouterr()
    assert cli.main(["bench", "report", str(tmp_path / "rec"), "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert "senior/VMAssemblerSimple2" in text and "FAIL 3/27" in text and "PASS 27/27" in text


BAD_SET = """\
Slow:
    Signature: "slow(n)"
    Input: "with input n"
    Output: "n"
    Checks:
        value:
            assert: "f.call(3)"
            eq: 3
NoAssert:
    Signature: "f(n)"
    Input: "with input n"
    Output: "n"
    Checks:
        broken:
            eq: 1
"""


def test_bad_input_rows_get_their_own_status_and_the_run_goes_on(canaicode_root: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "canaicode" / "junior-v2").mkdir(parents=True)
    shutil.copytree(canaicode_root / "prompts_params", data / "canaicode" / "prompts_params")
    shutil.copy(canaicode_root / "junior-v2" / "factorial.yaml", data / "canaicode" / "junior-v2" / "factorial.yaml")
    (data / "canaicode" / "junior-v2" / "zz_bad.yaml").write_text(BAD_SET)
    factorial = "def factorial(n):\n    return 1 if n < 2 else n * factorial(n - 1)"
    rows = [
        {"name": "FactorialZeroShot", "language": "python", "code": factorial},
        {"name": "FactorialZeroShot", "language": "javascript", "code": ""},  # the answer had no code
        {"name": "FactorialMisnamed", "language": "python", "code": "print('no function here')"},
        {"name": "Slow", "language": "python", "code": "def slow(n):\n    while True:\n        pass"},
        {"name": "NoAssert", "language": "python", "code": "def f(n):\n    return n"},
    ]
    lines = [json.dumps(r) for r in rows]
    lines.insert(2, "{this line is not JSON")
    eval_file = tmp_path / "eval_junior-v2_python-javascript_chat-simple_none_greedy-openai_test_1.ndjson"
    eval_file.write_text("\n".join(lines))
    s = run(tmp_path / "bad", f"recorded:{eval_file}", data)
    statuses = {
        (r["task"], lang): (r["status"], r["points"], r["total"], r.get("error", ""))
        for lang in ("python", "javascript")
        for r in s["details"][lang]["rows"]
    }
    assert statuses[("junior-v2/FactorialZeroShot", "python")][:3] == ("PASS", 4, 4)
    assert statuses[("junior-v2/FactorialZeroShot", "javascript")][:3] == ("NO_CODE", 0, 4)
    assert statuses[("junior-v2/FactorialMisnamed", "python")][:3] == ("NO_FUNCTION", 0, 6)
    assert statuses[("junior-v2/Slow", "python")][:3] == ("FAIL", 0, 1)
    bad_q = statuses[("junior-v2/NoAssert", "python")]
    assert bad_q[0] == "BAD_QUESTION" and "check 'broken' has no `assert` expression" in bad_q[3]
    bad_row = statuses[("recorded/line-3", "python")]
    assert bad_row[0] == "BAD_INPUT" and bad_row[3].startswith("line 3: not JSON")
    assert len(statuses) == 6
    slow = next(r for r in read_records(tmp_path / "bad" / RESULTS) if r.task_id == "junior-v2/Slow")
    assert slow.exec_status == "timeout" and slow.metrics["checks"][0]["got"] == {"error": "timeout!"}
    assert s["conditions"]["python"] == {"points": 4, "total": 11, "score": 4 / 11, "n_questions": 5}
