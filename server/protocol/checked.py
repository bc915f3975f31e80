"""What `edit-fidelity mcp` returns and `check --format sarif` reports: an edit judged as the editor shows it.

Every change unit with its kinds, whether it is flagged (a change nobody asked for), its severity and
message as the editor's diagnostic would carry them, and the new statements flagged inside units that hold
the requested fix. camelCase keys, as the rest of the wire; hunk kinds keep their snake_case values.
Made by `server.edit_check`.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from server.protocol.report import Distance
from server.protocol.settings import SEVERITY_KINDS

SeverityName = Literal["error", "warning", "information", "hint"]
SEVERITY_ORDER: tuple[SeverityName, ...] = ("hint", "information", "warning", "error")  # quiet to loud

# What each hunk kind means (the README's hunk-kinds section in one line each): the MCP resource and
# prompt and the SARIF rules' descriptions. The unrequested kinds' text is the severity setting's own.
KIND_DESCRIPTIONS: dict[str, str] = {
    **{kind: text for kind, (_, text) in SEVERITY_KINDS.items() if kind != "whitespace"},
    "formatting_only": "Reformatting that keeps the syntax tree (quotes, parentheses, wrapping, trailing commas, "
    "blank lines, indentation).",
    "comment_only": "Comments changed in place (not removed): usually part of the requested change.",
    "logic": "A change of behaviour: the requested change itself, or one that words alone cannot judge.",
}


class Lines(msgspec.Struct, frozen=True):
    """1-based, inclusive lines of one side; an empty range (`end = start - 1`) is the point where lines
    were removed or inserted."""

    start: int
    end: int


class Span(msgspec.Struct, rename="camel", frozen=True):
    """A unit's extent in the edited text: 1-based line and column (UTF-16 code units, LSP's and SARIF's
    default), the end exclusive; start == end where the unit only removed text."""

    start_line: int
    start_column: int
    end_line: int
    end_column: int


class CheckedUnit(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    """One change unit (finer than a line: a fix and a rename on one line are two)."""

    index: int
    kinds: list[str]  # what the change is (README: hunk kinds)
    flagged: bool  # a change nobody asked for (judged against the instruction when one is given)
    flagged_kinds: list[str]  # the kinds it is flagged for; empty when not flagged
    severity: SeverityName  # what the editor's diagnostic for this unit would be (every unit has one)
    message: str
    lines: Lines  # in the edited text
    original_lines: Lines  # in the original text
    span: Span | None  # in the edited text, from the unit's own edits; None when it has none
    tokens_changed: int  # token-level edit distance of this unit
    complexity_delta: int | None = None  # cognitive-complexity change of the function it touches


class CheckedStatement(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    """A new statement nobody asked for inside unit `unit`, which is not flagged itself (it holds the fix)."""

    unit: int
    lines: Lines  # in the edited text
    kinds: list[str]
    severity: SeverityName
    message: str


class CheckedEdit(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    """One edit judged: its units, the flagged statements, the counts, the distances."""

    summary: str  # one line: what an agent should read first
    flagged: int  # flagged units plus flagged statements
    by_severity: dict[str, int]  # flagged units and statements per severity name
    language: str  # python, javascript, ... or unsupported:<ext> (token distance only)
    identical: bool
    instruction: str | None  # what the units were judged against; None: every unrequested kind is flagged
    distance: Distance  # raw tokens (comments included)
    distance_no_comments: Distance  # the paper's variant: comments and layout normalised away
    units: list[CheckedUnit]
    statements: list[CheckedStatement]
    parse_errors: list[str]  # why a side does not parse (complexity and statements need it)


class CheckedFile(msgspec.Struct, rename="camel", frozen=True, kw_only=True, omit_defaults=True):
    """One file of `check_git`: a change between the revision and the working tree."""

    path: str  # relative to the top of the work tree; for a rename the new path
    status: str  # git's letter: A(dded, untracked included), M, D, R(enamed), T(ype changed)
    old_path: str | None = None
    similarity: int | None = None
    result: CheckedEdit | None = None
    error: str | None = None  # why it was not checked (binary, not UTF-8, too large, unreadable)


class CheckedRevision(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    """`check_git`: every changed file of the working tree against `revision`."""

    summary: str
    flagged: int  # over all files
    revision: str
    root: str  # the work tree's top directory
    files: list[CheckedFile]
