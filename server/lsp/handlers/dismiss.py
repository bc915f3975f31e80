"""`editFidelity.dismiss` {uri} -> {dismissed}: hide the observed-change warnings of the document."""

from __future__ import annotations

from server.lsp.args import named_document
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.lsp.views import publish
from server.protocol.commands import DismissResult, UriArgs
from server.protocol.names import Command


class DismissHandler:
    name = Command.DISMISS

    async def run(self, ls: EditFidelityServer, args: UriArgs, work_done: WorkDoneToken) -> DismissResult:
        state = named_document(ls.store, self.name.value, args.uri)
        state.dismissed = True
        state.observe_baseline = None
        if state.observe_task is not None:
            state.observe_task.cancel()
        publish(ls, state.uri)
        ls.refresh_code_lenses()
        return DismissResult(dismissed=True)
