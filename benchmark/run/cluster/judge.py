"""`bench run --ray ADDRESS`: the sandbox executions of a run as Ray tasks on a cluster.

The engine, its one results store (resume semantics, records summed in a fixed order) and the backend
stay on the machine that runs `bench run`; so do the language-server sessions unless `--ray-sessions`
moves them onto the cluster too (`benchmark.run.cluster.sessions`). Each execution is one task (`num_cpus=1`)
carrying the suite's name and options, the task (its tests included: nodes need no data directory) and
the completion; it returns the suite's own `Verdict`, so a verdict is the same whichever node computed
it and the records equal a single-machine run's. The necessity analysis' sub-edit runs (`--necessity`)
are tasks of the same kind (`passes_here`).

- Sandbox environments: each worker process prepares the suite's environments it needs once
  (`sandbox.envs.prepare` is idempotent and locked across processes) and says so in the run's
  `ray.jsonl`, beside one line per execution naming the node that ran it.
- Backpressure: at most as many executions in flight as the cluster has CPU slots (a semaphore sized
  by `ray.cluster_resources()`, less the CPUs the sessions hold), so a long run does not queue its whole
  plan in the cluster.
- A node that dies: Ray retries the tasks it was running (`max_retries`, system failures only) on the
  nodes left; when the retries are spent the judge raises, which the engine stores as a sandbox error
  (retryable, run again at the end of the run and on `--resume`), never as a model failure.

Ray is the optional extra `edit-fidelity[ray]`, imported only here and only for `--ray`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmark import suites
from benchmark.run.cluster.sessions import SessionPool
from benchmark.run.cluster.trace import trace
from benchmark.run.preflight import PreflightError
from benchmark.suite import Suite, Task, Verdict
from sandbox import Sandbox, envs

logger = logging.getLogger(__name__)

TASK_RETRIES = 3  # system failures (a worker or node that died) only; a judge's own exception is not retried
INSTALL = "pip install 'edit-fidelity[ray]'"


@dataclass(frozen=True)
class Executed:
    """What one remote execution sends back: the verdict and where it ran. Pickled by Ray, so the
    verdict keeps the suite's own Verdict class (its extra fields: coverage, ExcessCode, ...)."""

    verdict: Verdict
    node_id: str
    pid: int
    prepared: list[str] = field(default_factory=list)  # this worker's first execution: its environments
    seconds: float = 0.0


# -- the worker side: one sandbox per Ray worker process, kept between its tasks -----------------------
_worker: dict[tuple[str, str], tuple[Suite[Any], Any]] = {}
_prepared: set[str] = set()  # the environments this worker process has checked or prepared
_worker_lock = threading.Lock()


def _worker_state(suite_name: str, options: dict[str, str], task: Task) -> tuple[Suite[Any], Any, list[str]]:
    key = (suite_name, json.dumps(options, sort_keys=True))
    notes: list[str] = []
    with _worker_lock:
        if key not in _worker:
            suite = suites.get(suite_name, options)
            _worker[key] = (suite, Sandbox(workers=1))  # one execution at a time per worker (num_cpus=1)
        suite, box = _worker[key]
        for env in suite.sandbox_envs([task]):
            if env in _prepared:
                continue
            if envs.is_prepared(env):
                notes.append(f"sandbox environment {env} already prepared on this node")
            else:
                t0 = time.monotonic()
                envs.prepare(env, log=lambda _m: None)
                notes.append(f"prepared sandbox environment {env} on this node in {time.monotonic() - t0:.1f} s")
            _prepared.add(env)
    return suite, box, notes


def judge_here(suite_name: str, options: dict[str, str], task: Task, condition: str, completion: str) -> Executed:
    """The body of the remote task (also callable in-process: the Ray path's work without Ray)."""
    t0 = time.perf_counter()
    time.sleep(trace("start", task))
    suite, box, notes = _worker_state(suite_name, options, task)
    verdict = asyncio.run(suite.scorer.judge(box, task, condition, completion))
    trace("end", task)
    try:
        import ray

        node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local"
    except ImportError:
        node = "local"
    return Executed(verdict, node, os.getpid(), notes, time.perf_counter() - t0)


def passes_here(suite_name: str, options: dict[str, str], task: Task, condition: str, text: str) -> bool | None:
    """The necessity analysis' question about one sub-edit (`Suite.passes`), on a node."""
    suite, box, _notes = _worker_state(suite_name, options, task)
    return asyncio.run(suite.scorer.passes(box, task, condition, text))


