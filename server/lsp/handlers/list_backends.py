"""`editFidelity.listBackends` {} -> {backends, defaultStyle, problems}: the configuration as the server sees
it (never a key: only the name of the variable that holds it)."""

from __future__ import annotations

from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.protocol.commands import ListBackendsResult, NoArgs
from server.protocol.names import Command


class ListBackendsHandler:
    name = Command.LIST_BACKENDS

    async def run(self, ls: EditFidelityServer, args: NoArgs, work_done: WorkDoneToken) -> ListBackendsResult:
        return ListBackendsResult(
            backends=[b.config.describe() for n in ls.pool.names() if (b := ls.pool.get(n)) is not None],
            default_style=ls.settings.default_style,
            problems=list(ls.config_problems),
        )
