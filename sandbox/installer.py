"""How a suite environment's packages get installed: uv where it is found, given pip's own configuration
(indexes, find-links with the CPU torch wheel, constraints; uv never reads pip's, and without them it would
take PyPI's CUDA torch), its files hardlinked from uv's cache, then compiled to .pyc as pip does (linking
the project venv's .pyc where the source is the very same file); else the host's pip (`pip --python`).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sandbox import pyast

INSTALLER_ENV = "EDIT_FIDELITY_INSTALLER"  # "pip": never uv; "uv": uv must be found; unset: uv where found


def find_uv() -> str | None:
    """The uv that `prepare` installs with: the one beside this interpreter (scripts/setup puts it in
    the project's venv, where its cache already holds what that venv installed), else uv on PATH;
    None with EDIT_FIDELITY_INSTALLER=pip or where there is none."""
    choice = os.environ.get(INSTALLER_ENV, "").strip().lower()
    if choice == "pip":
        return None
    for candidate in (
        Path(sys.executable).parent / "uv",
        Path(sysconfig.get_path("scripts")) / "uv",
        shutil.which("uv"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return str(candidate)
    if choice == "uv":
        raise FileNotFoundError(f"{INSTALLER_ENV}=uv but no uv beside {sys.executable} nor on PATH")
    return None


@functools.cache
def pip_options() -> dict[str, str] | None:
    """pip's effective settings for `pip install` (its configuration files and PIP_* variables), read
    with `pip config list`: an `install.` key beats a `global.` one and a variable beats both. None
    where this interpreter's pip cannot say (then uv is not used: it would not know pip's indexes,
    nor the folder of the CPU torch wheel)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    rank = {"global": 0, "install": 1, ":env:": 2}
    best: dict[str, tuple[int, str]] = {}
    for line in done.stdout.splitlines():
        key, sep, raw = line.partition("=")
        section, _, option = key.rpartition(".")
        if not sep or section not in rank:
            continue
        try:
            value = str(pyast.literal_eval(raw))
        except (ValueError, SyntaxError):
            continue
        if option not in best or rank[section] >= best[option][0]:
            best[option] = (rank[section], value)
    return {option: value for option, (_, value) in best.items()}


def uv_index_args(options: dict[str, str]) -> list[str]:
    """uv options for what pip is configured with (uv reads no pip configuration): the same indexes,
    find-links folders (where the CPU torch wheel lies) and constraint files, and pip's choice among
    indexes, the best version on any of them. scripts/setup does the same (a test checks they agree)."""
    args = ["--no-config", "--index-strategy", "unsafe-best-match", "--link-mode", "hardlink"]
    if options.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        args.append("--no-index")
    if options.get("index-url"):
        args += ["--index-url", options["index-url"]]
    for url in options.get("extra-index-url", "").split():
        args += ["--extra-index-url", url]
    for link in options.get("find-links", "").split():
        args += ["--find-links", link]
    for path in options.get("constraint", "").split():
        args += ["--constraint", path]
    return args


def uv_environment(options: dict[str, str]) -> dict[str, str]:
    """pip's CA bundle and timeout for uv."""
    env = {}
    if options.get("cert"):
        env["SSL_CERT_FILE"] = options["cert"]
    timeout = options.get("timeout") or options.get("default-timeout")
    if timeout:
        env["UV_HTTP_TIMEOUT"] = timeout.split(".")[0]
    return env


def cpu_torch_pins(requirements: tuple[str, ...], options: dict[str, str], py: str) -> list[str]:
    """`torch==X+cpu` for each `torch==X` whose CPU wheel for this Python lies in a local find-links
    folder: what pip takes there, made explicit so that uv can never pick PyPI's X, a CUDA build of
    several GB."""
    pins = []
    for req in requirements:
        match = re.fullmatch(r"torch==([0-9][0-9a-z.]*)", req.replace(" ", ""))
        if not match:
            continue
        for link in options.get("find-links", "").split():
            folder = Path(link.removeprefix("file://"))
            if folder.is_dir() and any(folder.glob(f"torch-{match[1]}+cpu-{py}-*.whl")):
                pins.append(f"torch=={match[1]}+cpu")
                break
    return pins


