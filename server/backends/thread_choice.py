"""Two decode threads only while they pay (pure: the caller passes the clock and applies the count).

Measured at start, two threads can win on an idle machine and then lose badly once the second core is
busy: each of the hundreds of barriers per token waits for a descheduled thread (the demo's 1.5B went
from 29 tokens/s to 0.7). So the rate is checked every WINDOW tokens while two threads run: below
DEMOTE of the one-thread rate measured at start, one thread is tried for a window and the faster of the
two kept; after a demotion two are tried again at the next request RETRY_S later.
"""

from __future__ import annotations

from collections.abc import Callable

WINDOW = 8  # tokens per measurement
DEMOTE = 0.75  # two threads below this share of the measured one-thread rate are suspect
RETRY_S = 300.0


class ThreadChoice:
    def __init__(self, best: int, one_thread_rate: float, set_threads: Callable[[int], None]) -> None:
        self.best = best  # what the start-up measurement chose
        self.threads = best
        self.one_thread_rate = one_thread_rate
        self._set = set_threads
        self._window_start: float | None = None
        self._count = 0
        self._two_thread_rate: float | None = None  # set while one thread is on trial against it
        self.demoted_at: float | None = None

    def _use(self, threads: int) -> None:
        if threads != self.threads:
            self.threads = threads
            self._set(threads)

    def request_started(self, now: float) -> None:
        self._window_start, self._count, self._two_thread_rate = None, 0, None
        if self.best == 2 and self.threads == 1 and self.demoted_at is not None and now - self.demoted_at >= RETRY_S:
            self.demoted_at = None
            self._use(2)

    def token(self, now: float) -> None:
        """One token decoded at `now` (monotonic seconds)."""
        if self.best != 2:
            return
        if self._window_start is None:
            self._window_start = now
            return
        self._count += 1
        if self._count < WINDOW:
            return
        rate = self._count / max(now - self._window_start, 1e-9)
        self._window_start, self._count = now, 0
        if self._two_thread_rate is not None:  # the trial window of one thread ends
            if rate >= self._two_thread_rate:
                self.demoted_at = now
            else:
                self._use(2)
            self._two_thread_rate = None
        elif self.threads == 2 and self.demoted_at is None and rate < self.one_thread_rate * DEMOTE:
            self._two_thread_rate = rate
            self._use(1)
