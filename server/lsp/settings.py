"""Server settings: section `editFidelity` of initialization options and `workspace/configuration`.

Accepted at the top level of initializationOptions or under an `editFidelity` key. The schema is
server.protocol.settings (the extension's package.json is generated from it); each field is decoded on
its own (server.protocol.decode), so unknown keys are ignored and a wrong value keeps its default and
yields a problem message for `window/showMessage`.

The fields, their defaults and bounds are SettingsWire's (server/protocol/settings.py); PROTOCOL.md
shows them as JSON. Here they become what the server runs with: backends resolved (the embedded
model's spec and timeout), `severity` names as LSP severities, `testCommand` as an argv.

With no backends configured (none given, or an empty list) the embedded CPU model `localModel`
(default: `local`, a small coder model downloaded on first use) is the one backend, named "local",
when the optional dependencies are installed (`pip install 'edit-fidelity[local]'`); null turns
that off.
"""

from __future__ import annotations

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
from server.fidelity.judge.flags import SEVERITY_DEFAULTS, WHITESPACE_HINT_LINES
from server.protocol import settings as wire
from server.protocol.decode import convert_fields
from server.protocol.names import SECTION, SEVERITY_NAMES
from server.protocol.settings import NECESSITY_INCLUDE, NecessitySettings

__all__ = [
    "NECESSITY_INCLUDE",
    "SECTION",
    "SEVERITY_DEFAULTS",
    "SEVERITY_NAMES",
    "STYLES",
    "WHITESPACE_HINT_LINES",
    "NecessitySettings",
    "Settings",
    "Thresholds",
    "default_backend",
    "extract_section",
    "parse_settings",
]


class Thresholds(wire.Thresholds, frozen=True, kw_only=True):
    """The wire thresholds plus the `severity` setting as LSP severities."""

    severity: dict[str, int] = {}  # noqa: RUF012 - msgspec copies it; unrequested kind (or "whitespace") -> LSP severity; see SEVERITY_DEFAULTS

    def severity_levels(self) -> dict[str, int]:
        return {**SEVERITY_DEFAULTS, **self.severity}


def _parse_severity(raw: Any, problems: list[str]) -> dict[str, int]:
    """`severity: {kind: "error" | "warning" | "information" | "hint"}`; a bad entry keeps its default."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problems.append(f"severity must be an object of kind: level, got {type(raw).__name__}")
        return {}
    out: dict[str, int] = {}
    for kind, level in raw.items():  # in the given order, so the problems are too
        if kind not in SEVERITY_DEFAULTS:
            problems.append(f"severity.{kind}: unknown kind; known: {', '.join(SEVERITY_DEFAULTS)}")
            continue
        values, bad = convert_fields({kind: level}, wire.Severity, "severity")
        problems.extend(bad)
        out.update((k, SEVERITY_NAMES[v]) for k, v in values.items())
    return out


def _parse_necessity(raw: Any, problems: list[str]) -> NecessitySettings:
    if raw is None:
        return NecessitySettings()
    if not isinstance(raw, dict):
        problems.append(f"necessity must be an object, got {type(raw).__name__}")
        return NecessitySettings()
    packages = raw.get("packages")
    bad = _bad_requirement(packages) if packages is not None else None
    if bad:
        problems.append(bad)
    values, field_problems = convert_fields(
        {k: v for k, v in raw.items() if k != "packages" or not bad}, NecessitySettings, "necessity"
    )
    problems.extend(field_problems)
    if "environment" in values:
        values["environment"] = values["environment"].strip()
    if values.get("packages"):
        if values.get("environment"):
            problems.append(
                "necessity.packages go into the server's own test environment: leave "
                "necessity.environment unset to use them (a prepared environment is used as it is)"
            )
            del values["packages"]
        else:
            values["packages"] = tuple(p.strip() for p in values["packages"])
    return NecessitySettings(**values)


# A PEP 508 requirement: a name, extras, version specifiers or `@ URL`, markers. No pip options
# (`-r`, `--index-url`, `-e`): the packages are requirements, not a pip command line.
_VERSION = r"(?:===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9.*+!_-]+"
_REQUIREMENT = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\s*\[\s*[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\s*\])?"
    rf"\s*(?:{_VERSION}(?:\s*,\s*{_VERSION})*|@\s*\S+)?\s*(?:;[^\n]*)?"
)


def _bad_requirement(packages: Any) -> str | None:
    if not isinstance(packages, list) or not all(isinstance(p, str) for p in packages):
        return f'necessity.packages must be an array of pip requirements like "numpy==2.4.6", got {packages!r}'[:200]
    if len(packages) > 200:
        return "necessity.packages: at most 200 requirements"
    for p in packages:
        if len(p) > 500 or not _REQUIREMENT.fullmatch(p.strip()):
            return (
                f"necessity.packages: {p[:80]!r} is not a pip requirement (a name with optional extras, "
                "versions or `@ URL`; no pip options)"
            )
    return None


def _parse_test_command(raw: Any, problems: list[str]) -> tuple[str, ...] | None:
    """`testCommand` as an argv: a string is split like a shell would (no shell runs it)."""
    if isinstance(raw, str):
        try:
            argv = shlex.split(raw)
        except ValueError as exc:
            problems.append(f"testCommand: {exc}")
            return None
    elif isinstance(raw, list):
        argv = list(raw)
    else:  # absent, or refused by the schema (the problem is already reported)
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


# Settings decoded by their own rules below rather than field by field.
_OWN_RULES = ("backends", "thresholds", "severity", "necessity", "localModel")


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    problems: list[str] = []
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return Settings(), [f"settings must be an object, got {type(raw).__name__}"]
    raw = extract_section(raw)
    backends, bad = parse_backends(raw.get("backends"))
    problems.extend(bad)

    top, bad = convert_fields({k: v for k, v in raw.items() if k not in _OWN_RULES}, wire.SettingsWire, "")
    problems.extend(bad)

    th = raw.get("thresholds")
    if th is not None and not isinstance(th, dict):
        problems.append(f"thresholds must be an object, got {type(th).__name__}")
        th = None
    values, bad = convert_fields(th or {}, wire.Thresholds, "thresholds")
    problems.extend(bad)

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
            default_style=top.get("default_style", "minimal"),
            observe_changes=top.get("observe_changes", True),
            thresholds=Thresholds(**values, severity=_parse_severity(raw.get("severity"), problems)),
            sandbox=top.get("sandbox"),
            local_model=local_model,
            test_command=_parse_test_command(top.get("test_command"), problems),
            necessity=_parse_necessity(raw.get("necessity"), problems),
        ),
        problems,
    )
