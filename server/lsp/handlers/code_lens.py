"""textDocument/codeLens: accept / accept minimal / reject per pending proposal; revert / dismiss for
an observed change."""

from __future__ import annotations

from lsprotocol import types

from server.lsp.views import code_lenses_for


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls, params: types.CodeLensParams):
        opened = ls.open_document(params.text_document.uri)
        if opened is None:
            return []
        return code_lenses_for(ls, opened[1])
