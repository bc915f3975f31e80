"""The machine's single-thread memory bandwidth, measured: decoding is bound by it (every weight is read
once per token), so bandwidth / bytes per token is the speed a model can reach here at best."""

from __future__ import annotations

import time

PROBE_BYTES = 256 << 20  # larger than any last-level cache


def copy_bandwidth(size: int = PROBE_BYTES, rounds: int = 3) -> float:
    """Bytes copied per second by one thread (memcpy through memoryviews), the best of `rounds`; the
    first copy, which faults the pages in, is not counted."""
    src = bytearray(size)
    dst = bytearray(size)
    view = memoryview(dst)
    view[:] = src  # fault the pages in
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        view[:] = src
        best = min(best, time.perf_counter() - t)
    return size / best


def read_bandwidth(size: int = PROBE_BYTES, rounds: int = 3) -> float | None:
    """Bytes read per second by one thread (numpy's max over uint64, which streams without writing);
    None without numpy."""
    try:
        import numpy as np
    except ImportError:
        return None
    data = np.ones(size // 8, dtype=np.uint64)
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        data.max()
        best = min(best, time.perf_counter() - t)
    return size / best
