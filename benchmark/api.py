"""The library entry point of a benchmark run: `run(suite, backend, out, ...) -> RunResult`.

`edit-fidelity bench run` parses its arguments and makes this one call; tests and `tools/bench` call it too.
It does what a run is, in order: the suite configured, the answer source parsed, the preflight (what would
fail every sample fails here, before anything is written), the run's config, the results store (new or
resumed), the sandbox, optionally the Ray cluster and a vLLM server, the engine, and `summary.json`.

It lives beside `benchmark/cli.py`, above the wings: it drives `run/` and writes the summary through
`report/` (the `run` wing imports no report module). `benchmark.run` is that wing's package, so the function
is `benchmark.api.run`.

Bad input or data, a failed preflight or a run directory that cannot be used raise `UserError` (the CLI: one
line, exit 2); what stops a run under way (the server gone, a run aborted, vLLM not starting) raises
`RunFailed` (exit 1), after the records so far are kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import platform
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from benchmark import suites
from benchmark.datadir import data_dir
from benchmark.report.summary import report
from benchmark.run.records import RunConfig
from benchmark.run.store import ResultsStore
from server.errors import UserError

if TYPE_CHECKING:
    from benchmark.suite import Suite
    from sandbox import Sandbox


class RunFailed(UserError):
    """A run that stopped under way (exit status 1): the records written so far stay in the run directory."""


class VllmSettings(msgspec.Struct, frozen=True, kw_only=True):
    """`--serve-vllm MODEL`: start `vllm serve MODEL` for the run and use it."""

    model: str
    tensor_parallel: int = 1
    data_parallel: int = 1
    seed: int = 0
    extra: tuple[str, ...] = ()


class RunResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a run did: its directory, its summary (as written to `summary.json`) and how it went."""

    out: Path
    summary: dict[str, Any]
    written: int  # records written by this call
    records: int  # records in the run (with those of a resumed one)
    reused: int  # identical programs that reused a verdict
    timings: dict[str, float]  # seconds in the server, sandbox, scoring (necessity), summed over jobs

    @property
    def complete(self) -> bool:
        """No sample ended in an error (the scores are not marked incomplete)."""
        return bool(self.summary.get("complete", True))


