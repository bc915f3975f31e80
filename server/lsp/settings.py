"""Server settings: section `editFidelity` of initialization options and `workspace/configuration`.

Accepted at the top level of initializationOptions or under an `editFidelity` key. Unknown keys are
ignored; a wrong value keeps its default and yields a problem message for `window/showMessage`.

    {
      "backends": [{"name", "baseUrl", "model", "apiKeyEnv", "style", "temperature", "maxTokens",
                    "timeoutS", "maxConcurrency", "maxRetries"}],
      "defaultStyle": "minimal" | "generic",
      "observeChanges": true,
      "thresholds": {"largeChangeLines": 10, "debounceMs": 300, "largeFileLines": 1500,
                     "complexityWarning": 1, "complexityError": 5, "hunkTokensError": 60,
                     "distanceWarning": 0.3, "whitespaceHintLines": 10},
      "severity": {"whitespace": "hint", "rename": "warning", ...},  // per unrequested kind
      "sandbox": "auto" | "bwrap" | "unshare" | "docker" | "local" (= "none") | null,  // where tests run
      "testCommand": "python -m pytest -x tests/test_x.py" | ["python", "-m", "unittest"] | null,
      "necessity": {"maxRuns": 32, "parallel": 2, "timeoutS": 60, "environment": null,
                    "packages": ["numpy==2.4.6", ...],  // into the server's test environment (has pytest)
                    "include": ["*.py", ...], "maxFiles": 2000, "maxBytes": 20000000},
      "localModel": "local" | "local:PATH" | "local:HUB_ID" | null
    }

With no backends configured (none given, or an empty list) the embedded CPU model `localModel`
(default: `local`, a small coder model downloaded on first use) is the one backend, named "local",
when the optional dependencies are installed (`pip install 'edit-fidelity[local]'`); null turns
that off.
"""

from __future__ import annotations

import math
import re
import shlex
from typing import Any

import msgspec

from server.backends.config import (
    STYLES,
    BackendConfig,
    ConfigError,
    parse_backend,
    parse_backends,
)
from server.backends.local_spec import dependency_problem, is_local_spec
from server.fidelity.flags import SEVERITY_DEFAULTS, WHITESPACE_HINT_LINES

SECTION = "editFidelity"


class Thresholds(msgspec.Struct, frozen=True):
    large_change_lines: int = 10  # one didChange replacing more lines than this is observed
    debounce_ms: int = 300
    large_file_lines: int = 1500  # above this, observed changes are measured per function window
    complexity_warning: float = 1.0  # cognitive-complexity increase worth mentioning
    complexity_error: float = 5.0  # ... that makes a flagged hunk an error
    hunk_tokens_error: int = 60  # an unrequested hunk this large is an error, not a warning
    distance_warning: float = 0.3  # normalised no_comments distance that marks a proposal as heavy
    whitespace_hint_lines: int = WHITESPACE_HINT_LINES  # a whitespace-only unit spanning more lines than this is not a hint
    severity: dict[str, int] = {}  # unrequested kind (or "whitespace") -> LSP severity; see SEVERITY_DEFAULTS

    def severity_levels(self) -> dict[str, int]:
        return {**SEVERITY_DEFAULTS, **self.severity}


# How loud a flagged unit is (LSP DiagnosticSeverity); the per-kind defaults (whitespace-only units are a
# hint) are in server.fidelity.flags, which the benchmark shares.
SEVERITY_NAMES = {"error": 1, "warning": 2, "information": 3, "hint": 4}


