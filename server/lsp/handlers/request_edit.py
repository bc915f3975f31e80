"""`editFidelity.requestEdit` {uri, version, range?, instruction, backends?, style?} -> {proposals}."""

from __future__ import annotations

import msgspec
from lsprotocol import types

from server.lsp.edit_flow import parse_request, run_edit, stale_warning
from server.lsp.records import ProposalRecord, RequestEditResult, Usage, wire_report
from server.lsp.state import Proposal
from server.protocol.names import Command

COMMAND = Command.REQUEST_EDIT.value


def proposal_record(p: Proposal) -> ProposalRecord:
    return ProposalRecord(
        id=p.id,
        backend=p.backend,
        status=p.status,
        error=p.error,
        error_kind=p.error_kind,
        edits=(p.report_json or {}).get("edits", []) if p.status == "ok" else [],
        report=wire_report(p.report_json),
        latency_ms=round(p.latency_ms, 2),
        uri=p.client_uri or p.uri,
        version=p.version,
        style=p.style,
        flagged_hunks=[i for i, f in enumerate(p.flagged) if f],
        hunk_messages=[v.message for v in p.views],
        hunk_severities=[v.severity for v in p.views],
        usage=Usage(p.prompt_tokens, p.completion_tokens)
        if p.prompt_tokens is not None or p.completion_tokens is not None
        else None,
        attempts=p.attempts,
        truncated=p.truncated,
        heavy=p.heavy,
        sample=p.sample,
        label=p.label,
    )


def register(ls) -> None:
    @ls.command(COMMAND)
    async def request_edit(ls, params: types.ExecuteCommandParams):
        req = parse_request(ls, COMMAND, params.arguments, allow_backend_choice=True)
        proposals = await run_edit(ls, req, params.work_done_token, "Requesting edit")
        warnings = list(req.warnings)
        stale = stale_warning(ls, req)
        if stale:
            warnings.append(stale)
        result = RequestEditResult(proposals=[proposal_record(p) for p in proposals], warnings=warnings)
        return msgspec.to_builtins(result)
