"""`editFidelity.applyProposal` {id, hunks?, rest?} -> {applied, reason?}.

Sends `workspace/applyEdit` with a TextDocumentEdit versioned for the document version the
proposal was computed on, so the client itself refuses it if the buffer moved on in between; and
nothing is sent when the server already knows the version moved ("stale"). After a partial apply
the rest of the proposal is carried over to the new version once the client reports exactly the
text the applied hunks produce (`rest: "reject"`: the rest is dropped instead). Each hunk is a change
unit applied with its own edits, so a fix accepted without the rename on its line stays a fix. The
edit is the server's own: the observation of changes does not flag it.
"""

from __future__ import annotations

import msgspec
from lsprotocol import types

from server.fidelity import apply_text_edits
from server.lsp.args import InvalidArgs
from server.lsp.observe import expect_own_edit, forget_own_edit
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.lsp.state import same_content
from server.lsp.unit_edits import unit_edits
from server.lsp.view_parts import workspace_edit
from server.lsp.views import publish
from server.protocol.commands import ApplyProposalArgs, ApplyResult
from server.protocol.names import Command

COMMAND = Command.APPLY_PROPOSAL.value


def _refuse(reason: str, message: str, version: int | None = None) -> ApplyResult:
    return ApplyResult(applied=False, reason=reason, message=message, version=version)


class ApplyProposalHandler:
    name = Command.APPLY_PROPOSAL

    async def run(self, ls: EditFidelityServer, args: ApplyProposalArgs, work_done: WorkDoneToken) -> ApplyResult:
        pid, hunks, rest = args.id, args.hunks, args.rest
        p = ls.store.proposals.get(pid)
        if p is None and pid in ls.store.released:  # its document was closed (and maybe reopened) since
            uri = ls.store.released[pid]
            if uri not in ls.store.docs:
                return _refuse("closed", f"the document {uri} is not open")
            return _refuse(
                "stale",
                f"the document {uri} was closed and reopened since proposal {pid} was computed; nothing was applied",
            )
        if p is None:
            return _refuse("unknown", f"no proposal with id {pid!r} (it may have expired or the server restarted)")
        if p.status != "ok" or p.report is None:
            return _refuse("error_proposal", f"proposal {pid} has no edits: {p.error}")
        n = len(p.report.hunks)
        if hunks is not None:
            if not hunks:
                raise InvalidArgs(COMMAND, "`hunks` is empty (omit it to apply every hunk)")
            bad = [i for i in hunks if not 0 <= i < n]
            if bad:
                raise InvalidArgs(COMMAND, f"hunk index {bad[0]} out of range: the proposal has {n} hunks (0-{n - 1})")
        applying = ls.store.apply_state(p)
        if applying.closed:
            return _refuse("closed", f"proposal {pid} was already applied or rejected")
        if n == 0:
            return _refuse("nothing", "the proposal changes nothing")
        state = ls.store.docs.get(p.uri)
        if state is None:
            return _refuse("closed", f"the document {p.uri} is not open")
        doc = state.current
        if doc.version != p.version or not same_content(state, p.version, p.generation, p.original):
            reopened = state.generation != p.generation
            return _refuse(
                "stale",
                f"the document changed since the proposal was computed (version {p.version}, now {doc.version}"
                + (", closed and reopened with other text" if reopened and doc.version == p.version else "")
                + "); nothing was applied",
                version=doc.version,
            )
        caps = ls.client_capabilities
        if not (caps and caps.workspace and caps.workspace.apply_edit):
            return _refuse("unsupported", "the client does not support workspace/applyEdit")
        chosen = sorted(hunks) if hunks is not None else list(range(n))
        edits = unit_edits(p.report, chosen)
        ws_edit = workspace_edit(doc.client_uri, p.version, [msgspec.to_builtins(e) for e in edits])
        partial = len(chosen) < n
        carry = partial and rest != "reject"
        # Set before sending: the client's didChange can arrive before its applyEdit answer.
        expected = apply_text_edits(p.original, edits)
        applying.expected_text = expected if carry else None
        applying.applied_units = chosen
        applying.expected_budget = 2 * len(edits) + 2
        own = expect_own_edit(state, expected, edits, applying.expected_budget)
        try:
            result = await ls.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=ws_edit, label=f"edit-fidelity: {p.label}")
            )
        except Exception as exc:  # noqa: BLE001 - a client's error answer is a refusal, not a crash
            applying.expected_text = None
            forget_own_edit(state, own)
            return _refuse("rejected", f"workspace/applyEdit failed: {exc}"[:300])
        if not result.applied:
            applying.expected_text = None
            forget_own_edit(state, own)
            return _refuse("rejected", result.failure_reason or "the client did not apply the edit")
        if not carry:
            applying.closed = True
            # VS Code answers before it sends the edit's didChange, which then finds no pending
            # proposal to clear: withdraw this one's diagnostics and lenses now
            publish(ls, p.uri)
            ls.refresh_code_lenses()
        return ApplyResult(applied=True, hunks=chosen, version=p.version)
