"""The Ray path's cost against the local path, on one machine, for the same sandbox executions.

    .venv/bin/python -m tools.bench.bench_ray [--tasks 20] [--slots 2] [--rounds 2]

The executions are CanItEdit's gold completions (a passing program: the test run and the coverage run
that ExcessCode needs). Each round judges all of them two ways, `--slots` at a time:

- local: `Suite.judge` on this process's sandbox (what `bench run` does without --ray);
- ray: `Cluster.judge` (what `bench run --ray` does) against a single-node Ray cluster this script
  starts (`ray.init(num_cpus=slots)`): submission, scheduling, the worker process and its own sandbox,
  pickling the task and the verdict, the await.

It prints the median latency of one execution each way, the overhead of the Ray path per execution
(ray minus local), and executions per second per core (throughput / slots). The first round warms the
worker processes up (their sandbox and imports); the figures are from the later rounds.

Then the same tasks' requests (`editFidelity.requestEdit` with the gold answer replayed) two ways:
through one language server started here (`LocalSessions`, what `bench run` does) and through one
session on the cluster (`SessionPool`, what `--ray-sessions 1` does): the Ray session path's overhead
per request, and requests per second of one session.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from benchmark import suites
from benchmark.arg_types import number_arg
from benchmark.run.answer_sources import Replay
from benchmark.run.cluster.judge import Cluster
from benchmark.run.cluster.sessions import SessionPool
from benchmark.run.local_sessions import Asker, LocalSessions, Sessions
from sandbox import Sandbox

Judge = Callable[[Any, str, str], Awaitable[Any]]


async def _timed(judge: Judge, work: list[tuple[Any, str, str]], slots: int) -> tuple[list[float], float]:
    sem = asyncio.Semaphore(slots)
    lat: list[float] = []

    async def one(task: Any, cond: str, completion: str) -> None:
        async with sem:
            t0 = time.perf_counter()
            v = await judge(task, cond, completion)
            lat.append(time.perf_counter() - t0)
            assert v.passed, f"{task.task_id}: gold failed ({v.exec_status})"

    t0 = time.perf_counter()
    await asyncio.gather(*(one(*w) for w in work))
    return lat, time.perf_counter() - t0


async def _asked(sessions: Sessions, suite: Any, tasks: list[Any], slots: int, log: Path) -> tuple[list[float], float]:
    """Each task's gold answer asked through `sessions` (`slots` at a time): latencies and wall time."""
    backend = Replay("gold")
    lat: list[float] = []
    sem = asyncio.Semaphore(slots)

    async def one(asker: Asker, task: Any) -> None:
        async with sem:
            with backend.staged(suite, task, "descriptive", 0):
                t0 = time.perf_counter()
                got = await asker.ask(task, "descriptive", "s0", name=task.task_id, style=None, n=1)
                lat.append(time.perf_counter() - t0)
        answer = got[0] if isinstance(got, list) else got
        assert answer.completion is not None, f"{task.task_id}: {answer.proposal.error}"

    with backend.serving(1, slots, "default") as backends:
        async with sessions(backends, log) as asker:
            await one(asker, tasks[0])  # the server's start and first request: not counted
            lat.clear()
            t0 = time.perf_counter()
            await asyncio.gather(*(one(asker, t) for t in tasks))
    return lat, time.perf_counter() - t0


