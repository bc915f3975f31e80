"""A run killed with SIGKILL (the CLI, its language server and sandbox children) and resumed ends with
the same records and the same summary.json bytes as an uninterrupted run, without a lost or duplicated
record."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmark import cli
from benchmark.run.store import RESULTS, read_records
from sandbox import envs

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or ROOT.parent / "shared" / "data")
RUNS = sorted((DATA / "canitedit_runs").glob("codellama*.tar.gz"))

pytestmark = [
    pytest.mark.skipif(not RUNS, reason=f"no recorded CanItEdit run under {DATA}"),
    pytest.mark.skipif(
        not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox"
    ),
]


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def args(out: Path, *extra: str) -> list[str]:
    return [
        "bench",
        "run",
        "--suite",
        "canitedit",
        "--backend",
        f"recorded:{RUNS[0]}",
        "--out",
        str(out),
        "--data",
        str(DATA),
        "--limit",
        "3",
        "--samples",
        "8",
        "--workers",
        "2",
        "--quiet",
        *extra,
    ]


def test_kill_9_then_resume_matches_an_uninterrupted_run(tmp_path):
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmark.cli", *args(out, "--concurrency", "2")],
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    results = out / RESULTS
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if results.exists() and results.read_bytes().count(b"\n") >= 10:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read().decode()[-500:]}"
        children = _children(proc.pid)
        assert children, "the language server subprocess is missing"
        os.kill(proc.pid, signal.SIGKILL)  # only the CLI: its server must not outlive it
        proc.wait(10)
        gone_by = time.monotonic() + 10
        while time.monotonic() < gone_by and any(_alive(c) for c in children):
            time.sleep(0.05)
        assert not any(_alive(c) for c in children), "the language server outlived the killed benchmark"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    written = len(read_records(results))
    assert 10 <= written < 48
    # a torn line as a kill in the middle of a write would leave it
    with open(results, "ab") as fh:
        fh.write(b'{"suite":"canitedit","task_id":"1_ci')

    assert cli.main(args(out, "--resume")) == 0
    lines = [ln for ln in results.read_bytes().split(b"\n") if ln]
    records = read_records(results)
    assert len(lines) == len(records) == 48  # nothing lost, nothing duplicated
    assert len({r.key for r in records}) == 48

    clean = tmp_path / "clean"
    assert cli.main(args(clean)) == 0
    by_key = {r.key: r for r in read_records(clean / RESULTS)}
    for r in records:
        c = by_key[r.key]
        assert (r.outcome, r.completion, r.scores) == (c.outcome, c.completion, c.scores)
    # byte for byte: the records were written in another order, the sums do not depend on it
    assert (out / "summary.json").read_bytes() == (clean / "summary.json").read_bytes()
    assert json.loads((out / "summary.json").read_text())["complete"] is True
