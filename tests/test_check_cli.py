"""`edit-fidelity check` as a user runs it: a real process, real files, a real git repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXE = Path(sys.executable).parent / "edit-fidelity"
CONTRACT = {"distance", "excess", "complexity", "hunks", "functions", "edits"}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, cwd=cwd, timeout=60)


def test_example_text_and_json():
    text = run("check", "--example")
    assert text.returncode == 0, text.stderr
    assert "renamed `scores` to `values`" in text.stdout
    data = json.loads(run("check", "--example", "--format", "json").stdout)
    assert CONTRACT <= set(data)
    assert set(data["distance"]) == {"raw", "no_comments", "body_no_comments"}
    assert set(data["distance"]["raw"]) == {"tokens", "normalized"}
    assert {"paper", "sonar", "cyclomatic"} <= set(data["complexity"])
    assert set(data["complexity"]["paper"]) == {"before", "after", "delta"}
    assert data["excess"]["no_comments"] > 0
    for hunk in data["hunks"]:
        assert {"start_line", "end_line", "kinds", "tokens_changed"} <= set(hunk)
    assert data["edits"][0]["range"]["start"].keys() == {"line", "character"}
    assert "newText" in data["edits"][0]


def test_files_gold_and_target(tmp_path: Path):
    (tmp_path / "a.py").write_text("def f(x):\n    return x + 1\n\n\ndef g():\n    return 0\n")
    (tmp_path / "b.py").write_text("def f(x):\n    return x + 2\n\n\ndef g():\n    return 1\n")
    (tmp_path / "gold.py").write_text("def f(x):\n    return x + 2\n\n\ndef g():\n    return 0\n")
    done = run("check", "a.py", "b.py", "--gold", "gold.py", "--target", "1:2", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["gold_distance"]["raw"]["tokens"] == 1
    assert data["excess"]["raw"] > 0
    assert [h["kinds"] for h in data["hunks"]] == [["logic"], ["logic", "outside_target"]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.py", "b.py"], "missing.py: no such file"),
        (["bin", "b.py"], "bin: binary file"),
        (["a.py", "b.py", "--target", "x:y"], "--target must be START:END"),
        (["a.py", "b.py", "--target", "5:2"], "--target must be START:END"),
        (["a.py"], "give ORIGINAL and EDITED"),
        (["latin1.py", "b.py"], "not UTF-8"),
        (["dir", "b.py"], "dir: is a directory"),
        (["a.py", "b.py", "--format", "xml"], "invalid choice: 'xml'"),
        (["a.py", "b.py", "--no-such-flag"], "unrecognized arguments"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(tmp_path: Path, args, message):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("x = 2\n")
    (tmp_path / "bin").write_bytes(b"\x7fELF\x00\x00binary")
    (tmp_path / "latin1.py").write_bytes("x = 'é'\n".encode("latin-1"))
    (tmp_path / "dir").mkdir()
    done = run("check", *args, cwd=tmp_path)
    assert done.returncode != 0
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_git_mode(tmp_path: Path):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, env=env)

    git("init", "-q")
    (tmp_path / "m.py").write_text("def f(a):\n    # add one\n    return a + 1\n")
    (tmp_path / "same.py").write_text("x = 1\n")
    git("add", ".")
    git("commit", "-qm", "base")
    (tmp_path / "m.py").write_text("def f(value):\n    return value + 1\n")
    data = json.loads(run("check", "--git", "HEAD", "--format", "json", cwd=tmp_path).stdout)
    assert data["revision"] == "HEAD"
    (entry,) = data["files"]
    assert entry["path"] == "m.py" and entry["status"] == "M"
    kinds = {k for h in entry["report"]["hunks"] for k in h["kinds"]}
    assert {"rename", "comment_removed"} <= kinds
    text = run("check", "--git", "HEAD", "m.py", cwd=tmp_path)
    assert "renamed `a` to `value`" in text.stdout
    bad = run("check", "--git", "no-such-rev", cwd=tmp_path)
    assert bad.returncode == 2 and "git" in bad.stderr
