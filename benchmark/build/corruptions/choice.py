"""Deterministic choices for the corruption generator.

Every draw is a SHA-256 of (seed, key, draw number): the same seed and key give the same choices on any
interpreter and platform, with no dependence on Python's randomised `hash` or on `random`'s internals.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


class Chooser:
    def __init__(self, seed: int, key: str) -> None:
        self._prefix = f"{seed}\x1f{key}\x1f".encode()
        self._draws = 0

    def below(self, n: int) -> int:
        """A number in [0, n)."""
        if n <= 0:
            raise ValueError("below(n) needs n >= 1")
        self._draws += 1
        digest = hashlib.sha256(self._prefix + str(self._draws).encode()).digest()
        return int.from_bytes(digest[:8], "big") % n

    def coin(self) -> bool:
        return self.below(2) == 1

    def pick(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):  # Fisher-Yates
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out
