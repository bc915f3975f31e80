"""In-memory state of the server: per document texts, pending proposals, observed changes, caches."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from server.fidelity import FidelityReport
from server.fidelity import cache as fidelity_cache
from server.lsp.hunk_views import HunkView, StatementView
from server.lsp.windowed import Window


@dataclass
class Proposal:
    id: str
    uri: str
    version: int  # the document version the edits apply to
    backend: str
    instruction: str
    style: str
    original: str
    target: tuple[int, int] | None  # 0-based first/last selected line
    status: str = "ok"  # ok | error
    error: str | None = None
    error_kind: str | None = None
    edited: str | None = None
    report: FidelityReport | None = None
    flagged: list[bool] = field(default_factory=list)
    views: list[HunkView] = field(default_factory=list)
    statement_views: list[StatementView] = field(default_factory=list)  # flagged statements inside unflagged units
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    attempts: int = 0
    truncated: bool = False
    heavy: bool = False  # its no_comments distance exceeds thresholds.distanceWarning
    sample: int = 0  # which of the backend's `n` samples
    samples: int = 1  # how many answers the backend gave to the request
    created: float = field(default_factory=time.time)
    # after a partial apply: the text we expect the client to produce, to carry the rest over
    expected_text: str | None = None
    applied_hunks: list[int] = field(default_factory=list)
    expected_budget: int = 0  # didChanges to wait for that text before giving up
    closed: bool = False  # accepted in full, rejected, or superseded
    client_uri: str = ""  # the URI as the client spelled it (`uri` is the normalised key)
    generation: int = 0  # which opening of the document (`DocState.generation`) it was computed on

    @property
    def label(self) -> str:
        """How the editor names it: the backend, and which sample when the backend gave several."""
        return self.backend if self.samples <= 1 else f"{self.backend}, sample {self.sample + 1} of {self.samples}"

    @property
    def pending(self) -> bool:
        return self.status == "ok" and not self.closed and self.report is not None and bool(self.report.hunks)


@dataclass
class Observation:
    uri: str
    version: int  # the version of the text the report's edited side is
    baseline: str
    current: str
    source: str  # observed | checkChange:snapshot | checkChange:git | checkChange:text
    report: FidelityReport
    flagged: list[bool]
    views: list[HunkView]
    window: Window | None = None
    geometry: Any = None  # server.lsp.unit_edits.UnitGeometry: where the units lie, their reverts


@dataclass
class BugMark:
    """A backend's answer to `locateBug`: the line it names, shown while the document keeps its version."""

    line: int  # 0-based
    bug_type: str
    backend: str
    version: int


@dataclass
class OwnEdit:
    """An edit the server sent (applyProposal, revertHunks): its didChanges are not a change to observe.

    Once the buffer is `expected`, the observation (if any) is measured again against `baseline`: the
    same one after a revert, the baseline moved by the applied edits after an apply (None: dropped)."""

    expected: str
    budget: int  # didChanges to wait for `expected` before treating them as the user's
    baseline: str | None
    burst_baseline: str | None  # `observe_baseline` when the edit was sent (a burst in progress)


@dataclass(frozen=True, slots=True)
class DocumentSnapshot:
    """One version of one opening of a document, immutable: what background work (an observation, a
    request's measurement) is handed, so it never reads a later edit; `state.current is snap` tells
    whether the buffer is still that one."""

    uri: str
    version: int
    generation: int  # which opening (versions restart when a document is reopened)
    text: str
    language: str  # what measure() measures it as (`resolve(languageId, path)`)


@dataclass
class DocState:
    uri: str
    current: DocumentSnapshot  # the buffer after the last change we saw (the one copy of its text)
    snapshot: str  # baseline text at open / last save / explicit snapshot
    observe_baseline: str | None = None  # text before the first large change of a burst
    observation: Observation | None = None
    observe_task: asyncio.Task | None = None
    actions_cache: tuple[int, list] | None = None  # (version, entries)
    dismissed: bool = False
    python: bool = True  # observed: Python or a language the fidelity layer supports
    bug_marks: list[BugMark] = field(default_factory=list)  # the last locateBug answers (any change clears them)
    active_proposal: str | None = None  # the pending proposal the diagnostics show (None: the first)
    own_edits: list[OwnEdit] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.current.text

    @property
    def version(self) -> int:
        return self.current.version

    @property
    def generation(self) -> int:
        """One per didOpen: versions restart on reopen (VS Code starts again at 1)."""
        return self.current.generation

    @property
    def language(self) -> str:
        return self.current.language

    def advance(self, version: int, text: str) -> DocumentSnapshot:
        """The buffer after a didChange: a new snapshot (the old one stays what it was for its holders)."""
        self.current = DocumentSnapshot(self.uri, version, self.current.generation, text, self.current.language)
        return self.current


def same_content(state: DocState, version: int, generation: int, text: str) -> bool:
    """Whether (version, generation, text) is the buffer `state` holds now. A document is its URI, its
    version and its content: within one opening the version names the content; across openings
    (versions restart) only equal text is the same document, so a proposal for other text is stale."""
    if state.version != version:
        return False
    return state.generation == generation or (len(state.text) == len(text) and state.text == text)


T = TypeVar("T")


class Owned(Generic[T]):
    """`fn` with the analysis cache entries it uses tagged as the document's (released on didClose;
    `EditFidelityServer.compute` releases them again when the computation ends after the close)."""

    __slots__ = ("fn", "owner")

    def __init__(self, owner: str, fn: Callable[[], T]) -> None:
        self.owner = owner
        self.fn = fn

    def __call__(self) -> T:
        with fidelity_cache.owned_by(self.owner):
            return self.fn()


def owned(owner: str, fn: Callable[[], T]) -> Owned[T]:
    return Owned(owner, fn)


class Store:
    MAX_PROPOSALS = 200  # each holds two versions of a file
    MAX_RELEASED = 1000  # ids of released proposals remembered, to refuse them as closed/stale (not "unknown")

    def __init__(self) -> None:
        self.docs: dict[str, DocState] = {}
        self.proposals: dict[str, Proposal] = {}
        self.released: OrderedDict[str, str] = OrderedDict()  # proposal id -> uri
        self._generation = 0

    def next_generation(self) -> int:
        self._generation += 1
        return self._generation

    def forget(self, ids: list[str], uri: str) -> None:
        for pid in ids:
            self.proposals.pop(pid, None)
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
        if len(self.proposals) > self.MAX_PROPOSALS:  # forget the oldest closed or stale ones first
            for pid in sorted(self.proposals, key=lambda k: (self.proposals[k].pending, self.proposals[k].created)):
                if len(self.proposals) <= self.MAX_PROPOSALS:
                    break
                del self.proposals[pid]

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

        return [p for p in self.proposals.values() if p.uri == uri and p.pending and matches(p)]

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