# -- the driver side ----------------------------------------------------------------------------------
class Cluster:
    """The run's side of the cluster: its judge, its necessity runs and its sessions (`drive(engine)`)."""

    def __init__(self, ray: Any, suite: Suite[Any], options: dict[str, str], log_path: Path) -> None:
        self.ray = ray
        self.suite = suite
        self.options = dict(options)
        # SPREAD: the executions go round the nodes rather than filling the driver's node first
        task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES, retry_exceptions=False, scheduling_strategy="SPREAD")
        self._remote = task(judge_here)
        self._passes = task(passes_here)
        self.cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.slots = self.cpus
        self.sessions = 0  # language-server sessions on the cluster (`reserve`)
        self.serve_host = "127.0.0.1"
        self._sem: asyncio.Semaphore | None = None
        self._labels = node_labels(ray)
        self._log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115  # open for the run's length
        self._log_lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.executed = 0
        self.by_node: dict[str, int] = {}
        self.write({"event": "connected", "slots": self.slots, "nodes": self._labels})

    def write(self, entry: dict[str, Any]) -> None:
        with self._log_lock:
            self._log.write(json.dumps(entry, sort_keys=True) + "\n")
            self._log.flush()

    def label(self, node_id: str) -> str:
        if node_id not in self._labels:  # a node that joined during the run
            self._labels = node_labels(self.ray)
        return self._labels.get(node_id, node_id[:12])

    def reserve(self, sessions: int) -> None:
        """`--ray-sessions`: each session holds a CPU, the executions get the ones left; the run's own
        endpoints (replay, balancer, vLLM) listen where the sessions' nodes reach them."""
        if sessions >= self.cpus:
            raise PreflightError(
                f"--ray-sessions {sessions}: the cluster has {self.cpus} CPUs and each session holds one; "
                "leave at least one for the sandbox executions"
            )
        self.sessions = sessions
        self.slots = self.cpus - sessions
        self.serve_host = str(self.ray.util.get_node_ip_address())  # this machine, as the nodes reach it
        self.write({"event": "reserved", "sessions": sessions, "slots": self.slots, "serve_host": self.serve_host})

    def drive(self, engine: Any) -> None:
        """The engine's sandbox runs (judge, necessity sub-edits) as Ray tasks; with sessions, its requests
        to language servers on the nodes."""
        engine.judge, engine.passes = self.judge, self.passes
        if self.sessions:
            engine.sessions = SessionPool(self, self.sessions, engine.server_command)
            engine.serve_host = self.serve_host

    async def _bounded(self, ref_of: Any) -> Any:
        if self._sem is None:  # made in the run's event loop
            self._sem = asyncio.Semaphore(self.slots)
        async with self._sem:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                return await ref_of()
            finally:
                self.in_flight -= 1

    async def passes(self, task: Task, condition: str, text: str) -> bool | None:
        got: bool | None = await self._bounded(
            lambda: self._passes.remote(self.suite.name, self.options, task, condition, text)
        )
        self.write({"event": "necessity_run", "task_id": task.task_id, "condition": condition})
        return got

    async def judge(self, task: Task, condition: str, completion: str) -> Verdict:
        done: Executed = await self._bounded(
            lambda: self._remote.remote(self.suite.name, self.options, task, condition, completion)
        )
        node = self.label(done.node_id)
        self.executed += 1
        self.by_node[node] = self.by_node.get(node, 0) + 1
        for note in done.prepared:
            self.write({"event": "environment", "node": node, "node_id": done.node_id, "pid": done.pid, "note": note})
        self.write(
            {
                "event": "executed",
                "task_id": task.task_id,
                "condition": condition,
                "node": node,
                "node_id": done.node_id,
                "pid": done.pid,
                "seconds": round(done.seconds, 4),
            }
        )
        return done.verdict

    def close(self) -> None:
        self.write(
            {"event": "closed", "executed": self.executed, "by_node": self.by_node, "max_in_flight": self.max_in_flight}
        )
        self._log.close()


def node_labels(ray: Any) -> dict[str, str]:
    """Node id -> a readable name: its custom resources (e.g. `head`, `worker`), else its address."""
    out = {}
    for n in ray.nodes():
        custom = sorted(
            k
            for k in n.get("Resources", {})
            if k not in ("CPU", "GPU", "memory", "object_store_memory") and not k.startswith("node:")
        )
        out[n["NodeID"]] = "+".join(custom) or n.get("NodeManagerAddress", n["NodeID"][:12])
    return out


def check_address(address: str) -> None:
    """Before anything is written: the address's form, the extra's presence, a head that answers."""
    import importlib.util

    if address != "auto" and (":" not in address or not address.rsplit(":", 1)[1].isdigit()):
        raise PreflightError(f"--ray {address}: expected HOST:PORT of the cluster's head (or auto)")
    if importlib.util.find_spec("ray") is None:
        raise PreflightError(f"--ray needs the `ray` package: {INSTALL}")
    head = _resolve_auto() if address == "auto" else address
    if head and ":" in head and head.rsplit(":", 1)[1].isdigit():
        # ray.init waits minutes for a head that is not there; a connect says it at once
        host, port = head.rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=10).close()
        except OSError as exc:
            raise PreflightError(
                f"--ray {address}: no Ray head answers at {head} ({exc.strerror or exc}); start one "
                "with `ray start --head --port PORT`, or fix the address"
            ) from None


def _resolve_auto() -> str:
    """`auto`: the cluster RAY_ADDRESS names, else the one `ray start` left on this machine ("" where this
    Ray cannot say: `ray.init` then does)."""
    try:
        from ray._private.services import canonicalize_bootstrap_address_or_die
    except ImportError:
        return ""
    try:
        return str(canonicalize_bootstrap_address_or_die("auto"))
    except ConnectionError:
        raise PreflightError(
            "--ray auto: no running Ray cluster found on this machine and RAY_ADDRESS is not set; "
            "start one with `ray start --head`, or give its address"
        ) from None


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise PreflightError(f"--ray needs the `ray` package: {INSTALL}") from None
    return ray


@contextmanager
def connect(
    address: str, suite: Suite[Any], options: dict[str, str], log_path: Path, *, sessions: int = 0
) -> Iterator[Cluster]:
    """Joins the cluster at `address` (`auto`: the one this machine belongs to) for the run's length."""
    check_address(address)
    ray = import_ray()
    try:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise PreflightError(
            f"--ray {address}: cannot join the cluster ({' '.join(str(exc).split())[:300]}); "
            "start it with `ray start --head`, or fix the address"
        ) from None
    try:
        cluster = Cluster(ray, suite, options, log_path)
        try:
            if sessions:
                cluster.reserve(sessions)
            yield cluster
        finally:
            cluster.close()
    finally:
        ray.shutdown()
