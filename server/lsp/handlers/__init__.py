"""LSP handlers: a module per LSP method (`register(ls)`), and per command a `CommandHandler`
(server.lsp.command_handler) that the wire contract's `COMMANDS` table decodes for and dispatches to."""

from __future__ import annotations

from typing import Any

from server.lsp.command_handler import CommandHandler, register_commands
from server.lsp.handlers import code_action, code_lens, hover, lifecycle, sync
from server.lsp.handlers.analyze_necessity import AnalyzeNecessityHandler
from server.lsp.handlers.apply_proposal import ApplyProposalHandler
from server.lsp.handlers.check_change import CheckChangeHandler
from server.lsp.handlers.compare_backends import CompareBackendsHandler
from server.lsp.handlers.dismiss import DismissHandler
from server.lsp.handlers.list_backends import ListBackendsHandler
from server.lsp.handlers.locate_bug import LocateBugHandler
from server.lsp.handlers.reject_proposal import RejectProposalHandler
from server.lsp.handlers.request_edit import RequestEditHandler
from server.lsp.handlers.revert_hunks import RevertHunksHandler
from server.lsp.handlers.select_proposal import SelectProposalHandler
from server.lsp.handlers.server_stats import ServerStatsHandler
from server.lsp.handlers.take_snapshot import TakeSnapshotHandler
from server.lsp.server import EditFidelityServer

FEATURES = (lifecycle, sync, hover, code_lens, code_action)

# in the order `initialize` lists them (as before the handlers were split: kept for the same reply)
COMMAND_HANDLERS: tuple[CommandHandler[Any, Any], ...] = (
    RequestEditHandler(),
    ApplyProposalHandler(),
    CompareBackendsHandler(),
    CheckChangeHandler(),
    RejectProposalHandler(),
    DismissHandler(),
    RevertHunksHandler(),
    SelectProposalHandler(),
    TakeSnapshotHandler(),
    ListBackendsHandler(),
    ServerStatsHandler(),
    AnalyzeNecessityHandler(),
    LocateBugHandler(),
)


def register_all(ls: EditFidelityServer) -> None:
    for module in FEATURES:
        module.register(ls)
    register_commands(ls, COMMAND_HANDLERS)
