"""Two decode threads dropped while they are slower than one (server.backends.thread_choice), on a
clock the test controls: the decision is the rates', never the machine's."""

from __future__ import annotations

from server.backends.thread_choice import RETRY_S, WINDOW, ThreadChoice


def run(choice: ThreadChoice, start: float, seconds_per_token: float, tokens: int) -> float:
    now = start
    for _ in range(tokens):
        now += seconds_per_token
        choice.token(now)
    return now


def make(best: int = 2, one_thread_rate: float = 20.0) -> tuple[ThreadChoice, list[int]]:
    applied: list[int] = []
    return ThreadChoice(best, one_thread_rate, applied.append), applied


def test_two_fast_threads_stay():
    choice, applied = make()
    choice.request_started(0.0)
    run(choice, 0.0, 1 / 25, 5 * WINDOW)  # 25 tokens/s: faster than one thread's 20
    assert choice.threads == 2 and applied == []


def test_slow_two_threads_are_dropped_when_one_does_better():
    choice, applied = make()
    choice.request_started(0.0)
    now = run(choice, 0.0, 1.0, WINDOW + 1)  # 1 token/s with two threads: one is tried
    assert applied == [1]
    now = run(choice, now, 1 / 10, WINDOW)  # one thread does 10 tokens/s: kept
    assert choice.threads == 1 and choice.demoted_at == now
    run(choice, now, 1.0, 3 * WINDOW)  # and stays, however slow, within this request
    assert applied == [1]


def test_one_thread_that_does_worse_gives_two_back():
    choice, applied = make()
    choice.request_started(0.0)
    now = run(choice, 0.0, 1 / 10, WINDOW + 1)  # two threads at 10/s: suspect against 20
    now = run(choice, now, 1 / 5, WINDOW)  # one thread at 5/s: worse, two come back
    assert applied == [1, 2] and choice.threads == 2 and choice.demoted_at is None


def test_two_threads_are_tried_again_a_while_after_the_drop():
    choice, applied = make()
    choice.request_started(0.0)
    now = run(choice, 0.0, 1.0, WINDOW + 1)
    now = run(choice, now, 1 / 10, WINDOW)
    choice.request_started(now + 1.0)  # too soon
    assert choice.threads == 1
    choice.request_started(now + RETRY_S)
    assert choice.threads == 2 and applied == [1, 2]


def test_one_thread_measured_or_configured_is_never_changed():
    for best in (1, 0):
        choice, applied = make(best=best)
        choice.request_started(0.0)
        run(choice, 0.0, 1.0, 4 * WINDOW)
        assert applied == []
