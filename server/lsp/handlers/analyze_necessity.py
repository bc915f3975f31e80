"""`editFidelity.analyzeNecessity` {id} -> which hunks of a pending proposal the workspace's tests
need (see `server.lsp.necessity`): progress while the tests run, cancellable."""

from __future__ import annotations

from lsprotocol import types

from server.lsp import args as A
from server.lsp.necessity import COMMAND, analyze
from server.protocol.commands import IdArgs


def register(ls) -> None:
    @ls.command(COMMAND)
    async def analyze_necessity(ls, params: types.ExecuteCommandParams):
        args = A.decode(COMMAND, params.arguments, IdArgs)
        return await analyze(ls, args.id, params.work_done_token)
