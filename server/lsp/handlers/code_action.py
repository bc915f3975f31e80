"""textDocument/codeAction: per hunk accept / revert, revert all flagged; served from a cache that
belongs to one document version."""

from __future__ import annotations

from lsprotocol import types

from server.lsp.server import EditFidelityServer
from server.lsp.views import code_actions_for


def register(ls: EditFidelityServer) -> None:
    @ls.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: EditFidelityServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        state = ls.store.document(params.text_document.uri)
        if state is None:
            return []
        return code_actions_for(ls, state, state.current.client_uri, params.range, params.context)
