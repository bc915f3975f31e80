"""Out-of-range numbers for `bench run` are usage errors (one line, exit 2), caught before any data is read."""

from __future__ import annotations

import subprocess
import sys

import pytest

BAD = [
    ("--workers", "-1", "must be >= 1"),
    ("--concurrency", "0", "must be >= 1"),
    ("--necessity", "-1", "must be >= 0"),
    ("--temperature", "-1", "must be >= 0 and <= 2"),
    ("--top-p", "0", "must be > 0 and <= 1"),
    ("--max-tokens", "0", "must be >= 1"),
    ("--samples", "many", "is not a number"),
]


@pytest.mark.parametrize(("flag", "value", "says"), BAD)
def test_out_of_range_option_is_a_usage_error(tmp_path, flag, value, says):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli",
            "bench",
            "run",
            "--suite",
            "canitedit",
            "--backend",
            "gold",
            "--out",
            str(tmp_path / "run"),
            flag,
            value,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"argument {flag}: " in proc.stderr and says in proc.stderr
    assert not (tmp_path / "run").exists()
