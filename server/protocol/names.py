"""Names shared by the server, the benchmark and the extension: commands, prompt styles, bug types,
severity levels, sandbox levels. Plain constants; the generator writes them into the extension."""

from __future__ import annotations

import enum


class Command(enum.StrEnum):
    """Every `workspace/executeCommand` the server registers."""

    REQUEST_EDIT = "editFidelity.requestEdit"
    APPLY_PROPOSAL = "editFidelity.applyProposal"
    COMPARE_BACKENDS = "editFidelity.compareBackends"
    CHECK_CHANGE = "editFidelity.checkChange"
    REJECT_PROPOSAL = "editFidelity.rejectProposal"
    REVERT_HUNKS = "editFidelity.revertHunks"
    SELECT_PROPOSAL = "editFidelity.selectProposal"
    DISMISS = "editFidelity.dismiss"
    TAKE_SNAPSHOT = "editFidelity.takeSnapshot"
    LIST_BACKENDS = "editFidelity.listBackends"
    SERVER_STATS = "editFidelity.serverStats"
    ANALYZE_NECESSITY = "editFidelity.analyzeNecessity"
    LOCATE_BUG = "editFidelity.locateBug"

    def __str__(self) -> str:
        return self.value


SECTION = "editFidelity"  # the settings section (initializationOptions, workspace/configuration)

# Prompt styles: ours (`generic`, `minimal`) and the papers' whole-document formats, which replay a
# benchmark's own prompt and are not offered in the editor.
STYLES = ("generic", "minimal", "canitedit-chat", "canitedit-direct", "bare")
WHOLE_DOCUMENT_STYLES = ("canitedit-chat", "canitedit-direct", "bare")
EDITOR_STYLES = tuple(s for s in STYLES if s not in WHOLE_DOCUMENT_STYLES)

# The seven bug types of the Bug In The Code Stack prompt, in the paper's order.
BUG_TYPES: tuple[str, ...] = (
    "missing_colon",
    "missing_parenthesis",
    "missing_quotation",
    "missing_comma",
    "mismatched_quotation",
    "mismatched_bracket",
    "keywords_as_identifier",
)

# LSP DiagnosticSeverity by name, as the `severity` setting takes them.
SEVERITY_NAMES = {"error": 1, "warning": 2, "information": 3, "hint": 4}
SeverityName = str  # one of SEVERITY_NAMES

# Where the server runs test commands: auto picks the strongest level that works; local (= none) has
# no isolation and must be chosen explicitly.
SANDBOXES = ("auto", "bwrap", "unshare", "docker", "local", "none")

# applyProposal / revertHunks refusals.
APPLY_REASONS = ("stale", "unknown", "error_proposal", "closed", "rejected", "unsupported", "nothing")
