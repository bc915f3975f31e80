"""`bench run --ray ADDRESS --ray-sessions N`: the language-server sessions of a run as Ray actors.

Where the server side is the bottleneck (a model serving faster than one `python -m server.lsp` can turn
answers into edits and reports), N sessions run on the cluster's nodes, spread across them: each actor
starts its own language server on its node, exactly as `bench run` does here, and runs the suite's own
`ask` there (didOpen, `editFidelity.requestEdit`, didClose), so a proposal is the same whichever node
computed it. The engine, its store and its backend stay here; the backend's own endpoints (the replay
endpoint, the balancer) then listen on this machine's cluster address so that the nodes reach them.

- Each session reserves one CPU of the cluster (a server is one busy process); the sandbox executions
  get the CPUs left (`judge.Cluster.reserve`).
- Requests go to the live session with the fewest outstanding requests.
- A session that dies (its node died, its process was killed) loses only its in-flight requests: each
  one is sent again to another session (a fresh document there; the answer is the same). When every
  session is gone one new session is started; when that fails too the run ends as a failure of the
  server (`ServerUnavailable`: the records stay, `--resume` goes on), never as model failures. A server
  that dies inside a live session is restarted there (`LocalSessions`); its lost request is an error
  record of its sample (`server_error`), run again at the end of the run.
- Before the first request each session checks from its node that the backend's endpoints answer and
  that an `apiKeyEnv` variable is set there: a node that cannot reach the model is an error, loudly.
- Each session's server log comes back into the run directory (`server-session-I.log`) when it ends.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from benchmark import suites
from benchmark.run.cluster.trace import trace
from benchmark.run.local_sessions import Asker, LocalSessions
from benchmark.run.session import ServerError, ServerGone, ServerUnavailable
from benchmark.suite import Answer, Suite, Task

ASK_RETRIES = 3  # a request whose session died is sent again, to another session, this many times
START_TIMEOUT_S = 180.0  # placing an actor (a free CPU) and starting its server
LOG_TAIL = 1 << 20  # the last MiB of a session's server log comes back


class SessionStartError(Exception):
    pass


class Cluster(Protocol):
    """What the sessions need of the run's cluster (`judge.Cluster`): Ray, the suite, its log."""

    ray: Any
    suite: Suite[Any]
    options: dict[str, str]

    def label(self, node_id: str) -> str: ...

    def write(self, entry: dict[str, Any]) -> None: ...


def unreachable(backends: list[dict]) -> list[str]:
    """What this node cannot use of the backends: an endpoint that does not answer, a key not set."""
    problems: list[str] = []
    for url in sorted({b["baseUrl"] for b in backends if b.get("baseUrl") not in (None, "local")}):
        try:
            with urllib.request.urlopen(f"{url.rstrip('/')}/models", timeout=15):  # noqa: S310  # the run's endpoint
                pass
        except urllib.error.HTTPError:
            pass  # it answered (401, 404, ...): reachable; the request itself says what is wrong
        except (OSError, ValueError) as exc:
            problems.append(f"{url} does not answer from this node ({getattr(exc, 'reason', exc)})")
    for var in sorted({b["apiKeyEnv"] for b in backends if b.get("apiKeyEnv")}):
        if not os.environ.get(var):
            problems.append(f"{var} is not set on this node (set it in the environment of its `ray start`)")
    return problems


class SessionActor:
    """One language server on a node, the suite's `ask` beside it (a Ray actor: `ray.remote(...)(...)`)."""

    def __init__(
        self, suite_name: str, options: dict[str, str], backends: list[dict], command: list[str] | None
    ) -> None:
        self.suite = suites.get(suite_name, options)
        self.backends = backends
        self.command = command
        self.log = Path(tempfile.mkdtemp(prefix="edit-fidelity-session-")) / "server.log"
        # the server restarted on this node when it dies, as a local run's (`LocalSessions`)
        self._open: AbstractAsyncContextManager[Asker] | None = None
        self.asker: Asker | None = None

    async def start(self) -> dict[str, Any]:
        import ray

        if problems := await asyncio.to_thread(unreachable, self.backends):
            raise SessionStartError("; ".join(problems))
        self._open = LocalSessions(self.suite, self.command)(self.backends, self.log)
        self.asker = await self._open.__aenter__()
        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    async def ask(
        self, task: Task, condition: str, backend: str, name: str, style: str | None, n: int
    ) -> Answer | list[Answer]:
        assert self.asker is not None, "start() first"
        await asyncio.sleep(trace("ask-start", task))
        try:
            return await self.asker.ask(task, condition, backend, name=name, style=style, n=n)
        finally:
            trace("ask-end", task)

    async def stop(self) -> str:
        """Ends the server; its log's tail."""
        if self._open is not None:
            await self._open.__aexit__(None, None, None)
            self._open = self.asker = None
        try:
            with open(self.log, "rb") as fh:
                fh.seek(max(0, os.path.getsize(self.log) - LOG_TAIL))
                return fh.read().decode(errors="replace")
        except OSError:
            return ""
        finally:
            shutil.rmtree(self.log.parent, ignore_errors=True)


@dataclass
class _Session:
    index: int
    actor: Any
    node: str = "?"
    outstanding: int = 0
    asked: int = 0
    lost: str | None = None  # why it is gone; None while it serves


