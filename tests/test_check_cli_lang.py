"""`edit-fidelity check` picks the language from the extension (or `--language`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ORIGINAL = """function area(w, h) {
  // width times height
  const result = w * h;
  return result;
}
"""
EDITED = """function area(w, h) {
  if (typeof w !== "number") return 0;
  const out = w * h;
  return out;
}
"""


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "edit-fidelity"), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def _kinds(report: dict) -> list[list[str]]:
    return [h["kinds"] for h in report["hunks"]]


def test_javascript_by_extension(tmp_path: Path):
    (tmp_path / "a.js").write_text(ORIGINAL)
    (tmp_path / "b.js").write_text(EDITED)
    done = run("check", str(tmp_path / "a.js"), str(tmp_path / "b.js"), "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["language"] == "javascript"
    kinds = {k for ks in _kinds(report) for k in ks}
    assert kinds == {"rename", "comment_removed", "defensive"}, _kinds(report)
    assert report["complexity"]["cyclomatic"]["delta"] == 1


def test_whitespace_only_is_formatting(tmp_path: Path):
    (tmp_path / "a.js").write_text(ORIGINAL)
    (tmp_path / "b.js").write_text(ORIGINAL.replace("w * h", "w*h").replace("  return", "      return"))
    report = json.loads(run("check", str(tmp_path / "a.js"), str(tmp_path / "b.js"), "--format", "json").stdout)
    assert _kinds(report) and all(ks == ["formatting_only"] for ks in _kinds(report)), _kinds(report)


def test_language_flag_and_unsupported(tmp_path: Path):
    (tmp_path / "a.txt").write_text("x = 1\n")
    (tmp_path / "b.txt").write_text("x = 2\n")
    report = json.loads(run("check", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--format", "json").stdout)
    assert report["language"] == "unsupported:txt" and report["hunks"] == []
    assert report["distance"]["raw"] == {"tokens": 1, "normalized": 1 / 3}
    report = json.loads(run("check", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--language", "python",
                            "--format", "json").stdout)
    assert report["language"] == "python" and report["hunks"]
    done = run("check", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--language", "cobol")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "not a supported language" in done.stderr
