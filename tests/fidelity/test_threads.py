"""The fidelity core from many threads at once: every report equals the single-threaded one, and no
`SystemError: AST constructor recursion depth mismatch` (CPython 3.11, gh-106905; server/fidelity/text/pyast.py).

A conversion is interrupted only where a garbage collection inside it runs Python code. The core makes
no such garbage; the language server's event loop does (asyncio keeps its tasks in a WeakSet, whose
removal callback is Python code), and that is how the server's 4-thread pool met the error. So a thread
here keeps making that garbage while 8 threads measure with a 1 us switch interval. Without the lock
this fails on this machine in most runs (a handful of SystemErrors per run).
"""

from __future__ import annotations

import ast
import sys
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

import msgspec
import pytest

from server.fidelity import measure
from server.fidelity.metrics import localize
from server.fidelity.text import chunks, pyast, tokens
from server.fidelity.text.analysis import ANALYSIS_CACHE

THREADS = 8
PER_CORPUS = 24  # the most deeply nested programs of each corpus


def _depth(source: str) -> int:
    def down(node: ast.AST) -> int:
        return 1 + max((down(c) for c in ast.iter_child_nodes(node)), default=0)

    try:
        return down(pyast.parse(source))
    except (SyntaxError, ValueError, RecursionError):
        return 0


def _deepest(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(pairs, key=lambda p: -_depth(p[0]))[:PER_CORPUS]


def _clear_caches() -> None:
    ANALYSIS_CACHE.clear()
    chunks.clear_cache()
    localize._piece.cache_clear()
    with tokens._recent_lock:
        tokens._recent.clear()


def _report(pair: tuple[str, str]) -> bytes | str:
    try:
        return msgspec.json.encode(measure(pair[0], pair[1], gold=pair[1]))
    except Exception as exc:  # noqa: BLE001 - a SystemError is the failure this test looks for
        return f"{type(exc).__name__}: {exc}"


class _Task:
    """Stands for an asyncio task: in a cycle, and in a WeakSet (Python code runs when it is collected)."""


def _event_loop_garbage(stop: threading.Event, tasks: weakref.WeakSet) -> None:
    while not stop.is_set():
        for _ in range(20):
            task = _Task()
            task.me = task  # type: ignore[attr-defined]
            tasks.add(task)
        time.sleep(0.0005)


@pytest.fixture(scope="module")
def pairs(canitedit_problems: list[dict], overedit_tasks: list[dict]) -> list[tuple[str, str]]:
    canitedit = _deepest([(p["before"], p["after"]) for p in canitedit_problems])
    overedit = _deepest([(t["corrupted_solution"], t["canonical_solution"]) for t in overedit_tasks])
    nested = "def f(x):\n    return " + "(" * 40 + "x" + " + 1)" * 40 + "\n"  # converter recursion ~90 deep
    return [*canitedit, *overedit, (nested, nested.replace("+ 1)", "+ 2)", 3))]


def test_reports_from_eight_threads_equal_the_single_threaded_ones(pairs: list[tuple[str, str]]) -> None:
    _clear_caches()
    expected = [_report(p) for p in pairs]
    assert not [r for r in expected if isinstance(r, str)]
    work = [*range(len(pairs)), *reversed(range(len(pairs)))]  # each pair twice, by two threads at once
    stop = threading.Event()
    garbage = threading.Thread(target=_event_loop_garbage, args=(stop, weakref.WeakSet()), daemon=True)
    interval = sys.getswitchinterval()
    _clear_caches()
    garbage.start()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(THREADS) as pool:
            got = list(pool.map(lambda k: _report(pairs[k]), work))
    finally:
        sys.setswitchinterval(interval)
        stop.set()
        garbage.join()
    errors = [r for r in got if isinstance(r, str)]
    assert not errors, f"{len(errors)} of {len(work)} measurements raised, e.g. {errors[0]}"
    differ = [k for k, r in zip(work, got, strict=True) if r != expected[k]]
    assert differ == [], f"{len(differ)} reports differ from the single-threaded run"
