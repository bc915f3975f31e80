"""The one owner of documents and proposals.

Documents: the store applies didOpen/didChange/didClose itself (pygls' workspace holds none, see
`server.lsp.connection`), keyed by the normalised URI (`Store.key`), so there is one copy of each buffer's
text, in its current `DocumentSnapshot`. Handlers ask for `snapshot(uri)` (immutable: what background
work is handed) or `document(uri)` (the per-document state they update), with the URI as the client
spelled it.

Proposals: each a frozen `Proposal`, beside its `ApplyState` (what became of it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument

from server.fidelity.lang.table import PYTHON, by_name_or_none, resolve
from server.fidelity.text import cache as fidelity_cache
from server.fidelity.text.analysis import split_lines
from server.lsp.state import ApplyState, DocState, DocumentSnapshot, Proposal, same_content


class _LspLines(TextDocument):
    """pygls' application of a content change, with lines counted as LSP does (\\n, \\r\\n, \\r):
    `str.splitlines` also ends lines at \\f, \\v, \\x1c-\\x1e, \\x85, U+2028 and U+2029, so a change
    below a form feed would land elsewhere than in the editor's copy. Positions are UTF-16 (the
    only encoding the server negotiates)."""

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(split_lines(self.source))


def apply_changes(uri: str, text: str, changes: Sequence[types.TextDocumentContentChangeEvent]) -> str:
    """`text` after one didChange's content changes, in order (partial ones, or the whole document)."""
    doc = _LspLines(uri, source=text, sync_kind=types.TextDocumentSyncKind.Incremental)
    for change in changes:
        doc.apply_change(change)
    return doc.source


class DocumentNotOpen(LookupError):
    """A didChange for a document nobody opened (or closed since): pygls reports the error, logged for the
    user to find (`EditFidelityServer.report_server_error`); nothing changes."""


