"""`editFidelity.requestEdit` {uri, version, range?, instruction, backends?, style?} -> {proposals}."""

from __future__ import annotations

from server.fidelity.judge.flags import unrequested_of
from server.lsp.edit_flow import parse_request, run_edit, stale_warning
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.lsp.state import Proposal
from server.protocol.commands import FlaggedStatement, ProposalRecord, RequestEditArgs, RequestEditResult, Usage
from server.protocol.names import Command


def hunk_unrequested(p: Proposal) -> list[list[str]]:
    """Per hunk, the unrequested kinds it is flagged for (its verdict's; [] when not flagged): the benchmark
    counts flagged units by kind from these. A flagged unit without one has its diagnostic's code."""
    verdicts = getattr(p.flagged, "verdicts", None)
    hunks = p.report.hunks if p.report is not None else []
    out: list[list[str]] = []
    for i, view in enumerate(p.views):
        if not view.flagged:
            out.append([])
        elif verdicts is not None and i < len(verdicts) and i < len(hunks):
            out.append(unrequested_of(verdicts[i], hunks[i]) or [view.code])
        else:
            out.append([view.code])
    return out


def proposal_record(p: Proposal) -> ProposalRecord:
    return ProposalRecord(
        id=p.id,
        backend=p.backend,
        status=p.status,
        error=p.error,
        error_kind=p.error_kind,
        edits=list(p.report.edits) if p.status == "ok" and p.report is not None else [],
        report=p.report,
        latency_ms=round(p.latency_ms, 2),
        uri=p.client_uri or p.uri,
        version=p.version,
        style=p.style,
        flagged_hunks=[i for i, f in enumerate(p.flagged) if f],
        hunk_messages=[v.message for v in p.views],
        hunk_severities=[v.severity for v in p.views],
        flagged_statements=[
            FlaggedStatement(s.unit, s.start_line, s.end_line, list(s.kinds), s.severity, s.message)
            for s in p.statement_views
        ],
        hunk_unrequested=hunk_unrequested(p),
        usage=Usage(p.prompt_tokens, p.completion_tokens, p.cached_tokens)
        if p.prompt_tokens is not None or p.completion_tokens is not None
        else None,
        attempts=p.attempts,
        truncated=p.truncated,
        heavy=p.heavy,
        sample=p.sample,
        label=p.label,
    )


class RequestEditHandler:
    name = Command.REQUEST_EDIT

    async def run(self, ls: EditFidelityServer, args: RequestEditArgs, work_done: WorkDoneToken) -> RequestEditResult:
        req = parse_request(ls, self.name.value, args)
        proposals = await run_edit(ls, req, work_done, "Requesting edit")  # looked up here: a test double swaps it
        warnings = list(req.warnings)
        stale = stale_warning(ls, req)
        if stale:
            warnings.append(stale)
        return RequestEditResult(proposals=[proposal_record(p) for p in proposals], warnings=warnings)
