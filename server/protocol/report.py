"""The fidelity report: what `server.fidelity.measure` returns, the server sends in `report` fields and
`edit-fidelity check --format json` prints. One definition for the core, the wire, the benchmark and (through
the generator) the extension: camelCase keys (`rename="camel"`), so encoding gives the wire form directly.
Map keys are data and keep their spelling (distance variants such as `no_comments`, a rename's identifiers).

Line numbers in hunks and functions are 1-based and inclusive. An empty range (an insertion point)
has ``end_line == start_line - 1``: nothing is replaced, new lines go in before ``start_line``.
Text edits use LSP conventions instead: 0-based lines and UTF-16 code-unit columns.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

MAX_INT = 2**31 - 1
Count = Annotated[int, Meta(ge=0, le=MAX_INT)]

VARIANTS = ("raw", "no_comments", "body_no_comments")

# Hunk kinds. Everything but `logic` and `comment_only` is a change nobody asked for unless the
# instruction says so; the server decides what to flag, the core only describes. `added_code` is the
# judge's, never the core's: new definitions (functions, methods, classes) that the instruction does not
# ask for and no other code uses, a verbatim second copy of existing code, output nobody asked for;
# `comment_added` is the judge's too: a comment added on code the edit does not change. Both need an
# instruction.
HUNK_KINDS = (
    "formatting_only",
    "comment_removed",
    "comment_only",
    "rename",
    "docstring",
    "signature_change",
    "import_change",
    "defensive",
    "lazy_placeholder",
    "deletion",
    "outside_target",
    "added_code",
    "comment_added",
    "logic",
)
UNREQUESTED_KINDS = frozenset(HUNK_KINDS) - {"logic", "comment_only"}

# A complexity figure as measured: the counts (paper, sonar, cyclomatic) are integers, the maintainability
# index a float; `int | float` keeps each as the core made it (a plain `float` would decode 3 as 3.0).
Number = int | float


class Position(msgspec.Struct, frozen=True):
    line: Count
    character: Count


class Range(msgspec.Struct, frozen=True):
    start: Position
    end: Position

    def __post_init__(self) -> None:
        if (self.end.line, self.end.character) < (self.start.line, self.start.character):
            raise ValueError("ends before it starts")


class TextEdit(msgspec.Struct, rename="camel", frozen=True):
    """An LSP TextEdit (0-based lines, UTF-16 columns) against the original text."""

    range: Range
    new_text: str


class Distance(msgspec.Struct, frozen=True):
    tokens: int
    normalized: float


class ComplexityDelta(msgspec.Struct, frozen=True, omit_defaults=True):
    """A whole-file complexity before and after; all three are None where the code does not parse.

    `reason` says why a metric is None by construction (the paper's metric and radon's index exist
    for Python only; an unsupported language has none); omitted when absent, so Python's records
    read as before."""

    before: Number | None
    after: Number | None
    delta: Number | None
    reason: str | None = None


class Hunk(msgspec.Struct, rename="camel", frozen=True):
    """One change unit: accepted or reverted as a whole, independently of the others.

    A unit is finer than lines (a fix and a rename on one line are two units) and a consistent rename
    is one unit over all its occurrences, so its `edits` may be several text edits.
    """

    start_line: int  # original side (the first and last line any of its edits touches)
    end_line: int
    new_start_line: int  # edited side
    new_end_line: int
    kinds: list[str]
    tokens_changed: int
    unrequested: bool
    message: str
    renames: dict[str, str] = {}
    edits: list[TextEdit] = []  # the unit's own minimal edits against the original (never overlap another's)
    names: list[str] = []  # identifiers among the changed tokens, both sides, in order of appearance
    functions: list[str] = []  # innermost enclosing functions (qualified), original side first
    # per edit: [old_lo, old_hi, new_lo, new_hi], raw token indices of the changed code tokens (-1: none)
    token_spans: list[list[int]] = []


class FunctionChange(msgspec.Struct, rename="camel", frozen=True):
    name: str  # qualified: Class.method
    status: str  # changed | added | removed | unparseable (its side does not parse around it)
    start_line: int | None  # original side; None when added
    end_line: int | None
    new_start_line: int | None  # edited side; None when removed
    new_end_line: int | None
    tokens_changed: int
    cognitive_before: int | None
    cognitive_after: int | None
    sonar_before: int | None
    sonar_after: int | None
    cyclomatic_before: int | None
    cyclomatic_after: int | None


class ParseStatus(msgspec.Struct, frozen=True):
    original: str | None  # None when it parses, else the SyntaxError message
    edited: str | None


class FidelityReport(msgspec.Struct, rename="camel", frozen=True):
    """How faithfully an edit kept the original: distances, excess over a gold edit, complexity, change units."""

    distance: dict[str, Distance]
    excess: dict[str, float] | None
    gold_distance: dict[str, Distance] | None
    complexity: dict[str, ComplexityDelta]  # paper, sonar, cyclomatic, maintainability
    hunks: list[Hunk]
    functions: list[FunctionChange]
    edits: list[TextEdit]
    parse_errors: ParseStatus
    identical: bool
    # `raw` and `no_comments` distances with the damage of a side that does not tokenise or parse kept
    # to its top-level statements (each tokenised and normalised alone, a broken one scanned with the
    # tokenizer's token pattern); `distance` itself when both sides parse
    localized_distance: dict[str, Distance] | None = None
    # the gold edit's own complexity change (original -> gold), measured with `gold`: what a suite needs
    # beside `gold_distance` (added complexity = the edit's `after` minus the gold's), so it re-measures
    # nothing; None without a gold
    gold_complexity: dict[str, ComplexityDelta] | None = None
    # what the text was measured as: "python" (the paper-compatible path), a language-layer name
    # ("javascript", "typescript", "tsx", "java", "c", "cpp", "go", "rust") or "unsupported:<id>"
    # (token distance only)
    language: str = "python"

    def unit_edits(self, units: list[int] | range | None = None) -> list[TextEdit]:
        """The text edits of the chosen units (all when None): apply them to accept exactly those."""
        chosen = range(len(self.hunks)) if units is None else units
        return [e for i in chosen for e in self.hunks[i].edits]
