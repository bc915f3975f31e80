"""`edit-fidelity check --format sarif`: the flagged units of checked edits as a SARIF 2.1.0 log.

One result per flagged unit and per flagged statement, located in the edited file (the working-tree file
for `--git`), with the editor's message; one rule per hunk kind (the result's rule is the first kind it is
flagged for, every kind in its properties). Files that could not be checked are tool notifications, not
results. Code-scanning services (GitHub's `upload-sarif`) read it as they read any linter's log.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from urllib.parse import quote

import msgspec

from server.protocol.checked import KIND_DESCRIPTIONS, CheckedEdit, Lines, Span
from server.protocol.report import HUNK_KINDS, UNREQUESTED_KINDS
from server.protocol.settings import SEVERITY_KINDS

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
# SARIF's levels: information and hint are both notes (the result's properties keep which)
LEVELS = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
# the kinds a unit can be flagged for, and a rule for a unit the judge flags without naming one of them
RULE_KINDS = (*(k for k in HUNK_KINDS if k in UNREQUESTED_KINDS), "unrequested")
_DESCRIPTIONS = {**KIND_DESCRIPTIONS, "unrequested": "A change the instruction does not ask for."}


class _S(msgspec.Struct, rename="camel", omit_defaults=True, frozen=True):
    """SARIF objects: camelCase properties, absent rather than null."""


class Message(_S, frozen=True, kw_only=True):
    text: str


class MultiformatMessage(_S, frozen=True, kw_only=True):
    text: str
    markdown: str | None = None


class ArtifactLocation(_S, frozen=True, kw_only=True):
    uri: str
    uri_base_id: str | None = None


class Region(_S, frozen=True, kw_only=True):
    start_line: int
    start_column: int | None = None
    end_line: int | None = None
    end_column: int | None = None


class PhysicalLocation(_S, frozen=True, kw_only=True):
    artifact_location: ArtifactLocation
    region: Region | None = None


class Location(_S, frozen=True, kw_only=True):
    physical_location: PhysicalLocation


class Result(_S, frozen=True, kw_only=True):
    rule_id: str
    rule_index: int
    level: str
    message: Message
    locations: list[Location]
    properties: dict[str, object] = {}


class Configuration(_S, frozen=True, kw_only=True):
    level: str


class Rule(_S, frozen=True, kw_only=True):
    id: str
    name: str
    short_description: Message
    full_description: Message
    help: MultiformatMessage
    default_configuration: Configuration
    properties: dict[str, object] = {}


class Driver(_S, frozen=True, kw_only=True):
    name: str
    version: str
    semantic_version: str
    information_uri: str | None = None
    rules: list[Rule]


class Tool(_S, frozen=True, kw_only=True):
    driver: Driver


class Notification(_S, frozen=True, kw_only=True):
    level: str
    message: Message
    locations: list[Location] = []


class Invocation(_S, frozen=True, kw_only=True):
    execution_successful: bool
    tool_execution_notifications: list[Notification] = []


class BaseUri(_S, frozen=True, kw_only=True):
    uri: str


class Run(_S, frozen=True, kw_only=True):
    tool: Tool
    invocations: list[Invocation]
    original_uri_base_ids: dict[str, BaseUri]
    column_kind: str
    results: list[Result]


class Log(_S, frozen=True, kw_only=True, rename={"schema": "$schema"}):
    schema: str  # written out although they are constants: omit_defaults would drop defaults
    version: str
    runs: list[Run]


class Checked(msgspec.Struct, frozen=True):
    """One file for the log: its path relative to `root` and what was found, or why it was not checked."""

    path: str
    result: CheckedEdit | None
    error: str | None = None


def rules() -> list[Rule]:
    out = []
    for kind in RULE_KINDS:
        default = SEVERITY_KINDS.get(kind, ("warning", ""))[0]
        text = _DESCRIPTIONS[kind]
        title = kind.replace("_", " ")
        out.append(
            Rule(
                id=kind,
                name="Unrequested" + "".join(w.capitalize() for w in kind.split("_")),
                short_description=Message(text=f"Unrequested change: {title}"),
                full_description=Message(text=text),
                help=MultiformatMessage(
                    text=f"{text} A change of this kind that the task did not ask for: "
                    "revert it, or keep it on purpose and say why in the change's description.",
                ),
                default_configuration=Configuration(level=LEVELS[default]),
                properties={"tags": ["edit-fidelity", "maintainability"]},
            )
        )
    return out


def sarif_log(files: Sequence[Checked], root: Path) -> Log:
    """The log of `files` (paths relative to `root`, the `%SRCROOT%` of every location)."""
    index = {kind: i for i, kind in enumerate(RULE_KINDS)}
    results: list[Result] = []
    notes: list[Notification] = []
    for f in files:
        artifact = ArtifactLocation(uri=_uri(f.path), uri_base_id=SRCROOT)
        if f.result is None:
            notes.append(
                Notification(
                    level="warning",
                    message=Message(text=f"{f.path}: not checked: {f.error}"),
                    locations=[Location(physical_location=PhysicalLocation(artifact_location=artifact))],
                )
            )
            continue
        for u in f.result.units:
            if u.flagged:
                results.append(
                    _result(u.flagged_kinds, u.severity, u.message, artifact, _region(u.span, u.lines), index)
                )
        for s in f.result.statements:
            region = Region(start_line=max(s.lines.start, 1), end_line=max(s.lines.end, s.lines.start, 1))
            results.append(_result(s.kinds, s.severity, s.message, artifact, region, index, unit=s.unit))
    try:
        own = version("edit-fidelity")
    except PackageNotFoundError:  # run from a checkout that is not installed
        own = "0.0.0"
    run = Run(
        tool=Tool(driver=Driver(name="edit-fidelity", version=own, semantic_version=own, rules=rules())),
        invocations=[Invocation(execution_successful=True, tool_execution_notifications=notes)],
        original_uri_base_ids={SRCROOT: BaseUri(uri=root.resolve().as_uri().rstrip("/") + "/")},
        column_kind="utf16CodeUnits",
        results=results,
    )
    return Log(schema=SCHEMA_URI, version="2.1.0", runs=[run])


def write(files: Sequence[Checked], root: Path) -> None:
    sys.stdout.write(msgspec.json.encode(sarif_log(files, root)).decode() + "\n")


def _result(
    kinds: Sequence[str],
    severity: str,
    message: str,
    artifact: ArtifactLocation,
    region: Region,
    index: dict[str, int],
    *,
    unit: int | None = None,
) -> Result:
    rule = next((k for k in kinds if k in index), "unrequested")
    props: dict[str, object] = {"severity": severity, "kinds": list(kinds)}
    if unit is not None:
        props["unit"] = unit
    return Result(
        rule_id=rule,
        rule_index=index[rule],
        level=LEVELS[severity],
        message=Message(text=message),
        locations=[Location(physical_location=PhysicalLocation(artifact_location=artifact, region=region))],
        properties=props,
    )


def _region(span: Span | None, lines: Lines) -> Region:
    if span is not None:
        return Region(
            start_line=span.start_line,
            start_column=span.start_column,
            end_line=span.end_line,
            end_column=span.end_column,
        )
    start = max(lines.start, 1)
    return Region(start_line=start, end_line=max(lines.end, start))


def _uri(path: str) -> str:
    """A relative URI reference for a path relative to the root (forward slashes, percent-encoded)."""
    return quote(Path(path).as_posix(), safe="/")
