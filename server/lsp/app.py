"""The language server with every handler registered: what `edit-fidelity serve` runs."""

from __future__ import annotations

from server.lsp.handlers import register_all
from server.lsp.server import EditFidelityServer


def create_server() -> EditFidelityServer:
    ls = EditFidelityServer()
    register_all(ls)
    return ls
