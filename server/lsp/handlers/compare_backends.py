"""`editFidelity.compareBackends` {uri, version, range?, instruction, style?} -> {rows}: every configured
backend concurrently, one row each; every row's proposal stays pending, so the best can be applied."""

from __future__ import annotations

from server.lsp.edit_flow import parse_request, run_edit, stale_warning
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.lsp.state import Proposal
from server.protocol.commands import CompareBackendsArgs, CompareResult, CompareRow
from server.protocol.names import Command


def row(p: Proposal) -> CompareRow:
    tokens = None
    if p.prompt_tokens is not None or p.completion_tokens is not None:
        tokens = (p.prompt_tokens or 0) + (p.completion_tokens or 0)
    if p.status != "ok" or p.report is None:
        return CompareRow(
            backend=p.backend,
            status=p.status,
            latency_ms=round(p.latency_ms, 2),
            tokens=tokens,
            distance=None,
            distance_tokens=None,
            excess=None,
            complexity_delta=None,
            flagged_hunks=0,
            hunks=0,
            well_formed=False,
            syntax_error=None,
            lazy_placeholders=0,
            proposal_id=p.id,
            error=p.error,
        )
    r = p.report
    d = r.distance.get("no_comments")
    excess = r.excess.get("no_comments") if r.excess else None
    cx = r.complexity.get("paper")
    return CompareRow(
        backend=p.backend,
        status=p.status,
        latency_ms=round(p.latency_ms, 2),
        tokens=tokens,
        distance=d.normalized if d else None,
        distance_tokens=d.tokens if d else None,
        excess=excess,
        complexity_delta=cx.delta if cx else None,
        flagged_hunks=sum(1 for f in p.flagged if f),
        flagged_statements=len(p.statement_views),
        hunks=len(r.hunks),
        well_formed=r.parse_errors.edited is None,
        syntax_error=r.parse_errors.edited,
        lazy_placeholders=sum(1 for h in r.hunks if "lazy_placeholder" in h.kinds),
        proposal_id=p.id,
        heavy=p.heavy,
    )


class CompareBackendsHandler:
    name = Command.COMPARE_BACKENDS

    async def run(self, ls: EditFidelityServer, args: CompareBackendsArgs, work_done: WorkDoneToken) -> CompareResult:
        req = parse_request(ls, self.name.value, args)
        proposals = await run_edit(ls, req, work_done, "Comparing backends")
        stale = stale_warning(ls, req)
        warnings = [*req.warnings, stale] if stale else req.warnings
        return CompareResult(rows=[row(p) for p in proposals], warnings=warnings)
