"""`edit-fidelity check` as a user runs it: a real process, real files, a real git repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
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
    assert set(data) >= CONTRACT
    assert set(data["distance"]) == {"raw", "no_comments", "body_no_comments"}
    assert set(data["distance"]["raw"]) == {"tokens", "normalized"}
    assert {"paper", "sonar", "cyclomatic"} <= set(data["complexity"])
    assert set(data["complexity"]["paper"]) == {"before", "after", "delta"}
    assert data["excess"]["no_comments"] > 0
    for hunk in data["hunks"]:  # the language server's keys: camelCase
        assert {"startLine", "endLine", "kinds", "tokensChanged"} <= set(hunk)
    assert {"goldDistance", "parseErrors", "localizedDistance", "goldComplexity"} <= set(data)
    assert data["edits"][0]["range"]["start"].keys() == {"line", "character"}
    assert "newText" in data["edits"][0]


def test_json_keys_snake_keeps_the_document_check_printed_before():
    """The transition for scripts written against the snake_case keys: `--json-keys snake` is the same
    document with every field named as before (a text edit's `newText` as it always was), values unchanged."""
    camel = json.loads(run("check", "--example", "--format", "json").stdout)
    done = run("check", "--example", "--format", "json", "--json-keys", "snake")
    assert done.returncode == 0, done.stderr
    snake = json.loads(done.stdout)
    assert list(snake) == [
        "distance",
        "excess",
        "gold_distance",
        "complexity",
        "hunks",
        "functions",
        "edits",
        "parse_errors",
        "identical",
        "localized_distance",
        "gold_complexity",
        "language",
    ]
    assert {"start_line", "new_end_line", "tokens_changed", "token_spans"} <= set(snake["hunks"][0])
    assert "cognitive_before" in snake["functions"][0] and "newText" in snake["edits"][0]
    assert snake["hunks"][0]["edits"] == camel["hunks"][0]["edits"]
    assert snake["gold_distance"] == camel["goldDistance"] and snake["distance"] == camel["distance"]
    assert [h["start_line"] for h in snake["hunks"]] == [h["startLine"] for h in camel["hunks"]]
    bad = run("check", "--example", "--format", "json", "--json-keys", "kebab")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr and "Traceback" not in bad.stderr


def test_files_gold_and_target(tmp_path: Path):
    (tmp_path / "a.py").write_text("def f(x):\n    return x + 1\n\n\ndef g():\n    return 0\n")
    (tmp_path / "b.py").write_text("def f(x):\n    return x + 2\n\n\ndef g():\n    return 1\n")
    (tmp_path / "gold.py").write_text("def f(x):\n    return x + 2\n\n\ndef g():\n    return 0\n")
    done = run("check", "a.py", "b.py", "--gold", "gold.py", "--target", "1:2", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["goldDistance"]["raw"]["tokens"] == 1
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
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }

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


GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def _repo(root: Path, files: dict[str, str]) -> Callable[..., None]:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=GIT_ENV)

    git("init", "-q")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git("add", ".")
    git("commit", "-qm", "base")
    return git


LONG = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12))


