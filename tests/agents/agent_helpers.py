"""Shared by the agent and CI tests (tests/agents): the installed console script, temporary git repositories."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

EXE = Path(sys.executable).parent / "edit-fidelity"
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_CONFIG_GLOBAL": os.devnull,  # the user's git settings (hooks, templates) stay out of the test
    "GIT_CONFIG_NOSYSTEM": "1",
}

Git = Callable[..., str]


def make_repo(root: Path, files: dict[str, str | bytes]) -> Git:
    """A git work tree at `root` with `files` committed; returns a `git(*args)` that gives stdout."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=GIT_ENV, check=False)
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
        return done.stdout

    root.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main")
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    git("add", ".")
    git("commit", "-qm", "base")
    return git


# a fix (a gradient step) with an extra stop and a value never read, inside the unit that holds the fix
NEWTON = (
    "class Descent:\n"
    "    def __init__(self, tol=1e-6):\n"
    "        self.tol = tol\n"
    "\n"
    "    def minimum(self, f, grad, x):\n"
    "        steps = 0\n"
    "        while steps < 100 and abs(grad(x)) > self.tol:\n"
    "            x = x - f(x) / grad(x)\n"
    "            steps += 1\n"
    "        return x\n"
)
EXTRA = NEWTON.replace(
    "            x = x - f(x) / grad(x)\n",
    "            g = grad(x)\n"
    "            if abs(g) < self.tol:\n"
    "                break\n"
    "            x = x - 0.1 * g\n"
    "            g = grad(x)\n",
)
