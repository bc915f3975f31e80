"""Small commands behind the code lenses and actions, and for clients:

- `editFidelity.rejectProposal` {id} -> {rejected}
- `editFidelity.dismiss` {uri} -> {dismissed}: hide the observed-change warnings
- `editFidelity.revertHunks` {uri, version?, hunks?} -> {applied, reason?}: revert observed units
  (default: the flagged ones) with a versioned workspace/applyEdit; each unit's own edits are undone
  and nothing else (a fix on the line of a reverted rename stays), and the revert is not observed
- `editFidelity.selectProposal` {uri, id} -> {active}: the pending proposal the diagnostics, lenses,
  hover and code actions show (one at a time)
- `editFidelity.takeSnapshot` {uri} -> {version}: the baseline for checkChange "snapshot"
- `editFidelity.listBackends` {} -> {backends, problems}: the configuration as the server sees it
- `editFidelity.serverStats` {} -> {documents, proposals, released, caches, rssBytes, counters}: what the
  server holds (the soak benchmark and the churn tests read it): the core's owned caches, its unowned
  memos (`server.lsp.memory`) and the per-document state; in `counters`, how often it scheduled and ran
  observations and rebuilt the code actions, and its background tasks and computations now
"""

from __future__ import annotations

import os

import msgspec
from lsprotocol import types

from server.fidelity import TextEdit, apply_text_edits
from server.fidelity import cache as fidelity_cache
from server.lsp import args as A
from server.lsp.memory import document_stats, memo_stats
from server.lsp.observe import expect_own_edit, forget_own_edit
from server.lsp.records import ApplyResult, ServerStats
from server.lsp.unit_edits import UnitGeometry
from server.lsp.views import _workspace_edit
from server.protocol.commands import (
    DismissResult,
    IdArgs,
    ListBackendsResult,
    RejectResult,
    RevertHunksArgs,
    SelectProposalArgs,
    SelectResult,
    SnapshotResult,
    UriArgs,
)
from server.protocol.names import Command


