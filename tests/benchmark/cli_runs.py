"""`bench` commands through the real CLI in the test's own process, shared by the benchmark tests."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec

from benchmark import cli
from benchmark.run.records import SampleRecord
from benchmark.suites import codeeditorbench as ceb

REPO = Path(__file__).resolve().parents[2]
# a CodeEditorBench run: its directory, its summary, its records by task
CebRun = tuple[Path, dict, dict[str, SampleRecord]]


def bench(*argv: str) -> tuple[int, str]:
    """`edit-fidelity bench ARGV...`: its exit code and what it printed on stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["bench", *argv])
    return code, out.getvalue()


def quiet_run(out: Path, suite: str, backend: str, data: Path, *extra: str) -> dict[str, Any]:
    """A `bench run` that must succeed (real server and sandbox, 2 slots); its summary."""
    argv = ["run", "--suite", suite, "--backend", backend, "--out", str(out), "--data", str(data)]
    code, printed = bench(*argv, "--quiet", "--workers", "2", *extra)
    assert code == 0, printed
    return json.loads((out / "summary.json").read_text())


def ceb_run(out: Path, data: Path, backend: str) -> CebRun:
    """`bench run --suite codeeditorbench --limit 1` in a process of its own (the set env var unset)."""
    env = {**os.environ, "EDIT_FIDELITY_DATA": str(data)}
    env.pop(ceb.SET_ENV, None)
    argv = ["bench", "run", "--suite", "codeeditorbench", "--backend", backend, "--out", str(out), "--limit", "1"]
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", *argv, "--quiet"],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["suite"] == "codeeditorbench" and summary["backend"] == backend
    assert list(summary["conditions"]) == list(ceb.KINDS)
    records = [
        msgspec.json.decode(line, type=SampleRecord) for line in (out / "results.jsonl").read_text().splitlines()
    ]
    by_task = {r.task_id: r for r in records}
    assert sorted(by_task) == ["debug/707", "polish/1", "switch/5", "translate/13"]
    return out, summary, by_task
