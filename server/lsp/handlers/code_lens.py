"""textDocument/codeLens: accept / accept minimal / reject per pending proposal; revert / dismiss for
an observed change."""

from __future__ import annotations

from lsprotocol import types

from server.lsp.server import EditFidelityServer
from server.lsp.views import code_lenses_for


def register(ls: EditFidelityServer) -> None:
    @ls.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: EditFidelityServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        state = ls.store.document(params.text_document.uri)
        if state is None:
            return []
        return code_lenses_for(ls, state)
