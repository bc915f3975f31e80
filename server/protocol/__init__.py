"""The wire contract: command names, every command's arguments and results, the settings.

Depends on msgspec and the standard library only, so `server`, `benchmark` and the generator of the
extension's types (`python -m server.protocol.generate`) all take it from here. Wire names are
camelCase (LSP's convention); see server/lsp/PROTOCOL.md.
"""

from server.protocol.commands import COMMANDS
from server.protocol.decode import DecodeError, convert, convert_fields
from server.protocol.names import (
    BUG_TYPES,
    EDITOR_STYLES,
    SANDBOXES,
    SECTION,
    SEVERITY_NAMES,
    STYLES,
    WHOLE_DOCUMENT_STYLES,
    Command,
)

__all__ = [
    "BUG_TYPES",
    "COMMANDS",
    "EDITOR_STYLES",
    "SANDBOXES",
    "SECTION",
    "SEVERITY_NAMES",
    "STYLES",
    "WHOLE_DOCUMENT_STYLES",
    "Command",
    "DecodeError",
    "convert",
    "convert_fields",
]
