"""`bench` commands through the real CLI in the test's own process, shared by the benchmark tests."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from benchmark import cli


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