def _parse_severity(raw: Any, problems: list[str]) -> dict[str, int]:
    """`severity: {kind: "error" | "warning" | "information" | "hint"}`; a bad entry keeps its default."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problems.append(f"severity must be an object of kind: level, got {type(raw).__name__}")
        return {}
    out: dict[str, int] = {}
    for kind, level in raw.items():
        if kind not in SEVERITY_DEFAULTS:
            problems.append(f"severity.{kind}: unknown kind; known: {', '.join(SEVERITY_DEFAULTS)}")
        elif level not in SEVERITY_NAMES:
            problems.append(f"severity.{kind} must be one of {', '.join(SEVERITY_NAMES)}, got {level!r}")
        else:
            out[kind] = SEVERITY_NAMES[level]
    return out


_THRESHOLD_KEYS = {
    "largeChangeLines": ("large_change_lines", int, 1, 10**7),
    "debounceMs": ("debounce_ms", int, 0, 60_000),
    "largeFileLines": ("large_file_lines", int, 10, 10**8),
    "complexityWarning": ("complexity_warning", float, 0, 10**6),
    "complexityError": ("complexity_error", float, 0, 10**6),
    "hunkTokensError": ("hunk_tokens_error", int, 1, 10**9),
    "distanceWarning": ("distance_warning", float, 0, 1),
    "whitespaceHintLines": ("whitespace_hint_lines", int, 0, 10**7),
}


# Workspace files copied into the sandbox for the test command (fnmatch over the path relative to
# the workspace root; `*` crosses folders).
NECESSITY_INCLUDE = ("*.py", "*.pyi", "pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini")


class NecessitySettings(msgspec.Struct, frozen=True):
    """editFidelity.analyzeNecessity: its runs of `testCommand` in the sandbox."""

    max_runs: int = 32  # test runs per analysis
    parallel: int = 2  # runs at once
    timeout_s: float = 60.0  # per run
    environment: str | None = None  # a prepared sandbox environment (`sandbox prepare --suite NAME`)
    # pip requirements for the server's own test environment (pytest is always in it); not with `environment`
    packages: tuple[str, ...] = ()
    include: tuple[str, ...] = NECESSITY_INCLUDE
    max_files: int = 2000
    max_bytes: int = 20_000_000


_NECESSITY_KEYS = {
    "maxRuns": ("max_runs", int, 1, 1000),
    "parallel": ("parallel", int, 1, 64),
    "timeoutS": ("timeout_s", float, 0.1, 3600),
    "maxFiles": ("max_files", int, 1, 10**6),
    "maxBytes": ("max_bytes", int, 1, 10**10),
}


def _parse_necessity(raw: Any, problems: list[str]) -> NecessitySettings:
    if raw is None:
        return NecessitySettings()
    if not isinstance(raw, dict):
        problems.append(f"necessity must be an object, got {type(raw).__name__}")
        return NecessitySettings()
    values: dict[str, Any] = {}
    for key, (field, kind, lo, hi) in _NECESSITY_KEYS.items():
        v = raw.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi \
                or (kind is int and v != int(v)):
            problems.append(f"necessity.{key} must be a number between {lo} and {hi}, got {v!r}")
            continue
        values[field] = kind(v)
    env = raw.get("environment")
    if env is not None and not (isinstance(env, str) and env.strip()):
        problems.append(f"necessity.environment must be a sandbox environment name, got {env!r}")
    elif env is not None:
        values["environment"] = env.strip()
    packages = raw.get("packages")
    if packages is not None:
        bad = _bad_requirement(packages)
        if bad:
            problems.append(bad)
        elif packages and values.get("environment"):
            problems.append("necessity.packages go into the server's own test environment: leave "
                            "necessity.environment unset to use them (a prepared environment is used as it is)")
        else:
            values["packages"] = tuple(p.strip() for p in packages)
    include = raw.get("include")
    if include is not None and not (isinstance(include, list) and include and all(isinstance(x, str) and x for x in include)):
        problems.append("necessity.include must be a non-empty array of file patterns")
    elif include is not None:
        values["include"] = tuple(include)
    return NecessitySettings(**values)


# A PEP 508 requirement: a name, extras, version specifiers or `@ URL`, markers. No pip options
# (`-r`, `--index-url`, `-e`): the packages are requirements, not a pip command line.
_VERSION = r"(?:===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9.*+!_-]+"
_REQUIREMENT = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\s*\[\s*[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\s*\])?"
    rf"\s*(?:{_VERSION}(?:\s*,\s*{_VERSION})*|@\s*\S+)?\s*(?:;[^\n]*)?")


def _bad_requirement(packages: Any) -> str | None:
    if not isinstance(packages, list) or not all(isinstance(p, str) for p in packages):
        return f"necessity.packages must be an array of pip requirements like \"numpy==2.4.6\", got {packages!r}"[:200]
    if len(packages) > 200:
        return "necessity.packages: at most 200 requirements"
    for p in packages:
        if len(p) > 500 or not _REQUIREMENT.fullmatch(p.strip()):
            return (f"necessity.packages: {p[:80]!r} is not a pip requirement (a name with optional extras, "
                    "versions or `@ URL`; no pip options)")
    return None


def _parse_test_command(raw: Any, problems: list[str]) -> tuple[str, ...] | None:
    """`testCommand` as an argv: a string is split like a shell would (no shell runs it)."""
    if raw is None:
        return None
    if isinstance(raw, str):
        try:
            argv = shlex.split(raw)
        except ValueError as exc:
            problems.append(f"testCommand: {exc}")
            return None
    elif isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        argv = list(raw)
    else:
        problems.append(f"testCommand must be a string or an array of strings, got {raw!r}"[:200])
        return None
    if not argv:
        problems.append("testCommand is empty")
        return None
    return tuple(argv)


class Settings(msgspec.Struct, frozen=True):
    backends: list[BackendConfig] = []
    default_style: str = "minimal"
    observe_changes: bool = True
    thresholds: Thresholds = Thresholds()
    sandbox: str | None = None
    local_model: str | None = "local"  # the default backend when none is configured; None: none
    test_command: tuple[str, ...] | None = None  # the workspace's tests, run in the sandbox (necessity)
    necessity: NecessitySettings = NecessitySettings()


def default_backend(model: str) -> tuple[BackendConfig | None, str | None]:
    """The embedded model as the only backend, or None (and why, when it is a mistake in settings)."""
    if dependency_problem():  # not installed: no default; the "no backends" error says how to get it
        return None, None
    try:
        return parse_backend({"name": "local", "model": model}), None
    except ConfigError as exc:
        return None, f"localModel: {exc}"


def extract_section(options: Any) -> dict:
    """The settings object from initialization options: `{"editFidelity": {...}}` or `{...}`."""
    if not isinstance(options, dict):
        return {}
    inner = options.get(SECTION)
    if isinstance(inner, dict):
        merged = {k: v for k, v in options.items() if k != SECTION}
        merged.update(inner)
        return merged
    return dict(options)


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    problems: list[str] = []
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return Settings(), [f"settings must be an object, got {type(raw).__name__}"]
    raw = extract_section(raw)
    backends, bad = parse_backends(raw.get("backends"))
    problems.extend(bad)

    style = raw.get("defaultStyle", "minimal")
    if style not in STYLES:
        problems.append(f"defaultStyle must be one of {', '.join(STYLES)}, got {style!r}")
        style = "minimal"

    observe = raw.get("observeChanges", True)
    if not isinstance(observe, bool):
        problems.append(f"observeChanges must be true or false, got {observe!r}")
        observe = True

    values: dict[str, Any] = {}
    th = raw.get("thresholds")
    if th is not None and not isinstance(th, dict):
        problems.append(f"thresholds must be an object, got {type(th).__name__}")
        th = None
    for key, (field, kind, lo, hi) in _THRESHOLD_KEYS.items():
        if th is None or key not in th or th[key] is None:
            continue
        v = th[key]
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and lo <= v <= hi
        if ok and kind is int and v != int(v):
            ok = False
        if not ok:
            problems.append(f"thresholds.{key} must be a number between {lo} and {hi}, got {v!r}")
            continue
        values[field] = kind(v)

    sandbox = raw.get("sandbox")
    if sandbox is not None and not isinstance(sandbox, str):
        problems.append(f"sandbox must be a string, got {sandbox!r}")
        sandbox = None

    local_model = raw.get("localModel", "local")
    if local_model is not None and not (isinstance(local_model, str) and is_local_spec(local_model)):
        problems.append(f"localModel must be local, local:PATH, local:HUB_ID or null, got {local_model!r}")
        local_model = "local"
    if not raw.get("backends") and local_model is not None:  # nothing configured: the embedded model
        default, problem = default_backend(local_model)
        backends = [default] if default is not None else []
        problems.extend([problem] if problem else [])

    return (
        Settings(
            backends=backends,
            default_style=style,
            observe_changes=observe,
            thresholds=Thresholds(**values, severity=_parse_severity(raw.get("severity"), problems)),
            sandbox=sandbox,
            local_model=local_model,
            test_command=_parse_test_command(raw.get("testCommand"), problems),
            necessity=_parse_necessity(raw.get("necessity"), problems),
        ),
        problems,
    )
