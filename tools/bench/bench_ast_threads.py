"""Throughput of the fidelity core from threads, with the process-wide AST converter lock, in one run.

    python -m tools.bench.bench_ast_threads [--data DIR] [--rounds N] [--threads N] [--unlocked]

Corpus: CanItEdit (before, after, gold=after) and the over-editing set (corrupted, canonical,
gold=canonical). Modes, every one over the whole corpus with every cache cleared first (analyses,
chunks, pieces, recent tokenisations), in rotated order each round so load drift hits all alike:
`serial` (this thread), `executor-1` (a 1-thread pool: the alternative to locking, all parsing on one
thread), `threads-N` (the language server's compute pool shape, the lock as shipped) and, with
`--unlocked`, `threads-N` with the lock replaced by nothing (unsafe on 3.11: counts the errors and
differing reports it causes). Prints pairs/s and the ratio to `serial` of the same round, whether
every report equals the serial one (msgspec-encoded), and how long the lock was held and waited for.
CPU seconds of the process are printed beside the wall clock: on a shared machine they move less.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType

import msgspec

from benchmark.suites.canitedit.problems import load as load_canitedit
from benchmark.suites.overedit.tasks import load as load_overedit
from server.fidelity import measure
from server.fidelity.metrics import localize
from server.fidelity.text import chunks, pyast, tokens
from server.fidelity.text.analysis import ANALYSIS_CACHE

Pair = tuple[str, str, str]  # original, edited, gold


def corpus(data: str | None) -> list[Pair]:
    pairs = [(p.before, p.after, p.after) for p in load_canitedit(data)]
    tasks, _ = load_overedit(data)
    return pairs + [(t.before, t.after, t.after) for t in tasks]


def clear_caches() -> None:
    ANALYSIS_CACHE.clear()
    chunks.clear_cache()
    localize._piece.cache_clear()
    with tokens._recent_lock:
        tokens._recent.clear()


def one(pair: Pair) -> bytes | str:
    try:
        return msgspec.json.encode(measure(pair[0], pair[1], gold=pair[2]))
    except Exception as exc:  # noqa: BLE001 - counted: the unlocked mode's SystemErrors land here
        return f"{type(exc).__name__}: {exc}"


def serial(pairs: list[Pair]) -> list[bytes | str]:
    return [one(p) for p in pairs]


def pooled(workers: int) -> Callable[[list[Pair]], list[bytes | str]]:
    def run(pairs: list[Pair]) -> list[bytes | str]:
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(one, pairs))

    return run


class _NoLock(pyast._Held):
    """No lock and collection as it was: the unsafe comparison."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        return None


class _Timed(pyast._Held):
    """The shipped lock, timing its waits and holds (a separate pass: the timing costs a little)."""

    __slots__ = ("_start",)
    waited = 0.0
    held = 0.0
    count = 0

    def __enter__(self) -> None:
        asked = time.perf_counter()
        super().__enter__()
        self._start = time.perf_counter()
        _Timed.waited += self._start - asked

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        _Timed.held += time.perf_counter() - self._start
        _Timed.count += 1
        super().__exit__(kind, exc, tb)