class Store:
    MAX_PROPOSALS = 200  # each holds two versions of a file
    MAX_RELEASED = 1000  # ids of released proposals remembered, to refuse them as closed/stale (not "unknown")

    def __init__(self) -> None:
        self.docs: dict[str, DocState] = {}
        self.proposals: dict[str, Proposal] = {}
        self.apply_states: dict[str, ApplyState] = {}  # by proposal id, beside `proposals`
        self.released: OrderedDict[str, str] = OrderedDict()  # proposal id -> uri
        self._generation = 0

    # -- documents -----------------------------------------------------------------------------------
    @staticmethod
    def key(uri: str) -> str:
        """The URI the store files a document under: percent-decoded, as pygls' workspace did."""
        return unquote(uri)

    def document(self, uri: str) -> DocState | None:
        """The open document's state; `uri` as a client sends it (under a key the store made: `docs[key]`)."""
        return self.docs.get(self.key(uri))

    def snapshot(self, uri: str) -> DocumentSnapshot | None:
        """The open document's current buffer (None when it is not open); `uri` as a client sends it."""
        state = self.docs.get(self.key(uri))
        return state.current if state is not None else None

    def snapshots(self) -> Iterator[DocumentSnapshot]:
        return (state.current for state in list(self.docs.values()))

    def open(self, uri: str, version: int, text: str, language_id: str) -> DocState:
        """didOpen (again without a close too: a new opening, its versions start again)."""
        key = self.key(uri)
        old = self.docs.get(key)
        if old is not None and old.observe_task is not None:
            old.observe_task.cancel()
        # the languageId decides (an empty one: the extension, else Python as before languages existed)
        language = resolve(language_id, key)
        python = language == PYTHON or (by_name_or_none(language) is None and key.endswith((".py", ".pyi")))
        language = PYTHON if python else language
        self._generation += 1
        current = DocumentSnapshot(key, version, self._generation, text, language, uri, language_id)
        state = self.docs[key] = DocState(
            uri=key, current=current, snapshot_text=text, python=python or by_name_or_none(language) is not None
        )
        # opened again without a close: what was computed for other content is stale (versions restart)
        for p in self.proposals.values():
            if p.uri == key:
                st = self.apply_states[p.id]
                st.closed = st.closed or p.version != version or p.original != text
        return state

    def change(
        self, uri: str, version: int, changes: Sequence[types.TextDocumentContentChangeEvent]
    ) -> tuple[DocState, DocumentSnapshot]:
        """didChange: the document's state with its new buffer, and the snapshot before it."""
        key = self.key(uri)
        state = self.docs.get(key)
        if state is None:
            raise DocumentNotOpen(key)
        before = state.current
        state.advance(version, apply_changes(before.client_uri, before.text, changes))
        return state, before

    def close(self, uri: str) -> tuple[DocState | None, list[str]]:
        """didClose: the document's state (None when it was not open) and the ids of the proposals released
        with it (`release_document`)."""
        key = self.key(uri)
        state = self.docs.pop(key, None)
        if state is not None and state.observe_task is not None:
            state.observe_task.cancel()
        return state, self.release_document(key)

    # -- proposals -----------------------------------------------------------------------------------
    def apply_state(self, p: Proposal) -> ApplyState:
        return self.apply_states[p.id]

    def is_pending(self, p: Proposal) -> bool:
        """Shown and applicable: it has units and was neither applied in full, rejected nor superseded."""
        return p.has_units and not self.apply_states[p.id].closed

    def forget(self, ids: list[str], uri: str) -> None:
        for pid in ids:
            self.proposals.pop(pid, None)
            self.apply_states.pop(pid, None)
            self.released[pid] = uri
        while len(self.released) > self.MAX_RELEASED:
            self.released.popitem(last=False)

    def release_document(self, uri: str) -> list[str]:
        """didClose: the document's proposals and its analysis cache entries (those no open document
        shares) go; the ids are remembered so that applying one is refused (closed, or stale once reopened)."""
        ids = [pid for pid, p in self.proposals.items() if p.uri == uri]
        self.forget(ids, uri)
        fidelity_cache.release(uri)
        return ids

    def add_proposal(self, p: Proposal) -> None:
        self.proposals[p.id] = p
        self.apply_states[p.id] = ApplyState()
        if len(self.proposals) > self.MAX_PROPOSALS:  # forget the oldest closed or stale ones first
            for pid in sorted(
                self.proposals, key=lambda k: (self.is_pending(self.proposals[k]), self.proposals[k].created)
            ):
                if len(self.proposals) <= self.MAX_PROPOSALS:
                    break
                del self.proposals[pid]
                del self.apply_states[pid]

    def replace(self, p: Proposal) -> None:
        """A carried-over proposal in place of the one under its id: nothing of it applied yet, closed when
        nothing is left to apply (or when it was closed meanwhile, a rejection while it was measured)."""
        closed = self.apply_states[p.id].closed or (p.report is not None and not p.report.hunks)
        self.proposals[p.id] = p
        self.apply_states[p.id] = ApplyState(closed=closed)

    def pending_for(self, uri: str, version: int | None) -> list[Proposal]:
        """Pending proposals of `uri`: for `version` of the buffer it holds now (the current opening and
        content, see `same_content`), or for any version (None)."""
        state = self.docs.get(uri)

        def matches(p: Proposal) -> bool:
            if version is None:
                return True
            if state is not None and version == state.version:
                return same_content(state, p.version, p.generation, p.original)
            return p.version == version and (state is None or p.generation == state.generation)

        return [p for p in self.proposals.values() if p.uri == uri and self.is_pending(p) and matches(p)]

    def shown_proposal(self, uri: str, version: int) -> tuple[Proposal | None, list[Proposal]]:
        """The pending proposal the editor shows for the buffer (the active one, else the first) and
        all pending ones, in request order (backend order, then sample)."""
        pending = self.pending_for(uri, version)
        state = self.docs.get(uri)
        active = state.active_proposal if state is not None else None
        shown = next((p for p in pending if p.id == active), pending[0] if pending else None)
        return shown, pending

    def invalidate_actions(self, uri: str) -> None:
        doc = self.docs.get(uri)
        if doc is not None:
            doc.actions_cache = None
