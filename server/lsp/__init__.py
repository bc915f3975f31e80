"""The edit-fidelity language server (pygls 2): commands, live fidelity warnings, backend comparison."""

from server.lsp.server import EditFidelityServer, create_server

__all__ = ["EditFidelityServer", "create_server"]
