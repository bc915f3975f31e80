"""What a closed document leaves in the fidelity core beyond its own cache entries, and giving it back.

`didClose` releases the document's entries of the core's owned caches (`server.fidelity.text.cache`). Three
memos of the core have no owners and used to keep a closed document's facts alive (measured on an
18 KB, 1,201-line file opened, edited, checked and closed 240 times: +190 MB, still climbing):

- `chunks._held`, the 64 most recent chunks with their syntax trees, held whether or not a cache
  still holds the chunk: one large top-level class is one chunk of ~1 MB of facts and tree, so the
  last 64 versions of that class stayed (~75 MB) after every document closed;
- `localize._piece` (functools.lru_cache, 1,024 entries by text), the per-statement facts of texts
  that do not parse: one entry per distinct broken version, never released;
- the other languages' token and analysis caches (`server.fidelity.lang`), bounded by count or
  source size only.

The server prunes them here instead of in the core (which owns them and should, one day, drop a chunk's
tree when its cache entry goes): after each close, the held chunks no cache holds any more and the
piece memo go; once no document is open, the other languages' caches too. The Sonar memo
(`chunks._sonar_memo`, small scores by digest, ~350 bytes each, at most 16,384) stays on purpose:
complexipy leaks each time a chunk is scored again. Then glibc gets `malloc_trim(0)`: freed small
objects otherwise stay in its arenas and the resident size never comes down.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from collections.abc import Callable

from server.fidelity.metrics import localize as core_localize
from server.fidelity.text import chunks as core_chunks
from server.lsp.store import Store

# the lang package loads tree-sitter grammars: touched only when a document of another language loaded it
_LANG_ANALYSIS = "server.fidelity.lang.analysis"
_LANG_LEX = "server.fidelity.lang.lex"
_LANG = "server.fidelity.lang"
_LANG_TOKEN_FACTOR = 25  # the lex cache's own estimate: its tokens cost ~25x the source bytes


def _chunk_bytes(c: core_chunks.Chunk) -> int:
    return core_chunks.CHUNK_BYTES_PER_CHAR * len(c.text) + core_chunks.CHUNK_BYTES_FIXED


def prune_held_trees() -> int:
    """Let go of the held chunks no cache holds (nothing reaches them again); returns how many."""
    cached = core_chunks.CHUNK_CACHE
    with core_chunks._held_lock:
        held = core_chunks._held
        keep = [c for c in held if (c.text, c.first) in cached]
        dropped = len(held) - len(keep)
        if dropped:
            for c in held:
                if (c.text, c.first) not in cached:
                    c._tree = None  # one still being made (not cached yet) parses again on demand
            held.clear()
            held.extend(keep)
    return dropped


def release_unowned(documents_open: int) -> None:
    """After a didClose: what the core's unowned memos keep of closed documents goes."""
    prune_held_trees()
    core_localize._piece.cache_clear()  # by text, no owner: a broken text still open re-scans in ms
    if documents_open == 0:
        if _LANG in sys.modules:
            sys.modules[_LANG].clear_caches()
        analysis = sys.modules.get(_LANG_ANALYSIS)
        if analysis is not None:
            with analysis._lock:
                analysis._CACHE.clear()


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def trim_heap() -> bool:
    """Give glibc's free pages back to the system; False where there is no malloc_trim."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def _entry(entries: int, bytes_: int, **more: int) -> dict[str, int]:
    # the owned caches' keys (owners: documents using them; these have none)
    return {"entries": entries, "bytes": bytes_, "owners": 0, **more}


def memo_stats() -> dict[str, dict[str, int]]:
    """The unowned memos as serverStats shows them beside the owned caches (bytes: estimated)."""
    cached = core_chunks.CHUNK_CACHE
    with core_chunks._held_lock:
        held = list(core_chunks._held)
    orphans = [c for c in held if (c.text, c.first) not in cached]
    pieces = core_localize._piece.cache_info()
    out = {
        # `entries`, `bytes`: held chunks no cache holds (what outlived the caches); `held`: all of them
        "heldTrees": _entry(len(orphans), sum(_chunk_bytes(c) for c in orphans), held=len(held)),
        # sizes unknown to functools.lru_cache: `entries` says whether anything is there
        "brokenPieces": _entry(pieces.currsize, 0, hits=pieces.hits, misses=pieces.misses),
        "sonarScores": _entry(len(core_chunks._sonar_memo), 350 * len(core_chunks._sonar_memo)),
    }
    lex = sys.modules.get(_LANG_LEX)
    analysis = sys.modules.get(_LANG_ANALYSIS)
    if lex is not None:
        out["langTokens"] = _entry(len(lex._CACHE), _LANG_TOKEN_FACTOR * lex._CACHE_BYTES[0])
    if analysis is not None:
        with analysis._lock:
            texts = [k[1] for k in analysis._CACHE]
        out["langAnalyses"] = _entry(len(texts), _LANG_TOKEN_FACTOR * sum(len(t) for t in texts))
    return out


def document_stats(store: Store, workspace_documents: int) -> dict[str, int]:
    """What the server keeps per open document: its states and the texts they hold (each string once)."""
    texts: dict[int, str] = {}

    def hold(*items: str | None) -> None:
        for t in items:
            if t is not None:
                texts[id(t)] = t

    for state in store.docs.values():
        hold(state.current.text, state.snapshot_text, state.observe_baseline)
        if state.observation is not None:
            hold(state.observation.baseline, state.observation.current)
        for own in state.own_edits:
            hold(own.expected, own.baseline, own.burst_baseline)
    for p in store.proposals.values():
        hold(p.original, p.edited)
    for applying in store.apply_states.values():
        hold(applying.expected_text)
    size = sum(sys.getsizeof(t) for t in texts.values())  # the strings' own memory, not their length
    return _entry(len(store.docs), size, workspace_documents=workspace_documents, proposals=len(store.proposals))
