"""textDocument/hover: the fidelity numbers of the proposal or observed change under the cursor."""

from __future__ import annotations

from lsprotocol import types

from server.lsp.server import EditFidelityServer
from server.lsp.views import hover_for


def register(ls: EditFidelityServer) -> None:
    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: EditFidelityServer, params: types.HoverParams) -> types.Hover | None:
        state = ls.store.document(params.text_document.uri)
        if state is None:
            return None
        text = hover_for(ls, state, params.position.line)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))
