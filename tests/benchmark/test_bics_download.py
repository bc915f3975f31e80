"""The BICS download against a local server laid out like raw.githubusercontent.com (COMMIT/PATH of the
upstream repository), serving the shared data's files (GitHub is not reachable here): the written tree
loads exactly like the shared data, first use fills the per-user cache, failures leave nothing half-written."""

from __future__ import annotations

from pathlib import Path

import pytest
from data_paths import data_dir
from pinned_mirror import serve, tree

from benchmark import cli
from benchmark.datadir import DataError
from benchmark.suites.bics import download, published, snippets

SHARED = data_dir()
SOURCE = SHARED / "bics" if SHARED else None
pytestmark = pytest.mark.skipif(
    SOURCE is None or not (SOURCE / snippets.CSV_NAME).is_file(), reason="no BICS data to serve"
)


@pytest.fixture
def server(monkeypatch):
    with serve(download.PINNED, SOURCE, monkeypatch, corrupt=lambda body: body.replace(b"False", b"True ", 1)) as state:
        yield state


def _runs(stats: Path) -> list[tuple]:
    return [
        (r.model, Path(r.file).relative_to(stats).as_posix(), r.trials, r.problems, r.disagreements)
        for r in published.read_stats(stats)
    ]


def test_download_command_writes_what_the_loaders_read_from_the_shared_data(server, tmp_path, capsys):
    assert cli.main(["bench", "download", "bics", "--data", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(tmp_path / "bics") and f"15/{len(download.FILES)}" in err
    assert tree(tmp_path / "bics") == tree(SOURCE)  # byte for byte, nothing more, nothing less
    assert snippets.load(tmp_path) == snippets.load(SHARED)
    assert _runs(tmp_path / "bics" / "stats") == _runs(SOURCE / "stats")
    assert len(server["hits"]) == len(download.FILES)
    # again: every file is there with its SHA-256, nothing is fetched
    assert cli.main(["bench", "download", "bics", "--data", str(tmp_path)]) == 0
    assert len(server["hits"]) == len(download.FILES)


def test_first_use_without_a_data_dir_fills_the_cache(server, tmp_path, monkeypatch):
    monkeypatch.delenv("EDIT_FIDELITY_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = tmp_path / "edit-fidelity" / "data" / "bics"
    table = snippets.load()
    assert table == snippets.load(SHARED) and (cache / snippets.CSV_NAME).is_file()
    assert tree(cache) == tree(SOURCE)
    server["fail"] = {f.dest: 404 for f in download.FILES}
    assert _runs(cache / "stats") == _runs(SOURCE / "stats")  # cached: no second download
    assert len(server["hits"]) == len(download.FILES)


def test_published_results_alone_are_fetched_on_first_use(server, tmp_path, monkeypatch):
    monkeypatch.delenv("EDIT_FIDELITY_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    stats = tmp_path / "edit-fidelity" / "data" / "bics" / "stats"
    assert _runs(stats) == _runs(SOURCE / "stats")


@pytest.mark.parametrize("mode", [404, "truncate", "corrupt"])
def test_a_failed_download_leaves_no_partial_file_and_says_why(server, tmp_path, capsys, mode):
    bad = "stats/gpt_4o/result_20240515025037835626.csv"
    server["fail"] = {bad: mode}
    assert cli.main(["bench", "download", "bics", "--data", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"BICS {bad}" in err and download.URL_ENV in err
    assert {404: "404", "truncate": "IncompleteRead", "corrupt": "SHA-256"}[mode] in err
    written = tree(tmp_path / "bics")
    assert bad not in written and not [p for p in written if Path(p).name.startswith(".")]  # no temporary file
    assert all(written[p] == (SOURCE / p).read_bytes() for p in written)  # what is there is complete
    server["fail"] = {}
    assert cli.main(["bench", "download", "bics", "--data", str(tmp_path)]) == 0  # a rerun fetches the rest
    assert tree(tmp_path / "bics") == tree(SOURCE)


def test_an_explicit_data_dir_is_never_filled_behind_the_users_back(server, tmp_path, monkeypatch):
    monkeypatch.delenv("EDIT_FIDELITY_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(DataError, match="bench download bics"):
        snippets.load(tmp_path)
    with pytest.raises(published.PublishedError):
        published.read_stats(tmp_path / "bics" / "stats")
    assert server["hits"] == [] and not (tmp_path / "cache").exists()
