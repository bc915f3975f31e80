"""Document sync: didOpen / didChange / didSave / didClose.

The store applies each to its own copy of the document (pygls' workspace keeps none); the handlers keep
the previous text (the baseline of a large change), drop proposals that no longer match the buffer,
carry a partially applied proposal over, and schedule observation.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Sequence

from lsprotocol import types

from server.fidelity import TextEdit, measure
from server.lsp.flagging import flag_units
from server.lsp.observe import changed_lines, own_edit_arrived, schedule
from server.lsp.server import EditFidelityServer
from server.lsp.state import Proposal, owned
from server.lsp.unit_edits import unit_edits
from server.lsp.unit_views import statement_views, unit_views
from server.lsp.views import publish

logger = logging.getLogger(__name__)


def _shift_target(target: tuple[int, int] | None, edits: Sequence[TextEdit]) -> tuple[int, int] | None:
    if target is None:
        return None
    first, last = target
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        s, t = e.range.start.line, e.range.end.line
        d = e.new_text.count("\n") - (t - s)
        if t < first:
            first += d
            last += d
        elif s <= last:
            last = max(first, last + d)
    return first, last


async def _carry_over(ls: EditFidelityServer, p: Proposal, applied_units: list[int], version: int, text: str) -> None:
    """After a partial apply: the rest of the proposal, measured against the new buffer, in its place."""
    try:
        assert p.edited is not None  # only a proposal with an edit is applied in part
        applied = unit_edits(p.report, applied_units) if p.report else []
        target = _shift_target(p.target, applied)
        rng = range(target[0] + 1, target[1] + 2) if target else None
        state = ls.store.docs.get(p.uri)
        report = await ls.compute(
            owned(
                p.uri,
                functools.partial(
                    measure, text, p.edited, target=rng, language=state.language if state is not None else None
                ),
            )
        )
        state = ls.store.docs.get(p.uri)
        if (
            state is None
            or state.version != version
            or state.generation != p.generation
            or ls.store.proposals.get(p.id) is not p
        ):
            return
        th = ls.settings.thresholds
        flagged = flag_units(report, p.instruction, original=text, edited=p.edited)
        ls.store.replace(
            dataclasses.replace(
                p,
                original=text,
                version=version,
                target=target,
                report=report,
                flagged=flagged,
                views=unit_views(report, flagged, th, edited_side=False),
                statement_views=statement_views(report, flagged, th, p.edited),
            )
        )
        publish(ls, p.uri)
        ls.refresh_code_lenses()
    except Exception:
        logger.exception("carrying proposal %s over failed", p.id)


def register(ls: EditFidelityServer) -> None:
    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: EditFidelityServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.store.open(item.uri, item.version, item.text, item.language_id)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: EditFidelityServer, params: types.DidChangeTextDocumentParams) -> None:
        key = ls.store.key(params.text_document.uri)
        current = ls.store.docs.get(key)
        had_pending = current is not None and bool(ls.store.pending_for(key, current.version))
        # a document nobody opened: DocumentNotOpen, which pygls reports (logged, nothing changes)
        state, before = ls.store.change(params.text_document.uri, params.text_document.version, params.content_changes)
        prev = before.text
        had_marks, state.bug_marks = bool(state.bug_marks), []  # locateBug answers name lines of the old text
        state.actions_cache = None

        # a partially applied proposal: once the buffer is exactly what the applied hunks give (the
        # client may report the edit in one didChange or several), the rest carries over
        for p in list(ls.store.proposals.values()):
            applying = ls.store.apply_state(p)
            if p.uri != key or applying.expected_text is None:
                continue
            expected = applying.expected_text
            if len(state.text) == len(expected) and state.text == expected:
                applying.expected_text = None
                ls.spawn(
                    _carry_over(ls, p, list(applying.applied_units), state.version, state.text),
                    name=f"carry-over:{p.id}",
                )
            else:
                applying.expected_budget -= 1
                if applying.expected_budget <= 0:
                    applying.expected_text = None

        th = ls.settings.thresholds
        if own_edit_arrived(ls, state):
            pass  # the server's own edit (an apply, a revert): not a change to observe
        elif ls.settings.observe_changes and state.python:
            lines = changed_lines(prev, state.text, params.content_changes)
            if lines > th.large_change_lines:
                if state.observe_baseline is None:
                    state.observe_baseline = prev
                schedule(ls, state, th.debounce_ms / 1000.0)
            elif state.observe_baseline is not None or (state.observation is not None and not state.dismissed):
                schedule(ls, state, th.debounce_ms / 1000.0)
        if had_pending or had_marks:
            publish(ls, key)  # the proposals no longer match the buffer: clear their diagnostics
            ls.refresh_code_lenses()

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: EditFidelityServer, params: types.DidSaveTextDocumentParams) -> None:
        state = ls.store.document(params.text_document.uri)
        if state is not None:
            state.snapshot_text = params.text if params.text is not None else state.text

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: EditFidelityServer, params: types.DidCloseTextDocumentParams) -> None:
        # everything kept for the document goes: its proposals (and their necessity analyses), its
        # observation, snapshot and marks (in its state), and the analysis cache entries only it used
        _, released = ls.store.close(params.text_document.uri)
        ls.analyses.forget(released)
        ls.document_closed()  # the core's unowned memos of it, and the heap pages it freed
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )
