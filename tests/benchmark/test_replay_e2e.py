"""End to end through the real CLI, the real language server (LSP over stdio), a real HTTP endpoint on
127.0.0.1 and the real sandbox: gold, identity, a recorded run, our own results file, an OpenAI backend."""

import argparse
import json
import os
import re
from pathlib import Path

import pytest

from benchmark import cli
from benchmark.run.store import RESULTS, read_records
from sandbox import envs
from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")
RUNS = sorted((DATA / "canitedit_runs").glob("codellama*.tar.gz"))

pytestmark = [
    pytest.mark.skipif(
        not (DATA / "canitedit" / "canitedit_test.jsonl").exists(), reason=f"no CanItEdit data at {DATA}"
    ),
    pytest.mark.skipif(
        not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox"
    ),
]


def bench(*argv: str) -> int:
    return cli.main(["bench", *argv])


def run(out: Path, backend: str, *extra: str) -> dict:
    assert (
        bench(
            "run",
            "--suite",
            "canitedit",
            "--backend",
            backend,
            "--out",
            str(out),
            "--data",
            str(DATA),
            "--quiet",
            "--workers",
            "2",
            *extra,
        )
        == 0
    )
    return json.loads((out / "summary.json").read_text())


def test_gold_passes_with_zero_excess(tmp_path):
    s = run(tmp_path / "gold", "gold", "--limit", "4")
    assert s["suite"] == "canitedit" and s["backend"] == "gold"
    for cond in ("descriptive", "lazy"):
        assert s["conditions"][cond] == {"pass@1": 100.0, "excess_code": 0.0, "n_tasks": 4, "n_samples": 1}
        d = s["details"][cond]
        assert d["excess_lev_mean"] == 0.0 and d["added_cc_mean"] == 0.0
    records = read_records(tmp_path / "gold" / RESULTS)
    assert len(records) == 8 and all(r.scores is not None and r.scores.missing_lines == [] for r in records)
    assert all(r.server_ms > 0 and r.distance is not None for r in records)


def test_identity_fails_everywhere(tmp_path):
    s = run(tmp_path / "identity", "identity", "--limit", "4")
    for cond in ("descriptive", "lazy"):
        assert s["conditions"][cond]["pass@1"] == 0.0
        assert s["conditions"][cond]["excess_code"] is None  # no passing completion anywhere
    assert all(r.identical and r.outcome == "fail" for r in read_records(tmp_path / "identity" / RESULTS))


@pytest.mark.skipif(not RUNS, reason="no recorded CanItEdit run")
def test_recorded_run_agrees_with_its_verdicts_and_replays_again(tmp_path, capsys):
    s = run(tmp_path / "rec", f"recorded:{RUNS[0]}", "--limit", "3", "--samples", "6")
    for cond in ("descriptive", "lazy"):
        d = s["details"][cond]
        assert s["conditions"][cond]["n_samples"] == 6 and d["n_completions"] == 18
        assert d["recorded_agreement"] == 1.0, d["recorded_disagreements"]
        assert s["conditions"][cond]["pass@1"] == d["recorded_pass@1"]
    first = {r.key[:2] + (r.sample,): r for r in read_records(tmp_path / "rec" / RESULTS)}
    # the stored completions go through the server unchanged (modulo the buffer's final newline)
    from benchmark.suites.canitedit.archive import load_archive

    stored = load_archive(RUNS[0])
    for (task, cond, sample), r in first.items():
        assert r.completion.rstrip("\n") == stored.get(task, cond)[sample].rstrip("\n")
    # our own results file replays as a recorded run, with the same verdicts
    s2 = run(tmp_path / "again", f"recorded:{tmp_path / 'rec'}", "--limit", "3")
    assert s2["conditions"] == s["conditions"]
    assert s2["details"]["lazy"]["recorded_agreement"] == 1.0
    capsys.readouterr()
    assert bench("report", str(tmp_path / "rec"), "--format", "text") == 0
    text = capsys.readouterr().out
    assert "descriptive" in text and "pass@1" in text
    assert bench("report", str(tmp_path / "rec"), "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["conditions"] == s["conditions"]
    assert bench("report", str(tmp_path / "rec"), "--format", "html") == 0
    page = (tmp_path / "rec" / "report.html").read_text()
    # the CanItEdit figures (charts, or a line saying why one is left out), the conditions side by side
    charts = re.findall(r'<figure class="chart" aria-label="([^"]+)"|Chart left out: <b>([^<]+)</b>', page)
    assert page.startswith("<!doctype html>") and len(charts) == 7
    assert "pass@1 per change kind" in page and "ExcessCode per instruction kind" in page
    kinds = json.loads((tmp_path / "rec" / "summary.json").read_text())["details"]["lazy"]["per_change_kind"]
    assert (
        set(kinds) <= {"corrective", "adaptive", "perfective"}
        and sum(k["n_tasks"] for k in kinds.values()) == s["conditions"]["lazy"]["n_tasks"]
    )
    # opens offline: inline script and SVG only (the SVG namespace URIs name, they fetch nothing)
    assert not re.search(r'(src|href)="(?!#)', page) and not re.search(r"https?://(?!www\.w3\.org/)", page)
    capsys.readouterr()
    assert bench("compare", str(tmp_path / "rec"), str(tmp_path / "again")) == 0
    paper_table = capsys.readouterr().out.split("unrequested units at warning severity")[0]  # not the per-kind one
    rows = [ln for ln in paper_table.splitlines() if "descriptive" in ln or "lazy" in ln]
    # the run named by its file (its start, and its end without the archive's extension)
    stem = RUNS[0].name.removesuffix(".tar.gz")
    assert len(rows) == 4 and rows[0].startswith("recorded:" + stem[:20]) and stem[-12:] + " " in rows[0]


def test_openai_backend_through_a_real_endpoint_and_no_secret_stored(tmp_path, monkeypatch):
    key = "sk-bench-secret-0123456789"
    monkeypatch.setenv("BENCH_TEST_KEY", key)

    # a "model" that answers with the code it was given: every CanItEdit `before` fails its tests
    with ScriptedServer({"echo": [Step(content=lambda req: fenced(user_code(req)))]}) as srv:
        s = run(
            tmp_path / "oa",
            "openai",
            "--base-url",
            srv.base_url,
            "--model",
            "echo",
            "--api-key-env",
            "BENCH_TEST_KEY",
            "--limit",
            "2",
            "--samples",
            "2",
            "--conditions",
            "lazy",
        )
        assert len(srv.requests_for("echo")) == 2  # one request per prompt, n=2 samples each
        assert all(r.body.get("n") == 2 for r in srv.requests_for("echo"))
        assert all(r.headers.get("authorization") == f"Bearer {key}" for r in srv.requests_for("echo"))
    assert s["conditions"] == {"lazy": {"pass@1": 0.0, "excess_code": None, "n_tasks": 2, "n_samples": 2}}
    for f in (tmp_path / "oa").iterdir():
        assert key not in f.read_text(errors="replace"), f.name
    assert json.loads((tmp_path / "oa" / "config.json").read_text())["api_key_env"] == "BENCH_TEST_KEY"


def test_usage_errors(tmp_path, capsys):
    assert bench("run", "--suite", "canitedit", "--backend", "nope", "--out", str(tmp_path / "x")) == 2
    assert "unknown backend" in capsys.readouterr().err
    assert bench("run", "--suite", "canitedit", "--backend", "openai", "--out", str(tmp_path / "x")) == 2
    assert "--base-url" in capsys.readouterr().err
    assert (
        bench("run", "--suite", "canitedit", "--backend", "recorded:/nonexistent.tar.gz", "--out", str(tmp_path / "x"))
        == 2
    )
    assert "not found" in capsys.readouterr().err
    assert bench("report", str(tmp_path)) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_register_adds_the_bench_command():
    parser = argparse.ArgumentParser(prog="edit-fidelity")
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["bench", "run", "--suite", "canitedit", "--backend", "gold", "--out", "/tmp/x"])
    assert args.handler is not None and args.backend == "gold" and not args.resume


