"""Python environments the sandboxed uid can read: the coverage helper and per-suite venvs.

Venvs are made from the Debian interpreter (readable by any uid, unlike the pyenv Python under
/root), `--without-pip` and without setuptools so no `.pth` file runs at every start-up. Packages are
installed in one resolver run by uv where it is found (the project venv's, which scripts/setup
installs), given pip's own configuration (indexes, find-links with the CPU torch wheel, constraints),
its files hardlinked from uv's cache (so the files live under the sandbox home, readable by the
sandbox uid, and cost no copy), then compiled to .pyc as pip does, linking the project venv's .pyc
where the source is the very same file; else, or when uv fails, by the host's pip through `pip
--python` (EDIT_FIDELITY_INSTALLER=pip forces it). Both give the same packages and versions. Each step
is idempotent: a stamp holds the hash of what was asked for, so `prepare` is a no-op when nothing
changed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import coverage

from sandbox import config
from sandbox.installer import Installer, compile_bytecode

_HERE = Path(__file__).parent


@dataclass(frozen=True)
class Suite:
    name: str
    requirements: tuple[str, ...]
    # Modules that cannot be installed here, replaced by an import-only stub, with the reason.
    stubs: dict[str, str] = field(default_factory=dict)
    # Installed one at a time after `requirements` and held to their pins: one that fails is recorded
    # (missing_modules), not fatal.
    optional: tuple[str, ...] = ()
    # Modules the suite's programs import: each is imported once after installing; failures are recorded.
    imports: tuple[str, ...] = ()


# torch: the exact CPU pin (a local +cpu wheel satisfies it); never let pip resolve a CUDA build.
CANITEDIT_REQUIREMENTS = (
    "torch==2.13.0",
    "numpy==2.4.6",
    "pandas==3.1.1",
    "scikit-learn==1.9.1",
    "scipy==1.17.1",
    "z3-solver==5.4.1.0",
    "autograd==1.9.1",
    "flask==3.1.3",
)
VLLM_STUB_REASON = (
    "vllm is not installable here (CUDA-only wheels of several GB, no GPU); 78_llm_inference only "
    "imports LLM and SamplingParams and its tests replace LLM with a mock, so an import stub suffices"
)
# The over-editing benchmark's BigCodeBench tasks (benchmark/suites/overedit/): the paper's evaluator image
# (python 3.11, its requirements as they resolved in mid-2025), pinned; its gensim 4.3 held numpy < 2
# and scipy < 1.14, and some reference solutions fail under numpy 2 (BigCodeBench/495).
OVEREDIT_REQUIREMENTS = (
    "numpy==1.26.4",
    "pandas==2.3.1",
    "matplotlib==3.10.3",
    "scikit-learn==1.7.1",
    "scipy==1.13.1",
    "seaborn==0.13.2",
    "statsmodels==0.14.5",
    "Faker==37.4.2",
    "pytz==2025.2",
    "nltk==3.9.1",
    "requests==2.32.4",
    "flask==3.1.1",
    "werkzeug==3.1.3",
    "python-dateutil==2.9.0.post0",
    "regex==2024.11.6",
    "Flask-Mail==0.10.0",
    "Flask-Login==0.6.3",
    "Flask-WTF==1.2.2",
    "WTForms==3.2.1",
    "openpyxl==3.1.5",
    "xlwt==1.3.0",
    "xlrd==2.0.2",
    "wordcloud==1.9.4",
    "beautifulsoup4==4.13.4",
    "pyquery==2.0.1",
    "lxml==6.0.0",
    "sympy==1.14.0",
    "python-docx==1.2.0",
    "pycryptodome==3.23.0",
    "rsa==4.9.1",
    "soundfile==0.13.1",
)
# Heavy, one task each: a failed install only loses that task (listed by prepare and by the suite).
OVEREDIT_OPTIONAL = ("librosa==0.11.0", "gensim==4.3.3", "tensorflow-cpu==2.19.0")
OVEREDIT_IMPORTS = (
    "numpy",
    "pandas",
    "matplotlib",
    "sklearn",
    "scipy",
    "seaborn",
    "statsmodels",
    "faker",
    "pytz",
    "nltk",
    "requests",
    "flask",
    "werkzeug",
    "dateutil",
    "regex",
    "flask_mail",
    "flask_login",
    "flask_wtf",
    "wtforms",
    "openpyxl",
    "xlwt",
    "xlrd",
    "wordcloud",
    "bs4",
    "pyquery",
    "lxml",
    "sympy",
    "docx",
    "Crypto",
    "rsa",
    "soundfile",
    "librosa",
    "gensim",
    "tensorflow",
)
# .pth files that only patch `import distutils`; each costs an import at every interpreter start.
UNNEEDED_PTH = ("distutils-precedence.pth",)
SUITES: dict[str, Suite] = {
    "base": Suite("base", ()),
    "canitedit": Suite("canitedit", CANITEDIT_REQUIREMENTS, {"vllm": VLLM_STUB_REASON}),
    "overedit": Suite("overedit", OVEREDIT_REQUIREMENTS, optional=OVEREDIT_OPTIONAL, imports=OVEREDIT_IMPORTS),
}
MISSING_FILE = ".edit-fidelity-missing.json"  # {module or requirement: why it is not there}

VLLM_STUB = '''"""Import stub for vllm (not installable on CPU-only machines); see sandbox/envs.py."""


class SamplingParams:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class LLM:
    def __init__(self, model, *args, **kwargs):
        raise RuntimeError("vllm stub: no real LLM available in the sandbox")
'''


def env_dir(suite: str) -> Path:
    return config.home() / "envs" / suite


def lib_dir() -> Path:
    return config.home() / "lib"


def python_for(suite: str | None) -> str:
    """The interpreter for `suite`: its venv when prepared, else the base interpreter."""
    if suite:
        if suite not in SUITES:  # checked first: the name becomes a path
            raise ValueError(f"unknown suite {suite!r}; known: {', '.join(SUITES)}")
        candidate = env_dir(suite) / "bin" / "python"
        if candidate.exists():
            return str(candidate)
        raise FileNotFoundError(f"suite {suite!r} is not prepared: run `edit-fidelity sandbox prepare --suite {suite}`")
    return config.base_python()


def is_prepared(suite: str) -> bool:
    stamp = env_dir(suite) / ".edit-fidelity-stamp"
    return stamp.exists() and stamp.read_text() == _suite_hash(SUITES[suite])


@contextmanager
def _locked(name: str) -> Iterator[None]:
    """Cross-process lock so parallel test workers or servers prepare once."""
    root = config.ensure_dir(config.home())
    with open(root / f".{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


_ensured: set[Path] = set()  # lib dirs confirmed by this process: no file reads on the hot path


def ensure_lib() -> Path:
    """Copy the coverage driver and the host's coverage package to a place the sandbox uid reads,
    and build the reaper helper."""
    lib = lib_dir()
    if lib in _ensured:
        return lib
    reaper_c = _HERE / "reaper.c"  # package data: a wheel built without it falls back to util-linux
    sources = (_HERE / "covdriver.py").read_bytes() + (reaper_c.read_bytes() if reaper_c.exists() else b"")
    want = f"{coverage.__version__}:{hashlib.sha256(sources).hexdigest()}"
    stamp = lib / ".stamp"
    if stamp.exists() and stamp.read_text() == want:
        _ensured.add(lib)
        return lib
    with _locked("lib"):
        if stamp.exists() and stamp.read_text() == want:
            return lib
        tmp = config.home() / f"lib.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        config.ensure_dir(tmp / "site")
        shutil.copytree(
            Path(coverage.__file__).parent, tmp / "site" / "coverage", ignore=shutil.ignore_patterns("__pycache__")
        )
        shutil.copy(_HERE / "covdriver.py", tmp / "covdriver.py")
        _build_reaper(tmp)
        _make_readable(tmp)
        (tmp / ".stamp").write_text(want)
        shutil.rmtree(lib, ignore_errors=True)
        os.rename(tmp, lib)
    _ensured.add(lib)
    return lib


def reaper_path() -> Path | None:
    path = lib_dir() / "reaper"
    return path if path.exists() else None


def _build_reaper(lib: Path) -> None:
    """Compile the rusage helper; without a C compiler runs still work, minus CPU/peak figures."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler and (_HERE / "reaper.c").exists():
        built = subprocess.run(
            [compiler, "-O2", "-o", str(lib / "reaper"), str(_HERE / "reaper.c")],
            check=False,
            capture_output=True,
            text=True,
        )
        if built.returncode != 0:
            warnings.warn(
                f"sandbox: could not build the reaper helper, using prlimit + setpriv: {built.stderr[-500:]}",
                RuntimeWarning,
                stacklevel=2,
            )


