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
    return subprocess.run(
        [str(Path(sys.executable).parent / "edit-fidelity"), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


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
    assert report["language"] == "unsupported:txt" and [h["kinds"] for h in report["hunks"]] == [["logic"]]
    assert report["distance"]["raw"] == {"tokens": 1, "normalized": 1 / 3}
    report = json.loads(
        run(
            "check", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--language", "python", "--format", "json"
        ).stdout
    )
    assert report["language"] == "python" and report["hunks"]
    done = run("check", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--language", "cobol")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "not a supported language" in done.stderr


GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@e",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@e",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
    "HOME": "/tmp",
}


def test_git_mixed_languages(tmp_path: Path):
    files = {
        "web/area.js": ORIGINAL,
        "lib/m.py": "def f(x):\n    # one\n    return x + 1\n",
        "src/Main.java": "class Main {\n  int f(int x) {\n    return x + 1;\n  }\n}\n",
        "notes.txt": "a b c\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, env=GIT_ENV)
    (tmp_path / "web/area.js").write_text(EDITED)
    (tmp_path / "lib/m.py").write_text("def f(x):\n    return x + 1\n")
    (tmp_path / "src/Main.java").write_text("class Main {\n  int f(int y) {\n    return y + 1;\n  }\n}\n")
    (tmp_path / "notes.txt").write_text("a b d\n")
    done = run("check", "--git", "HEAD", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    reports = {f["path"]: f["report"] for f in json.loads(done.stdout)["files"]}
    assert {p: r["language"] for p, r in reports.items()} == {
        "web/area.js": "javascript",
        "lib/m.py": "python",
        "src/Main.java": "java",
        "notes.txt": "unsupported:txt",
    }
    assert {k for ks in _kinds(reports["web/area.js"]) for k in ks} == {"rename", "comment_removed", "defensive"}
    assert _kinds(reports["lib/m.py"]) == [["comment_removed"]]
    assert _kinds(reports["src/Main.java"]) == [["rename"]]
    assert reports["notes.txt"]["distance"]["raw"]["tokens"] == 1


def test_text_title_names_the_language(tmp_path: Path):
    (tmp_path / "a.js").write_text(ORIGINAL)
    (tmp_path / "b.js").write_text(EDITED)
    (tmp_path / "a.txt").write_text("x\n")
    (tmp_path / "b.txt").write_text("y\n")
    js = run("check", str(tmp_path / "a.js"), str(tmp_path / "b.js"))
    flat = " ".join(js.stdout.split())  # the renderer wraps a long title
    assert js.returncode == 0 and "b.js (javascript) token edit distance" in flat
    assert "changes logic" not in js.stdout and "rename" in js.stdout
    txt = run("check", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    assert "b.txt (unsupported:txt: token distance only) token edit distance" in " ".join(txt.stdout.split())