class SessionPool:
    """The engine's `sessions` with `--ray-sessions N` (`engine.sessions = pool`)."""

    def __init__(self, cluster: Cluster, count: int, command: list[str] | None = None) -> None:
        self.cluster = cluster
        self.count = count
        self.command = command
        self._sessions: list[_Session] = []
        self._backends: list[dict] = []
        self._replacing: asyncio.Lock | None = None
        self._remote = cluster.ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0, scheduling_strategy="SPREAD")(
            SessionActor
        )

    def __call__(self, backends: list[dict], log: Path) -> AbstractAsyncContextManager[SessionPool]:
        return self._open(backends, log.parent)

    @asynccontextmanager
    async def _open(self, backends: list[dict], run_dir: Path) -> AsyncIterator[SessionPool]:
        self._backends = backends
        self._replacing = asyncio.Lock()
        try:
            started = await asyncio.gather(*(self._start() for _ in range(self.count)), return_exceptions=True)
            if errors := [e for e in started if isinstance(e, BaseException)]:
                raise errors[0]
            yield self
        finally:
            await self._stop_all(run_dir)

    async def _start(self) -> _Session:
        actor = self._remote.remote(self.cluster.suite.name, self.cluster.options, self._backends, self.command)
        s = _Session(len(self._sessions), actor)
        self._sessions.append(s)
        try:
            info = await asyncio.wait_for(s.actor.start.remote(), START_TIMEOUT_S)
        except TimeoutError:
            s.lost = "not started"
            raise ServerUnavailable(
                f"a language-server session could not start on the cluster in {START_TIMEOUT_S:.0f} s "
                f"(each needs a free CPU: {self.count} sessions asked for)"
            ) from None
        except Exception as exc:  # noqa: BLE001  # Ray wraps the actor's own error
            s.lost = "not started"
            cause = getattr(exc, "cause", None) or exc
            raise ServerUnavailable(f"a language-server session could not start on the cluster: {cause}") from None
        s.node = self.cluster.label(info["node_id"])
        self.cluster.write({"event": "session", "session": s.index, "node": s.node, "pid": info["pid"]})
        return s

    def _pick(self) -> _Session | None:
        live = [s for s in self._sessions if s.lost is None]
        return min(live, key=lambda s: (s.outstanding, s.asked, s.index)) if live else None

    async def _any(self) -> _Session:
        """A live session; when every one is gone, one started anew (else the run ends: ServerUnavailable)."""
        assert self._replacing is not None
        if (s := self._pick()) is not None:
            return s
        async with self._replacing:
            if (s := self._pick()) is not None:  # another request replaced it meanwhile
                return s
            return await self._start()

    async def ask(
        self, task: Task, condition: str, backend: str, *, name: str, style: str | None, n: int
    ) -> Answer | list[Answer]:
        import ray

        problems: list[str] = []
        for _ in range(ASK_RETRIES + 1):
            s = await self._any()
            s.outstanding += 1
            t0 = time.perf_counter()
            try:
                got = await s.actor.ask.remote(task, condition, backend, name, style, n)
            except ray.exceptions.RayActorError as exc:  # the session (its node, its process) died
                problems.append(f"session {s.index} on {s.node}: {type(exc).__name__}")
                self._lose(s, task, problems[-1])
                continue
            except ray.exceptions.RayTaskError as exc:  # the session's server failed: as a local run's would
                cause = exc.cause if isinstance(exc.cause, Exception) else exc
                if isinstance(cause, ServerUnavailable):  # its server cannot be had again: another session
                    self._lose(s, task, f"session {s.index} on {s.node}: {cause}")
                    raise ServerGone(f"language server on {s.node}: {cause}") from None
                error = ServerGone if isinstance(cause, ServerGone) else ServerError
                raise error(f"language server on {s.node}: {cause}") from None
            finally:
                s.outstanding -= 1
            s.asked += 1
            self.cluster.write(
                {
                    "event": "asked",
                    "task_id": task.task_id,
                    "condition": condition,
                    "session": s.index,
                    "node": s.node,
                    "seconds": round(time.perf_counter() - t0, 4),
                }
            )
            return got
        raise ServerGone(f"requestEdit for {task.task_id} lost its session {len(problems)} times: {problems[-1]}")

    def _lose(self, s: _Session, task: Task, why: str) -> None:
        if s.lost is None:
            s.lost = why
            self.cluster.write({"event": "session_lost", "session": s.index, "node": s.node, "during": task.task_id})

    async def _stop_all(self, run_dir: Path) -> None:
        async def stop(s: _Session) -> None:
            if s.lost is None:
                try:
                    text = await asyncio.wait_for(s.actor.stop.remote(), 30)
                    (run_dir / f"server-session-{s.index}.log").write_text(text, encoding="utf-8")
                except Exception as exc:  # noqa: BLE001  # ending the run must not fail on a session's end
                    self.cluster.write({"event": "session_stop_failed", "session": s.index, "error": str(exc)[:200]})
            self.cluster.ray.kill(s.actor)

        await asyncio.gather(*(stop(s) for s in self._sessions))
        self.cluster.write(
            {
                "event": "sessions_closed",
                "asked": {str(s.index): s.asked for s in self._sessions},
                "lost": sum(s.lost is not None for s in self._sessions),
            }
        )
