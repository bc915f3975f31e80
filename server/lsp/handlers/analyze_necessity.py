"""`editFidelity.analyzeNecessity` {id} -> which hunks of a pending proposal the workspace's tests
need (see `server.lsp.necessity.analysis`): progress while the tests run, cancellable."""

from __future__ import annotations

from server.lsp.necessity.analysis import analyze
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.protocol.commands import IdArgs, NecessityRecord
from server.protocol.names import Command


class AnalyzeNecessityHandler:
    name = Command.ANALYZE_NECESSITY

    async def run(self, ls: EditFidelityServer, args: IdArgs, work_done: WorkDoneToken) -> NecessityRecord:
        return await analyze(ls, args.id, work_done)