def run(
    suite: Suite[Any] | str,
    backend: str | None,
    out: Path,
    *,
    options: dict[str, str] | None = None,
    conditions: Sequence[str] | None = None,
    samples: int | None = None,
    limit: int | None = None,
    data: str | None = None,
    resume: bool = False,
    keep_errors: bool = False,
    base_urls: Sequence[str] = (),
    model: str | None = None,
    api_key_env: str | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
    style: str = "generic",
    necessity: int = 0,
    concurrency: int | None = None,
    workers: int | None = None,
    ray: str | None = None,
    ray_sessions: int = 0,
    vllm: VllmSettings | None = None,
    progress: bool = False,
) -> RunResult:
    """Replay `suite` (a name, configured by `options`, its `--suite-option`s; or a `Suite` made with those
    `options`, which the run records) with answers from `backend`
    (recorded:PATH | gold | identity | openai; with `vllm`: None) into the run directory `out`.
    `base_urls`: openai's endpoints (several are balanced). `progress`: a progress line on stderr."""
    # the run's machinery (the server session's pygls, the sandbox) only when a run starts
    from benchmark.run import answer_sources, preflight
    from benchmark.run.engine import Engine, RunAborted
    from benchmark.run.session import ServerUnavailable

    options = dict(options or {})
    if isinstance(suite, str):
        try:
            suite = suites.get(suite, options)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    chosen = list(suite.default_conditions or suite.conditions) if conditions is None else list(conditions)
    bad = [c for c in chosen if c not in suite.conditions]
    if bad or not chosen:
        raise UserError(
            f"unknown condition(s) {', '.join(bad) or '(none)'} for suite {suite.name}; "
            f"known: {', '.join(suite.conditions)}"
        )
    if limit is not None and limit < 1 or samples is not None and samples < 1:
        raise UserError("--limit and --samples must be >= 1")
    if vllm is not None:
        if backend not in (None, "openai") or base_urls:
            raise UserError("--serve-vllm starts its own endpoint: leave out --backend and --base-url")
        backend, model = f"vllm:{vllm.model}", vllm.model
    elif not backend:
        raise UserError("--backend SPEC (or --serve-vllm MODEL) is required")
    urls = list(base_urls)
    try:
        source = answer_sources.parse(
            backend,
            suite=suite,
            base_url=urls or None,
            model=model,
            api_key_env=api_key_env,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
        )
    except answer_sources.BackendSpecError as exc:
        raise UserError(str(exc)) from None
    if isinstance(source, answer_sources.OpenAI) and source.serve_vllm and vllm is None:  # --backend vllm:MODEL
        vllm = VllmSettings(model=source.model or "")
    default_samples = source.default_samples()
    n = samples or default_samples
    if source.recorded is not None and n > default_samples:
        raise UserError(f"the recorded run has {default_samples} samples per task; --samples {n} asks for more")
    # preflight: what would fail every sample fails here, before anything is written
    preflight.check_key(source)
    tasks = suite.dataset.load(data, limit)
    pairs = preflight.check_tasks(suite, tasks, chosen)
    preflight.check_recorded(suite, source, tasks, chosen, n, backend)
    preflight.check_envs(suite, tasks)
    if ray_sessions and not ray:
        raise UserError("--ray-sessions needs --ray ADDRESS (the cluster the sessions run on)")
    if ray:
        from benchmark.run.cluster.judge import check_address

        check_address(ray)
    box = _sandbox(workers)
    try:
        if isinstance(source, answer_sources.OpenAI) and source.endpoints:
            preflight.check_endpoints(source)
        elif vllm is None:
            preflight.check_backend(source)
        config = RunConfig(
            suite=suite.name,
            backend=backend,
            samples=n,
            limit=limit,
            conditions=chosen,
            options=options,
            necessity_runs=necessity,
            # several endpoints: which servers answer does not decide a verdict (resume may use others)
            base_url=("balanced" if len(urls) > 1 else urls[0]) if urls else None,
            model=model,
            api_key_env=api_key_env,
            style=style,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            data_dir=str(data_dir(data)),
            tasks_digest=preflight.tasks_digest(suite, tasks, chosen),
            backend_digest=preflight.backend_digest(backend),
            sandbox=preflight.sandbox_identity(suite, tasks, box.level),
            planned=pairs * n,
            versions=_versions(),
            serve=_serve_settings(vllm, urls, ray, ray_sessions),
            created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        )
        store = ResultsStore(out, config, resume=resume, retry_errors=not keep_errors)
    except BaseException:
        box.close()
        raise
    store.config.versions.setdefault("sandbox_level", box.level)
    show = _progress() if progress else None
    server = None
    stack = contextlib.ExitStack()
    try:
        cluster = None
        if ray:
            from benchmark.run.cluster.judge import connect

            cluster = stack.enter_context(connect(ray, suite, options, out / "ray.jsonl", sessions=ray_sessions))
        if vllm is not None and isinstance(source, answer_sources.OpenAI):
            from benchmark.run.vllm import VllmError, VllmServer

            try:
                server = VllmServer(
                    vllm.model,
                    out / "vllm.log",
                    host=cluster.serve_host if cluster is not None else "127.0.0.1",
                    tensor_parallel=vllm.tensor_parallel,
                    data_parallel=vllm.data_parallel,
                    seed=vllm.seed,
                    extra=list(vllm.extra),
                ).start()
            except VllmError as exc:
                raise RunFailed(str(exc)) from None
            source.base_url = server.base_url
            preflight.check_backend(source)
        engine = Engine(
            store.config,
            suite,
            tasks,
            source,
            store,
            box,
            concurrency=concurrency or 8 * max(1, ray_sessions),
            progress=show,
            necessity_runs=necessity,
            retries=0 if keep_errors else 1,
        )
        if cluster is not None:
            cluster.drive(engine)  # the sandbox runs as Ray tasks; with --ray-sessions the requests too
        done = asyncio.run(engine.run())
    except (ServerUnavailable, RunAborted) as exc:  # what no sample can survive: the records stay
        raise RunFailed(
            f"{exc}; {len(store.records)} records kept in {out}: continue with --resume "
            f"(server log: {out / ('server-session-*.log' if ray_sessions else 'server.log')})"
        ) from None
    finally:
        stack.close()
        if isinstance(source, answer_sources.OpenAI) and source.endpoint_stats:
            _write_endpoint_stats(out, source.endpoint_stats)
        if server is not None:
            server.stop()
        if show is not None:
            show.close()
        store.close()
        box.close()
    return RunResult(
        out=out,
        summary=report(out),
        written=done.done,
        records=len(store.records),
        reused=engine.reused,
        timings=dict(engine.timings),
    )


def _progress() -> Any:
    from benchmark.run.progress import for_stderr

    return for_stderr()


def _versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for dist in ("edit-fidelity", "pygls", "lsprotocol", "coverage", "msgspec"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[dist] = metadata.version(dist)
    return found


def _serve_settings(vllm: VllmSettings | None, urls: list[str], ray: str | None, ray_sessions: int) -> dict[str, str]:
    """How the run was served, kept for the record (not part of its identity: `--resume` may use others)."""
    found: dict[str, str] = {}
    if vllm is not None:
        found |= {"tensor_parallel": str(vllm.tensor_parallel), "seed": str(vllm.seed), "extra": " ".join(vllm.extra)}
        if vllm.data_parallel > 1:
            found["data_parallel"] = str(vllm.data_parallel)
    if len(urls) > 1:
        found["endpoints"] = " ".join(urls)
    if ray:
        found["ray"] = ray
    if ray_sessions:
        found["ray_sessions"] = str(ray_sessions)
    return found


def _write_endpoint_stats(out: Path, stats: list[Any]) -> None:
    (out / "endpoints.json").write_bytes(msgspec.json.format(msgspec.json.encode(stats)) + b"\n")


def _sandbox(workers: int | None) -> Sandbox:  # imported on use (start-up time)
    """The sandbox for the run, or a PreflightError naming what the requested isolation lacks."""
    from benchmark.run.preflight import PreflightError, check_sandbox_level
    from sandbox import IsolationUnavailable, Sandbox
    from sandbox.core import LEVEL_ENV

    if os.environ.get(LEVEL_ENV):
        check_sandbox_level(os.environ[LEVEL_ENV])
    try:
        return Sandbox(workers=workers)
    except (IsolationUnavailable, ValueError, OSError) as exc:
        raise PreflightError(f"sandbox: {exc}") from None


__all__ = ["RunFailed", "RunResult", "VllmSettings", "run"]
