"""The environment the necessity runs use, and telling a command that cannot start from a failing one.

Without `necessity.environment` the runs use the server's own test environment: a sandbox venv with
pytest and the packages named in `necessity.packages` (pip requirement strings), made on first use
and kept (it is named by a hash of its requirements, so other packages make another one, and the
same ones are reused across sessions). A user's own venv cannot be used as is: the sandbox shows the
slot uid only /usr and its own home (bwrap), and a venv's interpreter usually links into a home or
/root, which that uid cannot read; naming the packages gets an equivalent environment it can read.
`necessity.environment` names a prepared sandbox environment (`sandbox prepare --suite NAME`)
instead, used as it is.

A run that cannot start (the interpreter has no such module, the program or file does not exist) says
nothing about the proposal: `start_failure` recognises the interpreter's and the sandbox's own
messages, so the analysis reports `command_failed` with that line instead of `full_fails`.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from server.lsp.settings import NecessitySettings

if TYPE_CHECKING:
    from sandbox import ExecResult

# The server's test environment always has pytest (the documented `python -m pytest ...` must work).
PYTEST = "pytest==9.2.0"
PREPARE_TIMEOUT_S = 900.0


class EnvironmentProblem(Exception):
    """The test environment could not be made: one line saying why and what to change."""


def requirements(cfg: NecessitySettings) -> tuple[str, ...]:
    """What the server's own environment holds (pytest first, then the user's packages)."""
    names = {re.split(r"[\s\[<>=!~;@]", p, maxsplit=1)[0].lower().replace("_", "-") for p in cfg.packages}
    return cfg.packages if "pytest" in names else (PYTEST, *cfg.packages)


def environment_name(cfg: NecessitySettings) -> str:
    """The sandbox environment the runs use: the configured one, or the server's own for its requirements."""
    if cfg.environment:
        return cfg.environment
    digest = hashlib.sha256(json.dumps(list(requirements(cfg))).encode()).hexdigest()[:12]
    return f"necessity-{digest}"


_PREPARE = """
import sys, json
from sandbox import envs
name, reqs = sys.argv[1], json.loads(sys.argv[2])
envs.SUITES[name] = envs.Suite(name, tuple(reqs))
envs.prepare(name, log=lambda m: print(m, file=sys.stderr))
"""


def ensure_environment(cfg: NecessitySettings) -> str:
    """Register (and, if needed, make) the environment; returns its name. Blocking: run it in a thread.

    The venv is made by a child process whose output is captured: pip must never write to the
    server's stdout, which carries the LSP messages."""
    from sandbox import envs

    name = environment_name(cfg)
    if cfg.environment:
        if name not in envs.SUITES:
            raise EnvironmentProblem(
                f"necessity.environment {name!r} is not a sandbox environment "
                f"(known: {', '.join(s for s in envs.SUITES if not s.startswith('necessity-'))}); "
                "leave it unset to use the server's own (pytest and necessity.packages)"
            )
        if not envs.is_prepared(name):
            raise EnvironmentProblem(
                f"the sandbox environment {name!r} is not prepared: run `edit-fidelity sandbox prepare --suite {name}`"
            )
        return name
    reqs = requirements(cfg)
    envs.SUITES[name] = envs.Suite(name, reqs)  # this process's sandbox runs look it up by name
    if envs.is_prepared(name):
        return name
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PREPARE, name, json.dumps(list(reqs))],
            capture_output=True,
            text=True,
            timeout=PREPARE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise EnvironmentProblem(
            f"making the test environment ({', '.join(reqs)}) took over {PREPARE_TIMEOUT_S:.0f} s"
        ) from exc
    if done.returncode != 0 or not envs.is_prepared(name):
        lines = [ln.strip() for ln in done.stderr.splitlines() if ln.strip() and not ln.startswith(("WARNING", "  "))]
        # pip's own "ERROR: ..." line says it best; else the last line (a traceback's exception)
        why = next((ln for ln in lines if ln.startswith("ERROR:")), lines[-1] if lines else "no message")
        raise EnvironmentProblem(
            f"could not make the test environment ({', '.join(reqs)}): {why[:300]}; "
            "check editFidelity.necessity.packages"
        )
    return name


# The interpreter's own "cannot run that" messages (no traceback: nothing of the workspace ran).
_NO_MODULE = re.compile(r"^\S*python[\d.]*: No module named (?P<mod>[\w.]+)$")
_NO_SPEC = re.compile(
    r"^\S*python[\d.]*: Error while finding module specification for '[\w.]+' "
    r"\(ModuleNotFoundError: No module named '(?P<mod>[\w.]+)'\)$"
)
_NO_FILE = re.compile(r"^\S*python[\d.]*: can't open file '(?P<path>[^']+)': \[Errno 2\] No such file or directory$")
# The sandbox's wrappers (reaper, setpriv, prlimit) when the program cannot be executed.
_NO_EXEC = re.compile(r"(cannot execute|failed to execute|No such file or directory|Permission denied|not found)")
_PYTEST_NO_PATH = re.compile(r"^ERROR: file or directory not found: (?P<path>\S+)$")


def _in_workspace(files: Mapping[str, object], module: str) -> bool:
    top = module.split(".")[0]
    return any(rel == f"{top}.py" or rel.startswith(f"{top}/") for rel in files)


def start_failure(res: ExecResult | None, files: Mapping[str, object]) -> str | None:
    """The line saying why the command could not start, or None when it ran (pass or fail)."""
    if res is None or res.status != "failed":
        return None
    lines = [ln.strip() for ln in (res.stderr or "").splitlines() if ln.strip()]
    out_lines = [ln.strip() for ln in (res.stdout or "").splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if len(lines) <= 2:
        m = _NO_MODULE.match(last) or _NO_SPEC.match(last)
        if m and not _in_workspace(files, m["mod"]):
            return last
        m = _NO_FILE.match(last)
        if m and PurePosixPath(m["path"]).name not in {PurePosixPath(r).name for r in files}:
            return last
        if res.exit_code in (126, 127) and _NO_EXEC.search(last):
            return last
    for ln in lines[-3:] + out_lines[-3:]:  # pytest's usage error for a test path the copy lacks
        m = _PYTEST_NO_PATH.match(ln)
        if m and res.exit_code == 4:
            return ln
    return None


def start_hint(line: str, cfg: NecessitySettings) -> str:
    """What to change, for the line `start_failure` found."""
    m = _NO_MODULE.match(line) or _NO_SPEC.match(line)
    if m:
        mod = m["mod"].split(".")[0]
        if cfg.environment:
            return (
                f"the sandbox environment {cfg.environment!r} has no `{mod}`: leave necessity.environment "
                f"unset to use the server's own (pytest and necessity.packages), with `{mod}`'s package in "
                "editFidelity.necessity.packages"
            )
        return f"add the package that provides `{mod}` to editFidelity.necessity.packages"
    if "file or directory not found" in line or "can't open file" in line:
        return "check editFidelity.testCommand and editFidelity.necessity.include (the runs get a copy of those files)"
    return "check editFidelity.testCommand (only programs in the sandbox environment or /usr/bin can run)"
