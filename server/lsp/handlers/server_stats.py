"""`editFidelity.serverStats` {} -> {documents, proposals, released, caches, rssBytes, counters}: what the
server holds (the soak benchmark and the churn tests read it): the core's owned caches, its unowned memos
(`server.lsp.memory`) and the per-document state; in `counters`, how often it scheduled and ran
observations and rebuilt the code actions, and its background tasks and computations now."""

from __future__ import annotations

import os

from server.fidelity.text import cache as fidelity_cache
from server.lsp.memory import document_stats, memo_stats
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.protocol.commands import NoArgs, ServerStats
from server.protocol.names import Command


class ServerStatsHandler:
    name = Command.SERVER_STATS

    async def run(self, ls: EditFidelityServer, args: NoArgs, work_done: WorkDoneToken) -> ServerStats:
        return ServerStats(
            documents=len(ls.store.docs),
            proposals=len(ls.store.proposals),
            released=len(ls.store.released),
            caches={
                **fidelity_cache.stats(),
                **memo_stats(),
                "documentState": document_stats(ls.store, ls.workspace_documents()),
            },
            rss_bytes=_rss_bytes(),
            counters={**ls.counters, "backgroundTasks": len(ls.tasks), "computeRunning": ls.computing},
        )


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None  # not Linux
