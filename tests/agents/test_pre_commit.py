"""The `.pre-commit-hooks.yaml` hook, run by the real `pre-commit` tool in a temporary repository.

pre-commit's whole flow runs: it clones the hook repository (a file:// copy of this checkout's shipped
files, committed), makes a virtualenv, `pip install .` into it and runs the hook on the staged files.
No network at test time: pip is told to use no index (PIP_NO_INDEX) and no build isolation, and finds the
dependencies in this interpreter's site-packages through PYTHONPATH (pre-commit passes the environment on).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from agent_helpers import GIT_ENV, make_repo

from server import example

ROOT = Path(__file__).resolve().parents[2]
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
SHIPPED = ["pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "server", "sandbox", "benchmark"]
FIX_ONLY = example.GOLD  # the one-token fix: a logic unit, nothing flagged


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This checkout's shipped files (as they are now, uncommitted changes included) as a git repository."""
    dest = tmp_path_factory.mktemp("hook-repo")
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z", "--", *SHIPPED],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file():  # listed but deleted in the working tree: not shipped
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    git = make_repo(dest, {})
    return dest, git("rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {
        **GIT_ENV,
        "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home")),  # its cache: the hook's venv
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip's quirk: a false value here turns build isolation off
        "PYTHONPATH": os.pathsep.join(
            dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
        ),
    }


def project(tmp_path: Path, hook_repo: tuple[Path, str], args: list[str] | None = None):
    """A repository with m.py committed and a pre-commit configuration that uses the hook."""
    url, rev = hook_repo[0].as_uri(), hook_repo[1]
    extra = f"\n        args: {args}" if args is not None else ""
    config = f"repos:\n  - repo: {url}\n    rev: {rev}\n    hooks:\n      - id: edit-fidelity{extra}\n"
    root = tmp_path / "project"
    git = make_repo(root, {"m.py": example.ORIGINAL, "notes.md": "notes\n", ".pre-commit-config.yaml": config})
    return root, git


def pre_commit(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PRE_COMMIT), "run", *args], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_hook_blocks_a_staged_over_edit_and_judges_only_what_is_staged(tmp_path, hook_repo, env):
    root, git = project(tmp_path, hook_repo)
    (root / "m.py").write_text(example.OVER_EDITED)
    git("add", "m.py")
    done = pre_commit(root, env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "edit-fidelity (changes nobody asked for)" in done.stdout and "Failed" in done.stdout
    assert "flagged changes at --fail-on warning or louder; first: m.py:4: renamed `scores` to `values`" in done.stdout

    # the fix is staged, the over-edit is only in the working tree: the staged change is judged (pre-commit
    # sets unstaged changes aside while hooks run) and the working tree comes back as it was
    (root / "m.py").write_text(FIX_ONLY)
    git("add", "m.py")
    (root / "m.py").write_text(example.OVER_EDITED)
    done = pre_commit(root, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Passed" in done.stdout
    assert (root / "m.py").read_text() == example.OVER_EDITED
    assert git("diff", "--cached", "--name-only").split() == ["m.py"]

    # a file of another type is not passed to it
    (root / "m.py").write_text(FIX_ONLY)
    git("add", "m.py")
    git("commit", "-qm", "fix")
    (root / "notes.md").write_text("renamed notes\n")
    git("add", "notes.md")
    done = pre_commit(root, env)
    assert done.returncode == 0 and "(no files to check)Skipped" in done.stdout, done.stdout


def test_args_choose_the_level_and_git_commit_runs_it_on_the_first_commit_too(tmp_path, hook_repo, env):
    root, git = project(tmp_path, hook_repo, args=["--fail-on", "error"])
    (root / "m.py").write_text(example.OVER_EDITED)  # warnings only: passes at --fail-on error
    git("add", "m.py")
    done = pre_commit(root, env)
    assert done.returncode == 0 and "Passed" in done.stdout, done.stdout + done.stderr

    # installed as the repository's pre-commit hook: `git commit` runs it; a repository without a commit
    # yet (HEAD unborn) has nothing to compare with, so every staged file is new and passes
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copy(root / ".pre-commit-config.yaml", fresh / ".pre-commit-config.yaml")
    (fresh / "m.py").write_text(example.ORIGINAL)

    def git_fresh(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=fresh, env=env, capture_output=True, text=True, timeout=300)

    assert git_fresh("init", "-q", "-b", "main").returncode == 0
    installed = subprocess.run([str(PRE_COMMIT), "install"], cwd=fresh, env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    assert git_fresh("add", ".").returncode == 0
    first = git_fresh("commit", "-qm", "first")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "edit-fidelity (changes nobody asked for)" in first.stdout + first.stderr
    assert "Passed" in first.stdout + first.stderr and git_fresh("log", "--oneline").stdout.count("\n") == 1