def test_local_backend_replays_through_the_embedded_model(tmp_path):
    pytest.importorskip("transformers")
    from tools.doubles.local_tiny import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny")
    s = run(
        tmp_path / "local",
        f"local:{model}",
        "--limit",
        "1",
        "--samples",
        "1",
        "--conditions",
        "lazy",
        "--max-tokens",
        "16",
    )
    # a random model writes no working code: every sample is stored, as a failure or "no code"
    assert s["conditions"]["lazy"]["n_tasks"] == 1 and s["conditions"]["lazy"]["n_samples"] == 1
    assert s["conditions"]["lazy"]["pass@1"] == 0.0
    [record] = list(read_records(tmp_path / "local" / RESULTS))
    assert record.backend == f"local:{model}" and record.outcome in ("fail", "no_code")


@pytest.mark.skipif(not RUNS, reason="no recorded CanItEdit run")
def test_necessity_gives_a_reference_free_excess_beside_the_gold_based_one(tmp_path, capsys):
    s = run(
        tmp_path / "nec",
        f"recorded:{RUNS[0]}",
        "--limit",
        "3",
        "--samples",
        "3",
        "--conditions",
        "descriptive",
        "--necessity",
        "12",
    )
    d = s["details"]["descriptive"]
    records = read_records(tmp_path / "nec" / RESULTS)
    passing = [r for r in records if r.passed]
    assert passing and d["n_passing"] == len(passing)
    for r in passing:  # every passing completion was analysed within its run budget
        m = r.metrics
        assert m["necessity_status"] in ("minimal", "budget", "no_hunks"), m
        assert 0 <= m["necessity_runs"] <= 12
        assert set(m["needed_hunks"]) | set(m["unnecessary_hunks"]) == set(range(m["hunks"]))
        if m["excess_ref_free"] is not None:  # the minimal passing sub-edit is never farther than the edit
            assert m["excess_ref_free"] >= -1e-9 and m["d_min"] <= r.distance + 1e-9
    assert all("necessity_status" not in r.metrics for r in records if not r.passed)
    assert d["necessity_analysed"] >= 1 and d["excess_ref_free_mean"] is not None
    # the pooled estimate measures each against the smallest of its problem's minimal sub-edits: never less
    assert d["excess_pooled_mean"] >= d["excess_ref_free_mean"] - 1e-12
    assert json.loads((tmp_path / "nec" / "config.json").read_text())["necessity_runs"] == 12
    assert bench("report", str(tmp_path / "nec")) == 0
    printed = capsys.readouterr().out
    assert "descriptive: reference-free excess" in printed and "pooled over the condition's passing samples" in printed
