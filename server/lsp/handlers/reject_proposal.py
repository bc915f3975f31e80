"""`editFidelity.rejectProposal` {id} -> {rejected}: the proposal is closed; its diagnostics and lenses go."""

from __future__ import annotations

from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.lsp.views import publish
from server.protocol.commands import IdArgs, RejectResult
from server.protocol.names import Command


class RejectProposalHandler:
    name = Command.REJECT_PROPOSAL

    async def run(self, ls: EditFidelityServer, args: IdArgs, work_done: WorkDoneToken) -> RejectResult:
        p = ls.store.proposals.get(args.id)
        if p is None:
            return RejectResult(rejected=False, reason="unknown")
        was_pending = ls.store.is_pending(p)
        ls.store.apply_state(p).closed = True
        if was_pending:
            publish(ls, p.uri)
            ls.refresh_code_lenses()
        return RejectResult(rejected=True)