def _suite_hash(suite: Suite) -> str:
    fields = [config.base_python(), list(suite.requirements), sorted(suite.stubs), UNNEEDED_PTH]
    if suite.optional or suite.imports:  # only then: the stamps of the other suites stay valid
        fields += [list(suite.optional), list(suite.imports)]
    blob = json.dumps(fields)
    return hashlib.sha256(blob.encode()).hexdigest()


def _make_readable(root: Path) -> None:
    subprocess.run(["chmod", "-R", "a+rX", str(root)], check=True)


def prepare(name: str, *, log: Callable[[str], object] = print) -> Path:
    """Build (or confirm) the suite's venv; idempotent and safe to call from several processes.

    Each step logs one line with its seconds (`log`; the CLI sends them to stderr)."""
    suite = SUITES[name]
    target = env_dir(name)
    ensure_lib()
    if is_prepared(name):
        log(f"suite {name}: ready at {target}")
        return target
    with _locked(f"env-{name}"):
        if is_prepared(name):
            return target
        started = time.monotonic()
        base = config.base_python()
        if not os.access(base, os.X_OK):
            raise FileNotFoundError(f"base interpreter {base} not found (set {config.BASE_PYTHON_ENV})")
        shutil.rmtree(target, ignore_errors=True)
        config.ensure_dir(target.parent)
        step = _Steps(log, f"suite {name}")
        subprocess.run([base, "-m", "venv", "--without-pip", str(target)], check=True)
        python = str(target / "bin" / "python")
        env = _probe(python)
        site = Path(env["purelib"])
        step.done(f"venv from {base}")
        installer = Installer.find()
        if suite.requirements:
            log(f"suite {name}: installing {len(suite.requirements)} requirements into {target} with {installer.name}")
            used = installer.install(python, env, suite.requirements, log=step.note)
            step.done(f"{len(suite.requirements)} requirements ({_count_dists(site)} packages) with {used}")
        missing = _install_optional(suite, target, python, env, installer, step)
        if installer.uv and (suite.requirements or suite.optional):
            reused, compiled = compile_bytecode(python, env, site)
            host = f" from {sys.prefix}" if reused else ""
            step.done(f"bytecode: {reused} files reused{host}, {compiled} compiled")
        # setuptools (pulled in by torch) ships a .pth that imports a module at every start-up.
        for pth in UNNEEDED_PTH:
            (site / pth).unlink(missing_ok=True)
        if "vllm" in suite.stubs:
            (site / "vllm").mkdir(exist_ok=True)
            (site / "vllm" / "__init__.py").write_text(VLLM_STUB)
        if suite.imports:
            missing.update(_failed_imports(python, suite.imports))
            step.done(f"import check of {len(suite.imports)} modules")
        (target / MISSING_FILE).write_text(json.dumps(missing, indent=1, sort_keys=True))
        _make_readable(target)
        (target / ".edit-fidelity-stamp").write_text(_suite_hash(suite))
        log(f"suite {name}: prepared in {time.monotonic() - started:.1f} s")
    return target