def register(ls) -> None:
    @ls.command(Command.REJECT_PROPOSAL.value)
    async def reject_proposal(ls, params: types.ExecuteCommandParams):
        pid = A.decode(Command.REJECT_PROPOSAL.value, params.arguments, IdArgs).id
        p = ls.store.proposals.get(pid)
        if p is None:
            return msgspec.to_builtins(RejectResult(rejected=False, reason="unknown"))
        was_pending = p.pending
        p.closed = True
        if was_pending:
            ls.publish(p.uri)
            ls.refresh_code_lenses()
        return msgspec.to_builtins(RejectResult(rejected=True))

    @ls.command(Command.DISMISS.value)
    async def dismiss(ls, params: types.ExecuteCommandParams):
        args = A.decode(Command.DISMISS.value, params.arguments, UriArgs)
        _, state = _document(ls, Command.DISMISS.value, args.uri)
        state.dismissed = True
        state.observe_baseline = None
        if state.observe_task is not None:
            state.observe_task.cancel()
        ls.publish(state.uri)
        ls.refresh_code_lenses()
        return msgspec.to_builtins(DismissResult(dismissed=True))

    @ls.command(Command.REVERT_HUNKS.value)
    async def revert_hunks(ls, params: types.ExecuteCommandParams):
        cmd = Command.REVERT_HUNKS.value
        args = A.decode(cmd, params.arguments, RevertHunksArgs)
        doc, state = _document(ls, cmd, args.uri)
        version, hunks = args.version, args.hunks
        obs = state.observation
        if obs is None or state.dismissed:
            return msgspec.to_builtins(ApplyResult(applied=False, reason="nothing", message="no observed change"))
        if obs.version != doc.version or (version is not None and version != doc.version):
            return msgspec.to_builtins(
                ApplyResult(
                    applied=False,
                    reason="stale",
                    message="the document changed since the change was measured",
                    version=doc.version,
                )
            )
        n = len(obs.report.hunks)
        if hunks is None:
            chosen = [i for i, f in enumerate(obs.flagged) if f]
        else:
            bad = [i for i in hunks if not 0 <= i < n]
            if bad:
                raise A.InvalidArgs(cmd, f"hunk index {bad[0]} out of range: the change has {n} hunks")
            chosen = sorted(hunks)
        if not chosen:
            return msgspec.to_builtins(ApplyResult(applied=False, reason="nothing", message="no hunks to revert"))
        geometry = obs.geometry or UnitGeometry(obs.baseline, obs.current, obs.report)
        edits = geometry.revert(chosen)
        expected = apply_text_edits(obs.current, [msgspec.convert(e, TextEdit) for e in edits])
        # set before sending: the client's didChange can arrive before its applyEdit answer
        own = expect_own_edit(state, expected, None, 2 * len(edits) + 2, baseline=obs.baseline)
        try:
            result = await ls.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(
                    edit=_workspace_edit(doc.uri, doc.version, edits), label="edit-fidelity: revert unrequested changes"
                )
            )
        except Exception as exc:  # noqa: BLE001 - a client's error answer is a refusal, not a crash
            forget_own_edit(state, own)
            return msgspec.to_builtins(
                ApplyResult(applied=False, reason="rejected", message=f"workspace/applyEdit failed: {exc}"[:300])
            )
        if not result.applied:
            forget_own_edit(state, own)
            return msgspec.to_builtins(
                ApplyResult(
                    applied=False,
                    reason="rejected",
                    message=result.failure_reason or "the client did not apply the edit",
                )
            )
        return msgspec.to_builtins(ApplyResult(applied=True, hunks=chosen, version=doc.version))

    @ls.command(Command.SELECT_PROPOSAL.value)
    async def select_proposal(ls, params: types.ExecuteCommandParams):
        cmd = Command.SELECT_PROPOSAL.value
        sel = A.decode(cmd, params.arguments, SelectProposalArgs)
        doc, state = _document(ls, cmd, sel.uri)
        pid = sel.id
        pending = ls.store.pending_for(state.uri, state.version)
        if not any(p.id == pid for p in pending):
            known = ", ".join(p.id for p in pending) or "none"
            raise A.InvalidArgs(
                cmd, f"no pending proposal {pid!r} for {doc.uri} at version {doc.version} (pending: {known})"
            )
        state.active_proposal = pid
        state.actions_cache = None
        ls.publish(state.uri)
        ls.refresh_code_lenses()
        return msgspec.to_builtins(SelectResult(active=pid))

    @ls.command(Command.TAKE_SNAPSHOT.value)
    async def take_snapshot(ls, params: types.ExecuteCommandParams):
        args = A.decode(Command.TAKE_SNAPSHOT.value, params.arguments, UriArgs)
        doc, state = _document(ls, Command.TAKE_SNAPSHOT.value, args.uri)
        state.snapshot = state.text
        return msgspec.to_builtins(SnapshotResult(version=doc.version))

    @ls.command(Command.LIST_BACKENDS.value)
    async def list_backends(ls, params: types.ExecuteCommandParams):
        return msgspec.to_builtins(
            ListBackendsResult(
                backends=[ls.pool.get(n).config.describe() for n in ls.pool.names()],
                default_style=ls.settings.default_style,
                problems=list(ls.config_problems),
            )
        )

    @ls.command(Command.SERVER_STATS.value)
    async def server_stats(ls, params: types.ExecuteCommandParams):
        return msgspec.to_builtins(
            ServerStats(
                documents=len(ls.store.docs),
                proposals=len(ls.store.proposals),
                released=len(ls.store.released),
                caches={
                    **fidelity_cache.stats(),
                    **memo_stats(),
                    "documentState": document_stats(ls.store, _workspace_documents(ls)),
                },
                rss_bytes=_rss_bytes(),
                counters={**ls.counters, "backgroundTasks": len(ls.tasks), "computeRunning": ls.computing},
            )
        )


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None  # not Linux


def _workspace_documents(ls) -> int:
    """The documents pygls' workspace holds (before `initialize` there is no workspace)."""
    try:
        return len(ls.workspace.text_documents)
    except RuntimeError:
        return 0


def _document(ls, command: str, uri: str):
    """The open document named by the argument's `uri`, as (document, state); a specific error otherwise."""
    opened = ls.open_document(uri)
    if opened is None:
        raise A.InvalidArgs(command, f"unknown document {uri!r}")
    return opened
