"""The analysis caches, bounded by (estimated) bytes and released per owner.

`analysis.analyze` and `chunks.chunk` cache per-text facts. A count bound alone lets a few large
files hold hundreds of MB (each cached character costs ~120 bytes of tokens, rows and normalised
text), and a long-running editor session would keep every file it ever saw. So each entry has an
estimated size, the caches evict least-recently-used entries past a byte cap, and entries carry the
owners that used them (the language server tags its measurements with the document's URI): releasing
an owner evicts the entries no other owner uses, so closing a document frees what only it needed.

Pure: no I/O. The owner is a thread-local set by `owned_by` around a computation (the server
measures in worker threads).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_local = threading.local()
DEFAULT_MAX_BYTES = 128 * 1024 * 1024


def current_owner() -> Hashable | None:
    return getattr(_local, "owner", None)


@contextmanager
def owned_by(owner: Hashable | None) -> Iterator[None]:
    """Entries used inside this block (in this thread) belong to `owner` too."""
    previous = current_owner()
    _local.owner = owner
    try:
        yield
    finally:
        _local.owner = previous


class _Entry(Generic[V]):
    __slots__ = ("owners", "size", "value")

    def __init__(self, value: V, size: int) -> None:
        self.value = value
        self.size = size
        self.owners: set[Hashable] | None = None


class ByteLRU(Generic[K, V]):
    """An LRU map bounded by entry count and by the sum of estimated entry sizes; thread-safe."""

    def __init__(
        self, name: str, make: Callable[[K], V], size_of: Callable[[K], int], *, max_entries: int, share: float
    ) -> None:
        self.name = name
        self.share = share  # of the byte cap all the caches share (`configure`)
        self._make = make
        self._size_of = size_of
        self.max_entries = max_entries
        self.max_bytes = int(DEFAULT_MAX_BYTES * share)
        self._entries: OrderedDict[K, _Entry[V]] = OrderedDict()
        self._by_owner: dict[Hashable, set[K]] = {}
        self._lock = threading.RLock()
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: K) -> V:
        owner = current_owner()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                self._own(key, entry, owner)
                return entry.value
        value = self._make(key)  # outside the lock: two threads may build the same entry, one wins
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = _Entry(value, self._size_of(key))
                self._entries[key] = entry
                self.bytes += entry.size
                self.misses += 1
            self._own(key, entry, owner)
            self._evict()
            return entry.value

    def touch(self, key: K) -> None:
        """Add the current owner to an entry that exists (its value was reached through another)."""
        owner = current_owner()
        if owner is None:
            return
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._own(key, entry, owner)

    def _own(self, key: K, entry: _Entry[V], owner: Hashable | None) -> None:
        if owner is None:
            return
        if entry.owners is None:
            entry.owners = set()
        if owner not in entry.owners:
            entry.owners.add(owner)
            self._by_owner.setdefault(owner, set()).add(key)

    def _drop(self, key: K) -> None:
        entry = self._entries.pop(key)
        self.bytes -= entry.size
        for owner in entry.owners or ():
            keys = self._by_owner.get(owner)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_owner[owner]

    def _evict(self) -> None:
        while self._entries and (len(self._entries) > self.max_entries or self.bytes > self.max_bytes):
            self._drop(next(iter(self._entries)))

    def release(self, owner: Hashable) -> int:
        """Forget `owner`; evict the entries it owned that no other owner holds. Returns how many."""
        with self._lock:
            keys = self._by_owner.pop(owner, set())
            evicted = 0
            for key in keys:
                entry = self._entries.get(key)
                if entry is None or entry.owners is None:
                    continue
                entry.owners.discard(owner)
                if not entry.owners:
                    self._entries.pop(key)
                    self.bytes -= entry.size
                    evicted += 1
            return evicted

    def configure(self, *, max_bytes: int | None = None, max_entries: int | None = None) -> None:
        with self._lock:
            if max_bytes is not None:
                self.max_bytes = max_bytes
            if max_entries is not None:
                self.max_entries = max_entries
            self._evict()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._by_owner.clear()
            self.bytes = 0

    def cache_clear(self) -> None:  # the functools.lru_cache spelling, for callers that use it
        self.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def owners(self) -> int:
        return len(self._by_owner)


_caches: list[ByteLRU] = []


def register(cache: ByteLRU) -> ByteLRU:
    _caches.append(cache)
    return cache


def configure(max_bytes: int) -> None:
    """One byte cap for all the caches together, each taking its share."""
    for c in _caches:
        c.configure(max_bytes=max(int(max_bytes * c.share), 0))


def release(owner: Hashable) -> int:
    """Release `owner` in every cache (a closed document)."""
    return sum(c.release(owner) for c in _caches)


def stats() -> dict[str, dict[str, int]]:
    return {
        c.name: {
            "entries": len(c),
            "bytes": c.bytes,
            "max_bytes": c.max_bytes,
            "owners": c.owners(),
            "hits": c.hits,
            "misses": c.misses,
        }
        for c in _caches
    }