class _Steps:
    """One log line per finished step: what it did and its seconds."""

    def __init__(self, log: Callable[[str], object], prefix: str) -> None:
        self._log, self._prefix, self._mark = log, prefix, time.monotonic()

    def note(self, what: str) -> None:
        self._log(f"{self._prefix}: {what}")

    def done(self, what: str) -> None:
        now = time.monotonic()
        self.note(f"{what}: {now - self._mark:.1f} s")
        self._mark = now


_ENV_PROBE = (
    "import importlib.util, json, sys, sysconfig; print(json.dumps({'purelib': sysconfig.get_paths()['purelib'], "
    "'tag': sys.implementation.cache_tag, 'magic': importlib.util.MAGIC_NUMBER.hex(), "
    "'py': f'cp{sys.version_info[0]}{sys.version_info[1]}'}))"
)


def _probe(python: str) -> dict[str, str]:
    """The venv's site-packages, bytecode cache tag and magic number, and wheel tag (cp311)."""
    out = subprocess.run([python, "-c", _ENV_PROBE], check=True, capture_output=True, text=True).stdout
    return dict(json.loads(out))


def _count_dists(site: Path) -> int:
    return sum(1 for _ in site.glob("*.dist-info"))


def _install_optional(
    suite: Suite, target: Path, python: str, env: dict[str, str], installer: Installer, step: _Steps
) -> dict[str, str]:
    if not suite.optional:
        return {}
    pins = target / "constraints.txt"  # an optional package may not move a pinned one
    pins.write_text("\n".join(suite.requirements) + "\n")
    failed: dict[str, str] = {}
    for req in suite.optional:
        step.note(f"installing optional {req}")
        for current in [installer, Installer(None)] if installer.uv else [installer]:
            cmd, environ = current.command(python, env, ("-c", str(pins), req))
            done = subprocess.run(cmd, env=environ, check=False, capture_output=True, text=True)
            if done.returncode == 0:
                failed.pop(req, None)
                break
            lines = [ln for ln in done.stderr.splitlines() if ln.strip() and not ln.startswith("WARNING")]
            failed[req] = f"{'uv pip' if current.uv else 'pip'} install failed: {(lines or ['no message'])[-1][:300]}"
        step.done(f"optional {req}" + (f": {failed[req]}" if req in failed else ""))
    return failed


_IMPORT_PROBE = """
import importlib, json, sys
failed = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"[:300]
print(json.dumps(failed))
"""


def _failed_imports(python: str, modules: tuple[str, ...]) -> dict[str, str]:
    """The modules that do not import in the venv (one interpreter, each import guarded)."""
    if not modules:
        return {}
    done = subprocess.run(
        [python, "-c", _IMPORT_PROBE, *modules],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg", "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    try:
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return dict.fromkeys(modules, f"import probe failed: {done.stderr[-300:]}")


def missing_modules(name: str) -> dict[str, str]:
    """What a prepared suite lacks: optional requirements that did not install and modules that do not
    import, with the reason; empty when all is there (or the suite is not prepared)."""
    path = env_dir(name) / MISSING_FILE
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


def pth_files(suite: str) -> list[str]:
    """`.pth` files in a suite venv: each one runs at every interpreter start (doctor reports them)."""
    return sorted(str(p.name) for p in env_dir(suite).glob("lib/python*/site-packages/*.pth"))
