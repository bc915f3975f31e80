"""`editFidelity.takeSnapshot` {uri} -> {version}: the buffer now is the baseline for checkChange "snapshot"."""

from __future__ import annotations

from server.lsp.args import named_document
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.protocol.commands import SnapshotResult, UriArgs
from server.protocol.names import Command


class TakeSnapshotHandler:
    name = Command.TAKE_SNAPSHOT

    async def run(self, ls: EditFidelityServer, args: UriArgs, work_done: WorkDoneToken) -> SnapshotResult:
        state = named_document(ls.store, self.name.value, args.uri)
        state.snapshot_text = state.text
        return SnapshotResult(version=state.version)
