"""Suite `overedit`: loading (data dir, generated file, download checked against the SHA-256), the
conditions, and end to end through the real CLI, language server, replay endpoint and sandbox."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from benchmark import cli
from benchmark.datadir import DataError
from benchmark.run.store import RESULTS, read_records
from benchmark.suites import overedit
from benchmark.suites.overedit import Task, compare_conditions, make, parse_tasks
from benchmark.suites.overedit import sections as overedit_html_sections
from sandbox import envs
from tests.benchmark.cli_runs import quiet_run
from tools.doubles.files import FileServer

# stdlib-only tasks (they run in the `base` environment, which CI always has); 1 and 2 corruptions
FAST = ("BigCodeBench/1", "BigCodeBench/5", "BigCodeBench/2", "BigCodeBench/263")


@pytest.fixture(scope="module")
def raw_file(shared_data: Path) -> Path:
    return shared_data / "overedit" / overedit.DATA_FILE


def test_the_400_tasks_load_with_their_families(shared_data: Path, overedit_tasks: list[dict]):
    tasks = make().dataset.load(shared_data, None)
    assert len(tasks) == len(overedit_tasks) == 400
    counts = Counter(len(t.families) for t in tasks)
    assert counts == Counter(len(r.get("mutation_types") or [r["mutation_type"]]) for r in overedit_tasks)
    assert sum(len(t.families) for t in tasks) == 568 and len({f for t in tasks for f in t.families}) == 12
    t = tasks[0]
    assert (t.before, t.after) == (overedit_tasks[0]["corrupted_solution"], overedit_tasks[0]["canonical_solution"])
    assert t.kind == "unittest"
    generic, explicit = t.instruction("generic"), t.instruction("explicit")
    assert t.prompt in generic and generic.endswith("What is wrong? Fix and complete my function.")
    assert explicit.endswith("but keep as much of the original code as possible.")
    assert make().styles == {"generic": "generic", "explicit": "minimal"}
    assert len(make().dataset.load(shared_data, 7)) == 7


def test_a_bad_line_is_reported_and_the_rest_loads(raw_file: Path):
    good = raw_file.read_text().splitlines()[:2]
    tasks, errors = parse_tasks([good[0], "{not json", '{"task_id": 3}', good[0], "", good[1]], "f.jsonl")
    assert [t.task_id for t in tasks] == ["BigCodeBench/0", "BigCodeBench/1"]
    assert len(errors) == 3
    assert errors[0].startswith("f.jsonl:2: not a task record")
    assert errors[1].startswith("f.jsonl:3: not a task record") and "task_id" in errors[1]
    assert errors[2] == "f.jsonl:4: duplicate task_id 'BigCodeBench/0'; the first one is kept"


def test_download_is_checked_against_the_published_hash(
    raw_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    data = raw_file.read_bytes()
    assert hashlib.sha256(data).hexdigest() == overedit.SOURCE_SHA256
    files = {"/good.jsonl": data, "/tampered.jsonl": data.replace(b"task_func", b"task_fun", 1)}
    with FileServer(files) as srv:
        base = srv.url
        with pytest.raises(DataError, match="expected " + overedit.SOURCE_SHA256):
            overedit.download(tmp_path / "t.jsonl", f"{base}/tampered.jsonl")
        assert not (tmp_path / "t.jsonl").exists()
        with pytest.raises(DataError, match="download from .*/missing.jsonl failed"):
            overedit.download(tmp_path / "m.jsonl", f"{base}/missing.jsonl")
        # no data directory given: the per-user cache is filled from the (mirrored) source
        monkeypatch.delenv("EDIT_FIDELITY_DATA", raising=False)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        monkeypatch.setenv(overedit.URL_ENV, f"{base}/good.jsonl")
        tasks = make().dataset.load(None, 3)
        cached = tmp_path / "cache" / "edit-fidelity" / "data" / "overedit" / overedit.DATA_FILE
        first = [json.loads(line)["task_id"] for line in data.decode().splitlines()[:3]]
        assert cached.read_bytes() == data and [t.task_id for t in tasks] == first
        # an explicit directory without the file is an error, never a download
        with pytest.raises(DataError, match="overedit tasks not found"):
            make().dataset.load(tmp_path / "empty", None)


def test_gold_distances_are_the_published_ones(shared_data: Path):
    tasks = {t.task_id: t for t in make().dataset.load(shared_data, None)}
    for n, tokens, normalised in [(0, 2, 0.01802), (1, 1, 0.01471), (5, 1, 0.00833), (6, 1, 0.01042), (7, 1, 0.00909)]:
        task = tasks[f"BigCodeBench/{n}"]
        m = overedit.fidelity(task, task.after)
        assert m["gold_tokens"] == tokens and m["gold_distance"] == pytest.approx(normalised, abs=5e-6)
        assert m["excess_lev"] == 0.0 and m["excess_lev_body"] == 0.0 and m["added_cc"] == 0
        c = overedit.fidelity(task, task.before)
        assert c["excess_lev"] == pytest.approx(-m["gold_distance"]) and c["distance"] == 0.0


def _subset(raw_file: Path, path: Path) -> Path:
    rows = [json.loads(line) for line in raw_file.read_text().splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["task_id"] in FAST))
    return path


def _run(out: Path, backend: str, data: Path) -> dict:
    return quiet_run(out, "overedit", backend, data)


def test_gold_and_identity_end_to_end(raw_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    envs.prepare("base", log=lambda m: None)
    monkeypatch.setenv(overedit.ENV_OVERRIDE, "base")
    subset = _subset(raw_file, tmp_path / "subset.jsonl")
    gold = _run(tmp_path / "gold", "gold", subset)
    tasks = {t.task_id: t for t in make().dataset.load(subset, None)}
    want_gold = [overedit.fidelity(t, t.after)["gold_distance"] for t in tasks.values()]
    for cond in ("generic", "explicit"):
        m = gold["conditions"][cond]
        assert (m["pass@1"], m["pass@1_installed"], m["n_tasks"], m["n_env_missing"]) == (1.0, 1.0, 4, 0)
        assert (m["excess_lev"], m["excess_lev_body"], m["added_cc"], m["added_cc_abs"]) == (0.0, 0.0, 0.0, 0.0)
        d = gold["details"][cond]
        assert d["gold_distance"]["no_comments_mean"] == pytest.approx(sum(want_gold) / 4)
        assert d["per_corruptions"]["1"]["n_tasks"] == 2 and d["per_corruptions"]["2"]["n_tasks"] == 2
        assert d["per_family"]["mutate_comparison_operators"]["pass@1"] == 1.0
    identity = _run(tmp_path / "identity", "identity", subset)
    for cond in ("generic", "explicit"):
        m = identity["conditions"][cond]
        assert m["pass@1"] == 0.0 and m["excess_lev"] is None and m["n_tasks"] == 4
        assert identity["details"][cond]["outcomes"] == {"fail": 4}

    gold_recs = read_records(tmp_path / "gold" / RESULTS)
    id_recs = read_records(tmp_path / "identity" / RESULTS)
    assert all(r.metrics["tests_run"] > 0 for r in gold_recs)
    assert all(r.metrics["failures"] + r.metrics["errors"] > 0 for r in id_recs)
    page = overedit_html_sections(gold, gold_recs)
    # gold's excess is all zero: those charts are left out with a line saying why (issue 20)
    assert (
        page.count("<svg") + page.count('class="left-out"') >= 9
        and "comparison operators" in page
        and "Pass@1 per number of corruptions" in page
    )
    same = compare_conditions(gold_recs)
    assert (same["n_pairs"], same["pass@1_change"], same["excess_lev_change"]) == (4, 0.0, 0.0)
    mixed = [r for r in gold_recs if r.condition == "generic"] + [r for r in id_recs if r.condition == "explicit"]
    worse = compare_conditions(mixed)
    assert worse["pass@1_change"] == -1.0 and worse["n_pairs"] == 0
    # through the CLI: the run's HTML report has the suite's plots; compare puts generic beside explicit
    assert cli.main(["bench", "report", str(tmp_path / "gold"), "--format", "html"]) == 0
    assert (tmp_path / "gold" / "report.html").read_text().count("<svg") == page.count("<svg")
    capsys.readouterr()
    assert cli.main(["bench", "compare", str(tmp_path / "gold"), str(tmp_path / "identity"), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["backend"] for r in out["runs"]] == ["gold", "identity"]
    assert out["within"][str(tmp_path / "gold")]["n_pairs"] == 4


def test_a_missing_module_is_the_environment_s_fault_only_when_the_task_needs_it(shared_data: Path):
    task = next(t for t in make().dataset.load(shared_data, None) if "pandas" in t.canonical_solution)
    assert overedit.environment_gap(task, "pandas") == "pandas"
    assert overedit.environment_gap(task, "torch") is None  # only a repair imports it: the repair's fault
    nltk_task = Task(task_id="x", corrupted_solution="", canonical_solution="import nltk\n", test_code="")
    assert overedit.environment_gap(nltk_task, "nltk_data:stopwords") == "nltk_data:stopwords"
    assert overedit.environment_gap(task, "nltk_data:stopwords") is None
