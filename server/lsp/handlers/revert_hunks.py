"""`editFidelity.revertHunks` {uri, version?, hunks?} -> {applied, reason?}: revert observed units (default:
the flagged ones) with a versioned workspace/applyEdit. Each unit's own edits are undone and nothing else (a
fix on the line of a reverted rename stays), and the revert is the server's own edit: it is not observed."""

from __future__ import annotations

import msgspec
from lsprotocol import types

from server.fidelity import TextEdit, apply_text_edits
from server.lsp.args import InvalidArgs, named_document
from server.lsp.observe import expect_own_edit, forget_own_edit
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.lsp.unit_edits import UnitGeometry
from server.lsp.view_parts import workspace_edit
from server.protocol.commands import ApplyResult, RevertHunksArgs
from server.protocol.names import Command


class RevertHunksHandler:
    name = Command.REVERT_HUNKS

    async def run(self, ls: EditFidelityServer, args: RevertHunksArgs, work_done: WorkDoneToken) -> ApplyResult:
        cmd = self.name.value
        state = named_document(ls.store, cmd, args.uri)
        doc = state.current
        version, hunks = args.version, args.hunks
        obs = state.observation
        if obs is None or state.dismissed:
            return ApplyResult(applied=False, reason="nothing", message="no observed change")
        if obs.version != doc.version or (version is not None and version != doc.version):
            return ApplyResult(
                applied=False,
                reason="stale",
                message="the document changed since the change was measured",
                version=doc.version,
            )
        n = len(obs.report.hunks)
        if hunks is None:
            chosen = [i for i, f in enumerate(obs.flagged) if f]
        else:
            bad = [i for i in hunks if not 0 <= i < n]
            if bad:
                raise InvalidArgs(cmd, f"hunk index {bad[0]} out of range: the change has {n} hunks")
            chosen = sorted(hunks)
        if not chosen:
            return ApplyResult(applied=False, reason="nothing", message="no hunks to revert")
        geometry = obs.geometry or UnitGeometry(obs.baseline, obs.current, obs.report)
        edits = geometry.revert(chosen)
        expected = apply_text_edits(obs.current, [msgspec.convert(e, TextEdit) for e in edits])
        # set before sending: the client's didChange can arrive before its applyEdit answer
        own = expect_own_edit(state, expected, None, 2 * len(edits) + 2, baseline=obs.baseline)
        try:
            result = await ls.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(
                    edit=workspace_edit(doc.client_uri, doc.version, edits),
                    label="edit-fidelity: revert unrequested changes",
                )
            )
        except Exception as exc:  # noqa: BLE001 - a client's error answer is a refusal, not a crash
            forget_own_edit(state, own)
            return ApplyResult(applied=False, reason="rejected", message=f"workspace/applyEdit failed: {exc}"[:300])
        if not result.applied:
            forget_own_edit(state, own)
            return ApplyResult(
                applied=False, reason="rejected", message=result.failure_reason or "the client did not apply the edit"
            )
        return ApplyResult(applied=True, hunks=chosen, version=doc.version)
