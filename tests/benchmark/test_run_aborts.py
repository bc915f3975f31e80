"""What no sample can survive ends the run in one line, with every record kept: the model endpoint gone for
good (a real OpenAI-protocol server on 127.0.0.1 that stops mid-run) and a results file that cannot be
written (a run directory on a real, tiny tmpfs that fills up)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmark.run import answer_sources
from benchmark.run.engine import Engine, RunAborted
from benchmark.run.records import RunConfig
from benchmark.run.store import ResultsStore, read_records
from benchmark.suites import canitedit
from sandbox import Sandbox, envs
from tests.benchmark.cli_runs import bench

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")

pytestmark = [
    pytest.mark.skipif(not (DATA / "canitedit").exists(), reason=f"no CanItEdit data at {DATA}"),
    pytest.mark.skipif(
        not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox"
    ),
]


# an echoing OpenAI-protocol endpoint in a process of its own, which dies (every connection with it) when
# its second request arrives: the first request's samples are judged, every later one finds nothing there
ENDPOINT = """
import os, sys, time
from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code
seen = []
def answer(req):
    seen.append(1)
    if len(seen) > 1:
        os._exit(1)
    return fenced(user_code(req))
srv = ScriptedServer({"m": [Step(content=answer)]}).start()
print(srv.base_url, flush=True)
time.sleep(3600)
"""


def test_an_endpoint_that_goes_away_for_good_ends_the_run_with_its_records_kept(tmp_path: Path) -> None:
    problems = canitedit.load(DATA, 3)
    config = RunConfig(suite="canitedit", backend="openai", samples=4, limit=3, conditions=["lazy"], model="m")
    root = str(Path(__file__).resolve().parents[2])
    endpoint = subprocess.Popen(
        [sys.executable, "-c", ENDPOINT], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": root}
    )
    box = Sandbox(workers=2)
    try:
        assert endpoint.stdout is not None
        url = endpoint.stdout.readline().strip()
        backend = answer_sources.parse("openai", suite=canitedit.make(), base_url=[url], model="m")
        with ResultsStore(tmp_path, config, resume=False) as store:
            engine = Engine(config, canitedit.make(), problems, backend, store, box, concurrency=1)
            engine.endpoint_failures, engine.endpoint_probes, engine.endpoint_probe_s = 3, 2, 0.1
            with pytest.raises(RunAborted, match="the model endpoint is gone: backend .* does not answer"):
                asyncio.run(engine.run())
            kept = list(store.records)
    finally:
        box.close()
        endpoint.kill()
        endpoint.wait()
    on_disk = read_records(tmp_path / "results.jsonl")
    assert [r.key for r in on_disk] == [r.key for r in kept] and 3 <= len(kept) < 12 and endpoint.returncode == 1
    refused = [r for r in kept if r.outcome == "backend_error"]
    assert len(refused) >= 3 and {r.error_kind for r in refused} == {"connection"}
    assert all(r.outcome == "fail" for r in kept if r not in refused)  # judged: the document unchanged


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="mounting a tmpfs needs root")
def test_a_full_disk_ends_the_run_in_one_line(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    disk = tmp_path / "tiny"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", str(disk)], check=True)
    try:
        code, printed = bench(
            "run", "--suite", "canitedit", "--backend", "gold", "--limit", "12", "--conditions", "lazy",
            "--out", str(disk / "run"), "--data", str(DATA), "--quiet", "--workers", "2",
        )  # fmt: skip
        err = capfd.readouterr().err.strip().splitlines()
        kept = read_records(disk / "run" / "results.jsonl")
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
    assert code == 1 and printed == ""
    assert err[-1].startswith("edit-fidelity bench: cannot write ") and "No space left on device" in err[-1]
    assert "records kept in" in err[-1] and "--resume" in err[-1] and "Traceback" not in "\n".join(err)
    assert 0 < len(kept) < 12 and all(r.outcome == "pass" for r in kept)  # each kept line is whole