def _files(done: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    assert done.returncode == 0, done.stderr
    return {f["path"]: f for f in json.loads(done.stdout)["files"]}


def test_git_untracked_files_count_and_gitignore_is_respected(tmp_path: Path):
    _repo(tmp_path, {"m.py": "x = 1\n", ".gitignore": "build/\n*.log\n"})
    before = run("check", "--git", "HEAD", cwd=tmp_path)
    assert before.returncode == 0 and "no changes against HEAD" in before.stdout
    (tmp_path / "new.py").write_text("def added():\n    return 2\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("ignored = True\n")
    (tmp_path / "run.log").write_text("ignored\n")
    files = _files(run("check", "--git", "HEAD", "--format", "json", cwd=tmp_path))
    assert set(files) == {"new.py"}  # an assistant that only added a file made a change
    assert files["new.py"]["status"] == "A" and files["new.py"]["report"]["distance"]["raw"]["tokens"] > 0
    assert "new.py (HEAD -> working tree)" in run("check", "--git", "HEAD", cwd=tmp_path).stdout
    # from a subdirectory: the whole work tree, paths from its top
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "inner.py").write_text("y = 2\n")
    assert set(_files(run("check", "--git", "HEAD", "--format", "json", cwd=tmp_path / "pkg"))) == {
        "new.py",
        "pkg/inner.py",
    }
    # a path limits the listing, untracked files included
    assert set(_files(run("check", "--git", "HEAD", "inner.py", "--format", "json", cwd=tmp_path / "pkg"))) == {
        "pkg/inner.py"
    }


def test_git_mv_and_plain_mv_are_renames(tmp_path: Path):
    git = _repo(tmp_path, {"a.py": LONG, "b.py": LONG.replace("x", "y"), "keep.py": "k = 1\n", "gone.py": "g = 1\n"})
    git("mv", "a.py", "a2.py")  # staged rename, content unchanged
    (tmp_path / "b.py").rename(tmp_path / "b2.py")  # plain mv, then an edit: untracked, mostly b's text
    (tmp_path / "b2.py").write_text((tmp_path / "b2.py").read_text().replace("return y + 3", "return y - 3"))
    (tmp_path / "gone.py").unlink()
    (tmp_path / "other.py").write_text("completely = 'different'\n")
    files = _files(run("check", "--git", "HEAD", "--format", "json", cwd=tmp_path))
    assert {p: (f["status"], f.get("oldPath")) for p, f in files.items()} == {
        "a2.py": ("R", "a.py"),
        "b2.py": ("R", "b.py"),
        "gone.py": ("D", None),
        "other.py": ("A", None),
    }
    assert files["a2.py"]["similarity"] == 100 and 50 <= files["b2.py"]["similarity"] < 100
    assert files["a2.py"]["report"]["distance"]["raw"]["tokens"] == 0  # measured against the old path's text
    assert files["b2.py"]["report"]["distance"]["raw"]["tokens"] == 1
    snake = _files(run("check", "--git", "HEAD", "--format", "json", "--json-keys", "snake", cwd=tmp_path))
    assert snake["a2.py"]["old_path"] == "a.py" and "oldPath" not in snake["a2.py"]
    assert "start_line" in snake["b2.py"]["report"]["hunks"][0]
    text = run("check", "--git", "HEAD", cwd=tmp_path).stdout
    assert "a2.py (renamed from a.py; HEAD -> working tree)" in text
    assert "b2.py (renamed from b.py; HEAD -> working tree)" in text


def test_git_errors_say_what_git_said(tmp_path: Path):
    outside = tmp_path / "plain"
    outside.mkdir()
    done = run("check", "--git", "HEAD", cwd=outside)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "git said: fatal: not a git repository" in done.stderr and "run it inside a git work tree" in done.stderr
    repo = tmp_path / "repo"
    repo.mkdir()
    _repo(repo, {"m.py": "x = 1\n"})
    done = run("check", "--git", "nope", cwd=repo)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--git nope: no such commit: git said: fatal:" in done.stderr and "(e.g. HEAD)" in done.stderr
    done = run("check", "--git", "HEAD", str(tmp_path / "plain"), cwd=repo)  # a path outside the repository
    assert done.returncode == 2 and "git said:" in done.stderr and "outside repository" in done.stderr


def test_lsp_git_baseline_follows_a_git_mv(tmp_path: Path):
    import asyncio

    from server.lsp.args import RequestFailed
    from server.lsp.gitbase import head_text

    git = _repo(tmp_path, {"pkg/old.py": "v = 1\n"})
    git("mv", "pkg/old.py", "pkg/new.py")
    (tmp_path / "pkg" / "new.py").write_text("v = 2\n")
    assert asyncio.run(head_text(str(tmp_path / "pkg" / "new.py"))) == "v = 1\n"
    (tmp_path / "pkg" / "fresh.py").write_text("w = 1\n")
    with pytest.raises(RequestFailed, match="no version in git HEAD"):
        asyncio.run(head_text(str(tmp_path / "pkg" / "fresh.py")))
