"""The parts every view is made of: the diagnostics' source, the commands lenses and actions run, a
unit's range in the buffer, a code action with the lines it belongs to, a versioned workspace edit.

Here, below the views and the handlers, so that each takes them without importing the other."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from server.lsp.lines import utf16_len
from server.lsp.unit_views import UnitView
from server.protocol.names import Command

SOURCE = "edit-fidelity"
CMD_APPLY = Command.APPLY_PROPOSAL.value
CMD_REJECT = Command.REJECT_PROPOSAL.value
CMD_REVERT = Command.REVERT_HUNKS.value
CMD_DISMISS = Command.DISMISS.value
CMD_SELECT = Command.SELECT_PROPOSAL.value


def unit_range(lines: Sequence[str], view: UnitView) -> types.Range:
    if view.span is not None:  # the unit's own extent (finer than lines)
        a, b = view.span
        return types.Range(start=types.Position(**a), end=types.Position(**b))
    start = view.start_line - 1
    if view.end_line < view.start_line:  # an insertion point / deleted lines: zero width
        if start < len(lines):
            pos = types.Position(line=start, character=0)
        elif lines:
            last = lines[-1]
            if last.endswith(("\n", "\r")):
                pos = types.Position(line=len(lines), character=0)
            else:
                pos = types.Position(line=len(lines) - 1, character=utf16_len(last))
        else:
            pos = types.Position(line=0, character=0)
        return types.Range(start=pos, end=pos)
    end = min(view.end_line, len(lines)) - 1
    end_text = lines[end].rstrip("\r\n") if 0 <= end < len(lines) else ""
    return types.Range(
        start=types.Position(line=max(start, 0), character=0),
        end=types.Position(line=max(end, 0), character=utf16_len(end_text)),
    )


@dataclass
class ActionEntry:
    lo: int  # 0-based line span the action belongs to
    hi: int
    action: types.CodeAction
    diagnostic_key: tuple[Any, ...]


def workspace_edit(uri: str, version: int, edits: list[dict[str, Any]]) -> types.WorkspaceEdit:
    """`edits` (wire TextEdits) as one edit of the document at `version`: the client refuses it when
    the buffer moved on."""
    text_edits = [
        types.TextEdit(
            range=types.Range(start=types.Position(**e["range"]["start"]), end=types.Position(**e["range"]["end"])),
            new_text=e["newText"],
        )
        for e in edits
    ]
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=text_edits,
            )
        ]
    )
