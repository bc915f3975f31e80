"""The gold-flags benchmark script runs on the data and refuses bad input in one line."""

from __future__ import annotations

import re

import pytest
from data_paths import data_dir

from tools.bench import bench_gold_flags


def _row(out: str, label: str) -> tuple[int, int]:
    m = re.search(rf"^{re.escape(label)}\s+(\d+)\s+(\d+)\s", out, re.MULTILINE)
    assert m, (label, out)
    return int(m.group(1)), int(m.group(2))


def test_gold_flags_on_a_few_problems(capsys):
    root = data_dir()
    if root is None or not (root / "canitedit").is_dir() or not (root / "overedit").is_dir():
        pytest.skip("benchmark data not available (EDIT_FIDELITY_DATA)")
    assert bench_gold_flags.main(["--data", str(root), "--limit", "12"]) == 0
    out = capsys.readouterr().out
    for condition in ("descriptive", "lazy"):
        units, off = _row(out, f"{condition}, instruction off")
        units_on, on = _row(out, f"{condition}, instruction on")
        assert units == units_on > 0 and on <= off
    _, normalised = _row(out, "normalised (paper), instruction on")
    assert normalised == 0  # the fix itself is never warned about
    assert "Injected over-edits" in out and "remaining flagged units" in out


def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    assert bench_gold_flags.main(["--limit", "0"]) == 2
    assert bench_gold_flags.main(["--data", str(tmp_path), "--suite", "canitedit"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("bench_gold_flags: ") for line in err)
