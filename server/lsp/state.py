"""The values the server keeps: proposals and what became of them, document snapshots and per-document
state (observations, own edits, marks, caches). The `Store` (server.lsp.store) holds them."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pygls.uris import to_fs_path, urlparse

from server.fidelity import FidelityReport
from server.fidelity.text import cache as fidelity_cache
from server.lsp.unit_edits import UnitGeometry
from server.lsp.unit_views import StatementView, UnitView
from server.lsp.view_parts import ActionEntry
from server.lsp.windowed import Window


@dataclass(frozen=True, slots=True)
class Proposal:
    """What was computed for one answer of one backend: frozen. A partial apply carries the rest over
    to the new buffer as another `Proposal` under the same id (`Store.replace`); what becomes of it
    (applied, rejected, awaited) is its `ApplyState`, which the store holds beside it."""

    id: str
    uri: str  # the normalised key (`Store.key`)
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
    flagged: list[bool] = field(default_factory=list)  # the judgment per unit (`flag_units`: with its verdicts)
    views: list[UnitView] = field(default_factory=list)
    statement_views: list[StatementView] = field(default_factory=list)  # flagged statements inside unflagged units
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None  # of the prompt, taken from the backend's cache
    attempts: int = 0
    truncated: bool = False
    heavy: bool = False  # its no_comments distance exceeds thresholds.distanceWarning
    sample: int = 0  # which of the backend's `n` samples
    samples: int = 1  # how many answers the backend gave to the request
    created: float = field(default_factory=time.time)
    client_uri: str = ""  # the URI as the client spelled it (`uri` is the normalised key)
    generation: int = 0  # which opening of the document (`DocState.generation`) it was computed on

    @property
    def label(self) -> str:
        """How the editor names it: the backend, and which sample when the backend gave several."""
        return self.backend if self.samples <= 1 else f"{self.backend}, sample {self.sample + 1} of {self.samples}"

    @property
    def has_units(self) -> bool:
        return self.status == "ok" and self.report is not None and bool(self.report.hunks)


@dataclass(slots=True)
class ApplyState:
    """What became of a proposal since it was computed (`Store.apply_state`)."""

    closed: bool = False  # accepted in full, rejected, or superseded
    # after a partial apply: the text we expect the client to produce, to carry the rest over
    expected_text: str | None = None
    applied_units: list[int] = field(default_factory=list)
    expected_budget: int = 0  # didChanges to wait for that text before giving up


@dataclass
class Observation:
    uri: str
    version: int  # the version of the text the report's edited side is
    baseline: str
    current: str
    source: str  # observed | checkChange:snapshot | checkChange:git | checkChange:text
    report: FidelityReport
    flagged: list[bool]
    views: list[UnitView]
    window: Window | None = None
    geometry: UnitGeometry | None = None  # where the units lie, their reverts


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

    uri: str  # the normalised key (`Store.key`)
    version: int
    generation: int  # which opening (versions restart when a document is reopened)
    text: str
    language: str  # what measure() measures it as (`resolve(languageId, path)`)
    client_uri: str  # as the client spelled it in didOpen (what diagnostics and edits are sent for)
    language_id: str  # the client's languageId ("" when it sent none)

    @property
    def path(self) -> str:
        """The file's path (as pygls' documents give it): a file: URI's, else the URI's path part."""
        path = to_fs_path(self.client_uri)
        return path if path is not None else urlparse(self.client_uri)[2]


@dataclass
class DocState:
    uri: str
    current: DocumentSnapshot  # the buffer after the last change we saw (the one copy of its text)
    snapshot_text: str  # checkChange's "snapshot" baseline: the text at open, last save or last takeSnapshot
    observe_baseline: str | None = None  # text before the first large change of a burst
    observation: Observation | None = None
    observe_task: asyncio.Task[None] | None = None
    actions_cache: tuple[int, list[ActionEntry]] | None = None  # (version, entries)
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
        self.current = dataclasses.replace(self.current, version=version, text=text)
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
