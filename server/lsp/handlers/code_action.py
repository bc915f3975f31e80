"""textDocument/codeAction: per hunk accept / revert, revert all flagged; served from a cache that
belongs to one document version."""

from __future__ import annotations

from lsprotocol import types

from server.lsp.views import code_actions_for


def register(ls) -> None:
    @ls.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls, params: types.CodeActionParams):
        opened = ls.open_document(params.text_document.uri)
        if opened is None:
            return []
        doc, state = opened
        return code_actions_for(ls, state, doc.uri, params.range, params.context)