def with_lock(held: type[pyast._Held]) -> Callable[[Callable[[list[Pair]], list[bytes | str]]], Callable]:
    """Run a mode with `pyast._Held` swapped (both `pyast.parse` and the wrapped `ast.parse` look it up)."""

    def wrap(mode: Callable[[list[Pair]], list[bytes | str]]) -> Callable[[list[Pair]], list[bytes | str]]:
        def run(pairs: list[Pair]) -> list[bytes | str]:
            shipped = pyast._Held
            pyast._Held = held  # type: ignore[misc]
            try:
                return mode(pairs)
            finally:
                pyast._Held = shipped  # type: ignore[misc]

        return run

    return wrap


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", help="benchmark data directory (default: EDIT_FIDELITY_DATA)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every mode (best and median kept)")
    parser.add_argument("--threads", type=int, default=4, help="threads of the pooled mode (the server has 4)")
    parser.add_argument("--unlocked", action="store_true", help="also run the pooled mode without the lock")
    parser.add_argument("--limit", type=int, default=0, help="first N pairs only (quick runs)")
    args = parser.parse_args(argv)
    pairs = corpus(args.data)
    if args.limit:
        pairs = pairs[: args.limit]
    n = args.threads
    modes: dict[str, Callable[[list[Pair]], list[bytes | str]]] = {
        "serial": serial,
        "executor-1": pooled(1),
        f"threads-{n}": pooled(n),
    }
    if args.unlocked:
        modes[f"threads-{n} unlocked"] = with_lock(_NoLock)(pooled(n))
    print(
        f"python {sys.version.split()[0]}, {len(pairs)} pairs (CanItEdit + over-editing), "
        f"switch interval {sys.getswitchinterval()} s, {args.rounds} rounds",
        flush=True,
    )
    times: dict[str, list[float]] = {m: [] for m in modes}
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    ratios: dict[str, list[float]] = {m: [] for m in modes}
    reference: list[bytes | str] | None = None
    bad: dict[str, int] = dict.fromkeys(modes, 0)
    errors: dict[str, int] = dict.fromkeys(modes, 0)
    names = list(modes)
    for r in range(args.rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        spent: dict[str, float] = {}
        for name in order:
            clear_caches()
            start, start_cpu = time.perf_counter(), time.process_time()
            out = modes[name](pairs)
            spent[name] = time.perf_counter() - start
            cpu[name].append(time.process_time() - start_cpu)
            errors[name] += sum(isinstance(x, str) for x in out)
            if name == "serial" and reference is None:
                reference = out
            elif reference is not None:
                bad[name] += sum(a != b for a, b in zip(out, reference, strict=True))
        for name in names:
            times[name].append(spent[name])
            ratios[name].append(spent["serial"] / spent[name])
        print(f"round {r + 1}: " + ", ".join(f"{m} {spent[m]:.2f} s" for m in names), flush=True)
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; ratio = serial time / mode time, same round"
    )
    head = f"{'mode':22s} {'best s':>7s} {'median s':>8s} {'pairs/s':>8s} {'vs serial':>9s} {'CPU s':>6s} {'CPU vs serial':>13s}"
    print(f"\n{head}  reports")
    serial_cpu = statistics.median(cpu["serial"])
    for name in names:
        best, med, med_cpu = min(times[name]), statistics.median(times[name]), statistics.median(cpu[name])
        ratio = statistics.median(ratios[name])
        check = "identical" if not bad[name] and not errors[name] else f"{bad[name]} differ, {errors[name]} raised"
        print(
            f"{name:22s} {best:7.2f} {med:8.2f} {len(pairs) / med:8.1f} {ratio:8.2f}x {med_cpu:6.2f} "
            f"{serial_cpu / med_cpu:12.2f}x  {check}"
        )
    print()
    for name, mode in (("serial", serial), (f"threads-{n}", pooled(n))):
        _Timed.waited = _Timed.held = 0.0
        _Timed.count = 0
        clear_caches()
        start = time.perf_counter()
        with_lock(_Timed)(mode)(pairs)
        wall = time.perf_counter() - start
        print(
            f"lock in {name} (timed pass, {wall:.2f} s): {_Timed.count} acquisitions, held {_Timed.held:.2f} s "
            f"({100 * _Timed.held / wall:.1f}% of wall, {1e6 * _Timed.held / max(_Timed.count, 1):.0f} us each), "
            f"waited {_Timed.waited:.2f} s in all threads ({1e6 * _Timed.waited / max(_Timed.count, 1):.0f} us each)"
        )
    return 1 if any(bad[m] or errors[m] for m in names if "unlocked" not in m) else 0


if __name__ == "__main__":
    raise SystemExit(main())
