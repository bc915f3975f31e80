"""The can-ai-code download against a local server laid out like raw.githubusercontent.com (COMMIT/PATH of the
upstream repository), serving the shared data's files (GitHub is not reachable here): the written tree
loads exactly like the shared data, first use fills the per-user cache, failures leave nothing half-written."""

from __future__ import annotations

from pathlib import Path

import pytest
from data_paths import data_dir
from pinned_mirror import serve, tree

from benchmark import cli
from benchmark.datadir import DataError
from benchmark.suites.canaicode import download
from benchmark.suites.canaicode.suite import make, questions_root

SHARED = data_dir()
SOURCE = SHARED / "canaicode" if SHARED else None
pytestmark = pytest.mark.skipif(
    SOURCE is None or not (SOURCE / "senior").is_dir(), reason="no can-ai-code data to serve"
)
NOT_UPSTREAM = {"results_summary_all_eval_files.csv"}  # derived by whoever built the shared data; not fetched


@pytest.fixture
def server(monkeypatch):
    with serve(
        download.PINNED, SOURCE, monkeypatch, corrupt=lambda body: body.replace(b"eq:", b"eq: ", 1) + b"\n"
    ) as state:
        yield state


def _tree(root: Path) -> dict[str, bytes]:
    return tree(root, NOT_UPSTREAM)


def _tasks(data: Path | None, template: str = "chat-simple") -> list:
    return make({"template": template}).dataset.load(data, None)


def _recorded(data: Path, name: str) -> tuple:
    suite = make()
    rec = suite.solver.load_recorded(questions_root(data) / "results_sample" / name)
    tasks = suite.dataset.load(data, None)
    return tasks, rec.interview, rec.rows, rec.problems


def test_download_command_writes_what_the_loaders_read_from_the_shared_data(server, tmp_path, capsys):
    assert cli.main(["bench", "download", "canaicode", "--data", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(tmp_path / "canaicode") and "skipped" not in err
    root = tmp_path / "canaicode"
    assert _tree(root) == _tree(SOURCE)  # byte for byte, nothing more, nothing less
    assert len(_tasks(tmp_path)) == 29
    for template in ("chat-simple", "chat-simple-v2", "chat"):
        assert _tasks(tmp_path, template) == _tasks(SHARED, template)
    samples = sorted(p.name for p in (SOURCE / "results_sample").glob("*.ndjson"))
    assert len(samples) == 6
    for name in samples:
        assert _recorded(tmp_path, name) == _recorded(SHARED, name)
    fetched = len(server["hits"])
    assert fetched == len(download.FILES)
    assert cli.main(["bench", "download", "canaicode", "--data", str(tmp_path)]) == 0
    assert len(server["hits"]) == fetched  # all there with their SHA-256: nothing fetched again


def test_first_use_without_a_data_dir_fills_the_cache(server, tmp_path, monkeypatch):
    monkeypatch.delenv("EDIT_FIDELITY_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _tasks(None) == _tasks(SHARED)
    cache = tmp_path / "edit-fidelity" / "data" / "canaicode"
    assert questions_root(None) == cache and _tree(cache) == _tree(SOURCE)
    hits = len(server["hits"])
    server["fail"] = {f.dest: 404 for f in download.FILES}
    assert _tasks(None, "chat") == _tasks(SHARED, "chat")  # cached: no second download
    assert len(server["hits"]) == hits


@pytest.mark.parametrize("mode", [404, "truncate", "corrupt"])
def test_a_failed_required_file_leaves_no_partial_file_and_says_why(server, tmp_path, capsys, mode):
    bad = "senior/vm.yaml"
    server["fail"] = {bad: mode}
    assert cli.main(["bench", "download", "canaicode", "--data", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"can-ai-code {bad}" in err and download.URL_ENV in err
    assert {404: "404", "truncate": "IncompleteRead", "corrupt": "SHA-256"}[mode] in err
    written = _tree(tmp_path / "canaicode")
    assert bad not in written and not [p for p in written if Path(p).name.startswith(".")]  # no temporary file
    assert all(written[p] == (SOURCE / p).read_bytes() for p in written)  # what is there is complete
    server["fail"] = {}
    assert cli.main(["bench", "download", "canaicode", "--data", str(tmp_path)]) == 0  # a rerun fetches the rest
    assert _tree(tmp_path / "canaicode") == _tree(SOURCE)


def test_a_failed_optional_file_is_reported_and_skipped(server, tmp_path, capsys):
    sample = next(f for f in download.FILES if f.dest.startswith("results_sample/"))
    server["fail"] = {sample.dest: 404, "prompts_params/precise.json": "corrupt"}
    assert cli.main(["bench", "download", "canaicode", "--data", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"skipped the optional {sample.dest}" in err and "skipped the optional prompts_params/precise.json" in err
    got = _tree(tmp_path / "canaicode")
    assert set(_tree(SOURCE)) - set(got) == {sample.dest, "prompts_params/precise.json"}
    assert _tasks(tmp_path) == _tasks(SHARED)


def test_an_explicit_data_dir_is_never_filled_behind_the_users_back(server, tmp_path, monkeypatch):
    monkeypatch.delenv("EDIT_FIDELITY_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(DataError, match="bench download canaicode"):
        questions_root(tmp_path)
    assert server["hits"] == [] and not (tmp_path / "cache").exists()
