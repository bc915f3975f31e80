"""`editFidelity.analyzeNecessity` {id} -> which hunks of a pending proposal the workspace's tests
need (see `server.lsp.necessity`): progress while the tests run, cancellable."""

from __future__ import annotations

from lsprotocol import types

from server.lsp import args as A
from server.lsp.necessity import COMMAND, analyze


def register(ls) -> None:
    @ls.command(COMMAND)
    async def analyze_necessity(ls, params: types.ExecuteCommandParams):
        obj = A.single_object(COMMAND, params.arguments)
        pid = A.get_str(COMMAND, obj, "id", max_len=200)
        assert pid is not None
        return await analyze(ls, pid, params.work_done_token)
