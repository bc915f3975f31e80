"""Document sync: didOpen / didChange / didSave / didClose.

pygls has already applied the change to its workspace when these run; the handlers keep the
server's own copy of the previous text (the baseline of a large change), drop proposals that no
longer match the buffer, carry a partially applied proposal over, and schedule observation.
"""

from __future__ import annotations

import functools
import logging
from urllib.parse import unquote

from lsprotocol import types

from server.fidelity import measure
from server.fidelity.lang.table import PYTHON, by_name_or_none, resolve
from server.lsp.flagging import flag_hunks
from server.lsp.hunk_views import hunk_views, statement_views
from server.lsp.necessity import forget_analyses
from server.lsp.observe import changed_lines, own_edit_arrived, schedule
from server.lsp.state import DocState, DocumentSnapshot, Proposal, owned
from server.lsp.unit_edits import unit_edits

logger = logging.getLogger(__name__)


def _shift_target(target: tuple[int, int] | None, edits) -> tuple[int, int] | None:
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


async def _carry_over(ls, p: Proposal, version: int, text: str) -> None:
    """After a partial apply: the rest of the proposal, measured against the new buffer."""
    try:
        assert p.edited is not None  # only a proposal with an edit is applied in part
        applied = unit_edits(p.report, p.applied_hunks) if p.report else []
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
        p.original, p.version, p.target = text, version, target
        p.report = report
        p.flagged = flag_hunks(report, p.instruction, original=text, edited=p.edited)
        p.views = hunk_views(report, p.flagged, ls.settings.thresholds, edited_side=False)
        p.statement_views = statement_views(report, p.flagged, ls.settings.thresholds, p.edited)
        p.applied_hunks = []
        if not report.hunks:
            p.closed = True
        ls.publish(p.uri)
        ls.refresh_code_lenses()
    except Exception:
        logger.exception("carrying proposal %s over failed", p.id)


def register(ls) -> None:
    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenTextDocumentParams):
        item = params.text_document
        key = unquote(item.uri)
        old = ls.store.docs.get(key)
        if old is not None and old.observe_task is not None:
            old.observe_task.cancel()
        # the languageId decides (an empty one: the extension, else Python as before languages existed)
        language = resolve(item.language_id, key)
        python = language == PYTHON or (by_name_or_none(language) is None and key.endswith((".py", ".pyi")))
        language = PYTHON if python else language
        current = DocumentSnapshot(key, item.version, ls.store.next_generation(), item.text, language)
        ls.store.docs[key] = DocState(
            uri=key, current=current, snapshot=item.text, python=python or by_name_or_none(language) is not None
        )
        # opened again without a close: what was computed for other content is stale (versions restart)
        for p in ls.store.proposals.values():
            if p.uri == key:
                p.closed = p.closed or p.version != item.version or p.original != item.text

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeTextDocumentParams):
        key = unquote(params.text_document.uri)
        state = ls.store.docs.get(key)
        doc = ls.workspace.text_documents.get(key)
        if state is None or doc is None:
            return
        prev_version = state.version
        prev = state.text
        had_pending = bool(ls.store.pending_for(key, prev_version))
        had_marks, state.bug_marks = bool(state.bug_marks), []  # locateBug answers name lines of the old text
        state.advance(params.text_document.version, doc.source)
        state.actions_cache = None

        # a partially applied proposal: once the buffer is exactly what the applied hunks give (the
        # client may report the edit in one didChange or several), the rest carries over
        for p in list(ls.store.proposals.values()):
            if p.uri != key or p.expected_text is None:
                continue
            expected = p.expected_text
            if len(state.text) == len(expected) and state.text == expected:
                p.expected_text = None
                ls.spawn(_carry_over(ls, p, state.version, state.text), name=f"carry-over:{p.id}")
            else:
                p.expected_budget -= 1
                if p.expected_budget <= 0:
                    p.expected_text = None

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
            ls.publish(key)  # the proposals no longer match the buffer: clear their diagnostics
            ls.refresh_code_lenses()

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls, params: types.DidSaveTextDocumentParams):
        state = ls.store.docs.get(unquote(params.text_document.uri))
        if state is not None:
            state.snapshot = params.text if params.text is not None else state.text

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams):
        key = unquote(params.text_document.uri)
        state = ls.store.docs.pop(key, None)
        if state is not None and state.observe_task is not None:
            state.observe_task.cancel()
        # everything kept for the document goes: its proposals (and their necessity analyses), its
        # observation, snapshot and marks (in `state`), and the analysis cache entries only it used
        forget_analyses(ls, ls.store.release_document(key))
        ls.document_closed()  # the core's unowned memos of it, and the heap pages it freed
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )
