"""The edit-fidelity language server (pygls 2): commands, live fidelity warnings, backend comparison."""

from server.lsp.app import create_server
from server.lsp.server import EditFidelityServer

__all__ = ["EditFidelityServer", "create_server"]
