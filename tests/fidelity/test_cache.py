"""The analysis caches: bounded by estimated bytes, entries released per owner, shared ones kept."""

from __future__ import annotations

import threading

from server.fidelity.text.cache import ByteLRU, owned_by


def make(max_bytes: int = 1000, max_entries: int = 100) -> tuple[ByteLRU[str, str], list[str]]:
    built: list[str] = []

    def build(key: str) -> str:
        built.append(key)
        return key.upper()

    cache: ByteLRU[str, str] = ByteLRU("t", build, len, max_entries=max_entries, share=1.0)
    cache.configure(max_bytes=max_bytes)
    return cache, built


def test_bytes_bound_evicts_least_recently_used():
    cache, built = make(max_bytes=10)
    assert cache.get("aaaa") == "AAAA" and cache.get("bbbb") == "BBBB"
    cache.get("aaaa")  # a hit: now the most recent
    cache.get("cccc")  # 12 bytes > 10: the least recent (bbbb) goes
    assert "bbbb" not in cache and "aaaa" in cache and cache.bytes == 8
    assert built == ["aaaa", "bbbb", "cccc"] and cache.hits == 1
    cache.get("x" * 11)  # larger than the cap: it cannot stay either
    assert len(cache) == 0 and cache.bytes == 0


def test_release_keeps_entries_another_owner_uses():
    cache, _ = make()
    with owned_by("doc-a"):
        cache.get("shared")
        cache.get("only-a")
    with owned_by("doc-b"):
        cache.get("shared")
    cache.get("nobody")  # measured outside any document (a benchmark): only the bounds evict it
    assert cache.owners() == 2
    assert cache.release("doc-a") == 1
    assert "only-a" not in cache and "shared" in cache and "nobody" in cache
    assert cache.release("doc-b") == 1 and "shared" not in cache and cache.owners() == 0
    assert cache.release("doc-b") == 0
    assert cache.bytes == len("nobody")


def test_owner_is_per_thread():
    cache, _ = make()
    seen: list[object] = []
    with owned_by("main"):
        t = threading.Thread(target=lambda: seen.append(cache.get("other-thread")))
        t.start()
        t.join()
    assert seen == ["OTHER-THREAD"] and cache.owners() == 0
