"""`editFidelity.selectProposal` {uri, id} -> {active}: the pending proposal the diagnostics, lenses, hover
and code actions show (one at a time)."""

from __future__ import annotations

from server.lsp.args import InvalidArgs, named_document
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.lsp.views import publish
from server.protocol.commands import SelectProposalArgs, SelectResult
from server.protocol.names import Command


class SelectProposalHandler:
    name = Command.SELECT_PROPOSAL

    async def run(self, ls: EditFidelityServer, args: SelectProposalArgs, work_done: WorkDoneToken) -> SelectResult:
        cmd = self.name.value
        state = named_document(ls.store, cmd, args.uri)
        pid = args.id
        pending = ls.store.pending_for(state.uri, state.version)
        if not any(p.id == pid for p in pending):
            known = ", ".join(p.id for p in pending) or "none"
            raise InvalidArgs(
                cmd,
                f"no pending proposal {pid!r} for {state.current.client_uri} at version {state.version} "
                f"(pending: {known})",
            )
        state.active_proposal = pid
        state.actions_cache = None
        publish(ls, state.uri)
        ls.refresh_code_lenses()
        return SelectResult(active=pid)
