"""textDocument/hover: the fidelity numbers of the proposal or observed change under the cursor."""

from __future__ import annotations

from lsprotocol import types

from server.lsp.views import hover_for


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls, params: types.HoverParams):
        opened = ls.open_document(params.text_document.uri)
        if opened is None:
            return None
        _, state = opened
        text = hover_for(ls, state, params.position.line)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))
