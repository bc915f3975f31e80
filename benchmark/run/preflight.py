"""Checks before the first sample of `bench run`: what would fail every sample fails here instead, as
one line with the fix and exit status 2, before anything is written (a dead endpoint, a key variable
that is not set, a sandbox environment not prepared, a recorded run of another suite).

Also the run's identity beyond its options (`RunConfig.tasks_digest`, `backend_digest`, `sandbox`):
what `--resume` must find unchanged for the stored verdicts to stay comparable with new ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from benchmark.run.answer_sources import Backend, OpenAI
from benchmark.suite import Suite, Task
from sandbox import envs
from sandbox.docker_backend import DockerBackend
from server.errors import UserError

STAMP = ".edit-fidelity-stamp"  # sandbox/envs.py: the hash of what an environment was prepared with


class PreflightError(UserError):
    """A check that every sample would fail: what is wrong and the command that fixes it."""


def check_key(backend: Backend) -> None:
    if isinstance(backend, OpenAI) and backend.api_key_env and not os.environ.get(backend.api_key_env):
        raise PreflightError(
            f"--api-key-env {backend.api_key_env}: that environment variable is not set: "
            f"export {backend.api_key_env}=YOUR_KEY, or leave out --api-key-env for an endpoint "
            "without a key"
        )


def _http(url: str, key: str | None, body: dict | None, timeout_s: float) -> tuple[int, bytes]:
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if body is not None else "GET")  # noqa: S310
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:  # noqa: S310  # the user's own endpoint
            return resp.status, resp.read(1 << 20)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(4096) if exc.fp is not None else b""


def _message(raw: bytes) -> str:
    try:
        doc = json.loads(raw)
        msg = doc.get("error", {}).get("message") if isinstance(doc.get("error"), dict) else doc.get("error")
        text = str(msg or doc)
    except (ValueError, AttributeError):
        text = raw.decode("utf-8", "replace")
    return " ".join(text.split())[:200]


def check_backend(backend: Backend, *, timeout_s: float = 15.0) -> None:
    """An OpenAI-protocol endpoint answers `GET /models` (and lists the model, when it lists any), or
    a one-token chat request where it has no model list."""
    if not isinstance(backend, OpenAI):
        return  # replayed answers come from our own endpoint
    if backend.base_url == "local":
        return  # the server judges the embedded model (its runtime, the model named); a run it refuses ends at start
    base = backend.base_url.rstrip("/")
    key = os.environ.get(backend.api_key_env) if backend.api_key_env else None
    fix = "start the server, or fix --base-url"
    try:
        status, raw = _http(f"{base}/models", key, None, timeout_s)
        if status in (404, 405, 501):  # no model list: ask for one token instead
            status, raw = _http(
                f"{base}/chat/completions",
                key,
                {"model": backend.model, "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1},
                timeout_s,
            )
    except urllib.error.URLError as exc:
        reason = getattr(exc.reason, "strerror", None) or exc.reason
        raise PreflightError(f"backend {base} does not answer ({reason}): {fix}") from None
    except (TimeoutError, OSError) as exc:
        raise PreflightError(f"backend {base} does not answer ({exc.__class__.__name__}: {exc}): {fix}") from None
    except ValueError as exc:  # urllib: a URL it cannot use
        raise PreflightError(f"--base-url {backend.base_url}: {exc}; e.g. http://127.0.0.1:8000/v1") from None
    if status in (401, 403):
        where = (
            f"the key in ${backend.api_key_env}"
            if backend.api_key_env
            else "a request without a key (--api-key-env VAR)"
        )
        raise PreflightError(f"backend {base} refused {where} (HTTP {status}: {_message(raw)}): check the key")
    if status != 200:
        raise PreflightError(f"backend {base} answered HTTP {status} ({_message(raw)}): check --base-url and --model")
    try:
        listed = [str(m.get("id")) for m in json.loads(raw).get("data") or [] if isinstance(m, dict)]
    except (ValueError, AttributeError):
        listed = []
    if listed and backend.model not in listed:
        raise PreflightError(f"backend {base} serves {', '.join(listed[:8])}, not --model {backend.model}: fix --model")


def check_tasks(suite: Suite, tasks: Sequence[Task], conditions: Sequence[str]) -> int:
    """The number of samples per sample index the run asks for; no task at all is an error."""
    pairs = sum(len(suite.dataset.task_conditions(t, conditions)) for t in tasks)
    if not pairs:
        raise PreflightError(
            f"suite {suite.name}: no task to run with conditions {', '.join(conditions)} "
            "(check --data, --limit and --conditions)"
        )
    return pairs


def check_envs(suite: Suite, tasks: Sequence[Task]) -> None:
    for env in suite.sandbox_envs(tasks):
        if env not in envs.SUITES:
            raise PreflightError(
                f"suite {suite.name}: unknown sandbox environment {env!r}; known: {', '.join(envs.SUITES)}"
            )
        if not envs.is_prepared(env):
            raise PreflightError(
                f"suite {suite.name} judges in the sandbox environment {env!r}, which is not prepared "
                f"(every sample would fail): run `edit-fidelity sandbox prepare --suite {env}` first"
            )


def check_sandbox_level(level: str) -> None:
    if level == "docker":
        reason = DockerBackend.available()
        if reason is not None:
            raise PreflightError(
                f"sandbox level docker: {reason}: start the docker engine, or unset "
                "EDIT_FIDELITY_SANDBOX_LEVEL to use the best level this machine has"
            )


def check_recorded(
    suite: Suite, backend: Backend, tasks: Sequence[Task], conditions: Sequence[str], samples: int, spec: str
) -> None:
    """A recorded run must hold `samples` completions for every (task, condition) of the run."""
    if backend.recorded is None:
        return
    rec = backend.recorded
    pairs = [(t.task_id, c) for t in tasks for c in suite.dataset.task_conditions(t, conditions)]
    short = [(tid, c, len(rec.get(tid, c))) for tid, c in pairs if len(rec.get(tid, c)) < samples]
    if not short:
        return
    path = spec.split(":", 1)[1]
    if all(n == 0 for _, _, n in short) and len(short) == len(pairs):
        held = sorted(getattr(rec, "completions", None) or getattr(rec, "rows", None) or {})
        raise PreflightError(
            f"recorded run {path} has no completion for any of the {len(pairs)} {suite.name} "
            f"(task, condition) pairs of this run (it holds e.g. {held[0] if held else 'nothing'}; "
            f"the run asks e.g. {pairs[0][0]}/{pairs[0][1]}): pass a recorded run of suite {suite.name}"
        )
    tid, c, n = short[0]
    raise PreflightError(
        f"recorded run {path} lacks completions for {len(short)} of the {len(pairs)} (task, condition) "
        f"pairs (e.g. {tid}/{c}: {n} of {samples} samples): choose --limit, --conditions or "
        "--samples it covers"
    )


def _task_bytes(suite: Suite, task: Task, conditions: Sequence[str]) -> bytes:
    try:
        return msgspec.json.encode(task)  # the whole task: document, gold, tests
    except TypeError:  # a task that is not plain data: what the server and judge are given
        return msgspec.json.encode(
            [
                task.task_id,
                task.before,
                task.after,
                [task.instruction(c) for c in suite.dataset.task_conditions(task, conditions)],
            ]
        )


def tasks_digest(suite: Suite, tasks: Sequence[Task], conditions: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in tasks:
        h.update(_task_bytes(suite, t, conditions))
        h.update(b"\n")
    return h.hexdigest()


def backend_digest(spec: str) -> str:
    """A recorded run's bytes (a file, or a run directory's results); '' for live backends."""
    if not spec.startswith("recorded:"):
        return ""
    target = spec.split(":", 1)[1]
    if "#sha256=" in target:
        return target.split("#sha256=", 1)[1]
    path = Path(target)
    if path.is_dir():
        path = path / "results.jsonl"
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return ""  # a URL fetched into the cache: its spec names it
    return h.hexdigest()


def sandbox_identity(suite: Suite, tasks: Sequence[Task], level: str) -> dict[str, Any]:
    """The isolation level and the stamp of each environment the tasks are judged in."""
    out: dict[str, Any] = {"level": level}
    for env in suite.sandbox_envs(tasks):
        try:
            out[env] = (envs.env_dir(env) / STAMP).read_text().strip()
        except OSError:
            out[env] = ""
    return out


def check_endpoints(backend: OpenAI) -> None:
    """Several endpoints: each one asked as a single endpoint would be; the run starts when one answers
    (the balancer takes the others out on their first failures and probes them)."""
    problems = []
    for url in backend.endpoints:
        try:
            check_backend(dataclasses.replace(backend, base_url=url, endpoints=()))
        except PreflightError as exc:
            problems.append(str(exc))
    if len(problems) == len(backend.endpoints):
        raise PreflightError(f"none of the {len(problems)} endpoints answers: " + "; ".join(problems))
    for p in problems:
        print(f"edit-fidelity bench: warning: {p} (the run goes on with the others)", file=sys.stderr)