@dataclass(frozen=True)
class Installer:
    """uv where it is found (one resolver run, parallel downloads, files hardlinked from its cache),
    else this interpreter's pip (`pip --python`), which is also the fallback when uv fails."""

    uv: str | None

    @property
    def name(self) -> str:
        return "uv" if self.uv else "pip"

    @classmethod
    def find(cls) -> Installer:
        uv = find_uv()
        return cls(uv if uv and pip_options() is not None else None)

    def command(self, python: str, env: dict[str, str], args: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
        if not self.uv:
            return _pip_install(python, *args), dict(os.environ)
        options = pip_options() or {}  # not None: find() checked
        pins = cpu_torch_pins(args, options, env["py"])
        cmd = [self.uv, "pip", "install", "--python", python, *uv_index_args(options), *args, *pins]
        return cmd, {**os.environ, **uv_environment(options)}

    def install(
        self, python: str, env: dict[str, str], requirements: tuple[str, ...], *, log: Callable[[str], object]
    ) -> str:
        """Install `requirements` (pip's arguments) into the venv of `python` in one resolver run; says
        with what (for uv, its own figures: resolving, downloading and unpacking, linking)."""
        if self.uv:
            cmd, environ = self.command(python, env, requirements)
            done = subprocess.run(cmd, env=environ, capture_output=True, text=True, check=False)
            if done.returncode == 0:
                figures = re.findall(r"^(?:Resolved|Prepared|Installed) .*$", done.stderr, re.M)
                return "uv" + (f" ({'; '.join(figures)})" if figures else "")
            lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
            log(f"uv failed ({(lines or ['no message'])[-1][:300]}); installing with pip")
        subprocess.run(_pip_install(python, *requirements), check=True)
        return "pip"


def compile_bytecode(python: str, env: dict[str, str], site: Path) -> tuple[int, int]:
    """What pip does after installing (uv does not): every module's .pyc, since the sandbox runs Python
    with -B by a uid that cannot write there. A .pyc of this interpreter's venv is linked instead of
    compiled where its source is the very same file (both hardlinked from uv's cache), so the
    packages both have (torch, numpy, sympy, ...) are compiled once. Returns (reused, compiled)."""
    reused = 0
    host_site = Path(sysconfig.get_paths()["purelib"])
    if env["tag"] == sys.implementation.cache_tag and env["magic"] == importlib.util.MAGIC_NUMBER.hex():
        reused = _link_bytecode(site, host_site, env["tag"])
    before = _count_pyc(site)
    subprocess.run(
        [python, "-m", "compileall", "-q", "-j", "0", str(site)],
        check=False,  # pip ignores modules that do not compile (templates, Python 2 leftovers) too
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return reused, _count_pyc(site) - before


def _link_bytecode(site: Path, host_site: Path, tag: str) -> int:
    """Link `host_site`'s .pyc of each module of `site` whose source is the same inode; the count."""
    if not host_site.is_dir() or host_site.resolve() == site.resolve():
        return 0
    linked = 0
    for dirpath, dirnames, filenames in os.walk(site):
        here = Path(dirpath)
        there = host_site / here.relative_to(site)
        if not there.is_dir():
            dirnames.clear()  # nothing below it in the host venv either
            continue
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if not name.endswith(".py"):
                continue
            pyc = f"{name[:-3]}.{tag}.pyc"
            source = there / "__pycache__" / pyc
            try:
                if not os.path.samefile(here / name, there / name) or not source.is_file():
                    continue
                (here / "__pycache__").mkdir(exist_ok=True)
                try:
                    os.link(source, here / "__pycache__" / pyc)
                except OSError as exc:
                    if isinstance(exc, FileExistsError):
                        continue
                    shutil.copy2(source, here / "__pycache__" / pyc)  # another filesystem
            except OSError:
                continue
            linked += 1
    return linked


def _count_pyc(site: Path) -> int:
    return sum(1 for _ in site.rglob("*.pyc"))


def _pip_install(python: str, *args: str) -> list[str]:
    """This interpreter's pip installing into the environment whose interpreter is `python`."""
    return [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--disable-pip-version-check", *args]