def _noop_ms(ray: Any, n: int = 200) -> float:
    """The median round trip of a remote task that does nothing with a ~10 kB argument (a task's size)."""
    noop = ray.remote(num_cpus=1)(lambda payload: len(payload))
    payload = "x" * 10_000
    ray.get(noop.remote(payload))  # a warm worker
    lat = []
    for _ in range(n):
        t0 = time.perf_counter()
        ray.get(noop.remote(payload))
        lat.append(time.perf_counter() - t0)
    return statistics.median(lat) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.bench.bench_ray")
    positive = number_arg(int, 1)
    ap.add_argument("--tasks", type=positive, default=20)
    ap.add_argument("--slots", type=positive, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--rounds", type=positive, default=2)
    ap.add_argument("--data", default=os.environ.get("EDIT_FIDELITY_DATA"))
    args = ap.parse_args(argv)
    try:
        import ray
    except ImportError:
        print("bench_ray: needs ray (pip install 'edit-fidelity[ray]')", file=sys.stderr)
        return 2
    suite = suites.get("canitedit")
    tasks = suite.dataset.load(args.data, args.tasks)
    work = [(t, "descriptive", suite.solver.gold_answer(t, "descriptive") or "") for t in tasks]
    box = Sandbox(workers=args.slots)

    async def local(task: Any, cond: str, completion: str) -> Any:
        return await suite.scorer.judge(box, task, cond, completion)

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a private local cluster: no token written to ~/.ray
    t0 = time.perf_counter()
    ray.init(num_cpus=args.slots, include_dashboard=False, log_to_driver=False)
    start_s = time.perf_counter() - t0
    log = Path(tempfile.mkdtemp(prefix="bench-ray-")) / "ray.jsonl"
    cluster = Cluster(ray, suite, {}, log)
    noop_ms = _noop_ms(ray)
    results: dict[str, list[tuple[list[float], float]]] = {"local": [], "ray": []}
    asks: dict[str, tuple[list[float], float]] = {}
    try:
        for r in range(args.rounds):
            for name, judge in (("local", local), ("ray", cluster.judge)):
                lat, wall = asyncio.run(_timed(judge, work, args.slots))
                if r > 0 or args.rounds == 1:
                    results[name].append((lat, wall))
        for name, sessions in (("local", LocalSessions(suite)), ("ray", SessionPool(cluster, 1))):
            asks[name] = asyncio.run(_asked(sessions, suite, list(tasks), args.slots, log.parent / f"{name}.log"))
    finally:
        cluster.close()
        ray.shutdown()
        box.close()
    n = len(work)
    print(
        f"{n} CanItEdit gold executions (test run + coverage run each), {args.slots} slots, "
        f"{os.cpu_count()} CPUs here; ray.init took {start_s:.1f} s"
    )
    print(f"{'path':<10} {'median/exec':>12} {'p90/exec':>9} {'wall':>7} {'exec/s':>7} {'exec/s/core':>12}")
    med: dict[str, float] = {}
    for name, runs in results.items():
        lat = [x for ls, _ in runs for x in ls]
        wall = statistics.mean(w for _, w in runs)
        med[name] = statistics.median(lat)
        p90 = statistics.quantiles(lat, n=10)[-1] if len(lat) >= 10 else max(lat)
        print(
            f"{name:<10} {med[name] * 1000:>10.0f}ms {p90 * 1000:>7.0f}ms {wall:>6.2f}s {n / wall:>7.2f} "
            f"{n / wall / args.slots:>12.2f}"
        )
    print(
        f"Ray's floor: a no-op task with a task-sized argument, submitted and awaited one at a time: {noop_ms:.1f} ms"
    )
    print(
        f"Ray overhead per execution (median ray - median local): {(med['ray'] - med['local']) * 1000:.0f} ms "
        f"({(med['ray'] / med['local'] - 1) * 100:+.0f}%)"
    )
    print(f"\n{n} requests (requestEdit, gold replayed), {args.slots} in flight, one language-server session")
    print(f"{'session':<10} {'median/req':>12} {'p90/req':>9} {'wall':>7} {'req/s':>7}")
    for name, (lat, wall) in asks.items():
        p90 = statistics.quantiles(lat, n=10)[-1] if len(lat) >= 10 else max(lat)
        print(
            f"{name:<10} {statistics.median(lat) * 1000:>10.0f}ms {p90 * 1000:>7.0f}ms {wall:>6.2f}s {n / wall:>7.2f}"
        )
    over = statistics.median(asks["ray"][0]) - statistics.median(asks["local"][0])
    print(f"Ray session overhead per request (median ray - median local): {over * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
