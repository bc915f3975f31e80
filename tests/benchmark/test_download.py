"""The project's own download code against a local server that speaks the Hugging Face datasets-server
`rows` API (the hub is not reachable here): paging, atomic writes, first-use download, failures."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest
from data_paths import data_dir

from benchmark import cli
from benchmark.datadir import DataError
from benchmark.suites import canitedit
from tools.doubles.files import FileServer, Reply, Request

SHARED_DATA = data_dir()
SOURCE = SHARED_DATA / "canitedit" / "canitedit_test.jsonl" if SHARED_DATA else None
ROWS = [json.loads(ln) for ln in SOURCE.read_text().splitlines() if ln.strip()] if SOURCE and SOURCE.exists() else []
pytestmark = pytest.mark.skipif(not ROWS, reason="no CanItEdit data to serve")


@pytest.fixture
def rows_server(monkeypatch):
    state = {"fail_at": None, "pages": 0}

    def rows(request: Request) -> Reply:
        q = {k: v[0] for k, v in parse_qs(request.query).items()}
        assert q["dataset"] == "nuprl/CanItEdit" and q["split"] == "test" and q["config"] == "default"
        off, n = int(q["offset"]), int(q["length"])
        if state["fail_at"] is not None and off >= state["fail_at"]:
            return Reply(502)
        state["pages"] += 1
        shuffled = ROWS[::-1]  # the hub's order is not the id order
        return Reply(
            body=json.dumps(
                {
                    "rows": [{"row_idx": i, "row": r} for i, r in enumerate(shuffled[off : off + n], off)],
                    "num_rows_total": len(ROWS),
                }
            ).encode()
        )

    with FileServer(route=rows) as srv:
        monkeypatch.setenv("EDIT_FIDELITY_HF_ROWS_URL", f"{srv.url}/rows")
        yield state


def test_download_command_pages_through_the_split(rows_server, tmp_path, capsys):
    assert cli.main(["bench", "download", "canitedit", "--data", str(tmp_path)]) == 0
    assert rows_server["pages"] == 2  # 105 rows, 100 per page
    got = canitedit.load(tmp_path)
    assert [p.id for p in got] == sorted(r["id"] for r in ROWS)
    assert got == canitedit.load(SHARED_DATA)


def test_first_use_without_a_data_dir_downloads_into_the_cache(rows_server, tmp_path, monkeypatch):
    monkeypatch.delenv("EDIT_FIDELITY_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    problems = canitedit.load(limit=3)
    assert len(problems) == 3 and (tmp_path / "edit-fidelity" / "data" / "canitedit" / "canitedit_test.jsonl").exists()
    rows_server["fail_at"] = 0
    assert len(canitedit.load()) == len(ROWS)  # cached: no second download


def test_a_failed_download_leaves_nothing_behind(rows_server, tmp_path, capsys):
    rows_server["fail_at"] = 100
    assert cli.main(["bench", "download", "canitedit", "--data", str(tmp_path)]) == 1
    assert "failed at row 100" in capsys.readouterr().err
    assert not list(tmp_path.rglob("*.jsonl")) and not list(tmp_path.rglob(".canitedit*"))
    with pytest.raises(DataError, match="bench download canitedit"):
        canitedit.load(tmp_path)  # an explicit data dir is never filled behind the user's back


def test_a_recorded_run_by_url_is_fetched_once_and_checked(tmp_path, monkeypatch):
    import hashlib

    from benchmark.run import recorded
    from benchmark.suites.canitedit.suite import Edits

    load = Edits().load_recorded  # a run archive is the suite's to read; the download is `recorded`'s

    runs = sorted((SHARED_DATA / "canitedit_runs").glob("codellama*.tar.gz")) if SHARED_DATA else []
    if not runs:
        pytest.skip("no recorded CanItEdit run to serve")
    body = runs[0].read_bytes()
    monkeypatch.setenv("EDIT_FIDELITY_DATA", str(tmp_path))
    with FileServer({f"/backups/{runs[0].name}": body}) as srv:
        url = f"{srv.url}/backups/{runs[0].name}"
        with pytest.raises(recorded.RecordedError, match="expected 00"):
            load(f"{url}#sha256={'0' * 64}")
        assert not (tmp_path / "recorded" / runs[0].name).exists()
        got = load(f"{url}#sha256={hashlib.sha256(body).hexdigest()}")
        assert got.completions == load(runs[0]).completions
        load(url)  # cached: no second fetch
        assert len(srv.paths()) == 2
