"""`edit-fidelity bench run | report` (entry point `bench = "benchmark.cli:register"`; also
`python -m benchmark.cli bench ...`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from benchmark import suites
from benchmark.arg_types import NON_NEGATIVE, POSITIVE, number_arg
from benchmark.build.make_suite_cli import register_make_suite
from benchmark.datadir import DataError, data_dir
from benchmark.report.summary import compare_json, load_summary, render_compare, render_text, report, state_lines
from benchmark.run.balancer import EndpointsError, read_endpoints
from benchmark.run.progress import for_stderr
from benchmark.run.records import RunConfig
from benchmark.run.store import RESULTS, ResultsStore, RunDirError, read_config, read_records
from server.errors import UserError
from server.protocol.names import STYLES

if TYPE_CHECKING:
    from sandbox import Sandbox


def register(sub: argparse._SubParsersAction) -> None:  # server/cli.py's signature
    parser = sub.add_parser("bench", help="replay benchmark suites through the server and report")
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="bench_command", metavar="SUBCOMMAND")

    run = commands.add_parser("run", help="replay a suite through the language server and the sandbox")
    run.add_argument("--suite", required=True, choices=sorted(suites.SUITES))
    run.add_argument(
        "--backend", metavar="SPEC", help="recorded:PATH | gold | identity | openai (not with --serve-vllm)"
    )
    run.add_argument("--out", required=True, type=Path, metavar="RUN_DIR")
    run.add_argument("--limit", type=POSITIVE, help="only the first N tasks")
    run.add_argument(
        "--samples", type=POSITIVE, help="samples per task and condition (default: recorded run's count, else 1)"
    )
    run.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in RUN_DIR (samples whose backend or sandbox failed run again)",
    )
    run.add_argument("--keep-errors", action="store_true", help="--resume: do not run failed samples again")
    run.add_argument("--conditions", help="comma-separated (default: the suite's, e.g. canitedit: descriptive,lazy)")
    run.add_argument("--data", help="benchmark data directory (default: EDIT_FIDELITY_DATA)")
    run.add_argument(
        "--suite-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a suite setting, repeatable (e.g. bics: lengths=500,1000 depths=0,0.5 trials=5 seed=1)",
    )
    run.add_argument(
        "--base-url",
        action="append",
        metavar="URL",
        help="openai: the endpoint, e.g. http://127.0.0.1:8000/v1; repeat it for several servers of the "
        "same model, balanced by outstanding requests (a failing one is removed, brought back when it answers "
        "again)",
    )
    run.add_argument(
        "--endpoints", metavar="FILE", help="openai: a file of endpoint URLs, one a line (like repeated --base-url)"
    )
    run.add_argument("--model", help="openai: the model name")
    run.add_argument("--api-key-env", help="openai: NAME of the environment variable holding the key")
    run.add_argument("--temperature", type=number_arg(float, 0, 2))
    run.add_argument("--top-p", type=number_arg(float, 0, 1, open_low=True))
    run.add_argument("--max-tokens", type=POSITIVE)
    run.add_argument("--serve-vllm", metavar="MODEL", help="start `vllm serve MODEL` for the run and use it")
    run.add_argument("--tensor-parallel", type=POSITIVE, default=1, help="--serve-vllm: GPUs per model (default 1)")
    run.add_argument(
        "--data-parallel",
        type=POSITIVE,
        default=1,
        help="--serve-vllm: model replicas vLLM runs behind its one endpoint (default 1)",
    )
    run.add_argument("--seed", type=int, default=0, help="--serve-vllm: sampling seed (default 0)")
    run.add_argument(
        "--vllm-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="--serve-vllm: one more argument for `vllm serve` (repeatable, e.g. --vllm-arg=--dtype=half)",
    )

    run.add_argument(
        "--style",
        default="generic",
        choices=STYLES,
        help="the server's prompt style (canitedit-chat / canitedit-direct: the CanItEdit paper's formats)",
    )
    run.add_argument(
        "--necessity",
        type=NON_NEGATIVE,
        default=0,
        metavar="MAX_RUNS",
        help="for each passing completion, find the hunks its tests need (ddmin, at most MAX_RUNS "
        "sandbox runs) and report the reference-free excess next to the gold-based one",
    )
    run.add_argument(
        "--concurrency",
        type=POSITIVE,
        help="requests in flight to the server/backend (default 8, per session with --ray-sessions)",
    )
    run.add_argument("--workers", type=POSITIVE, help="sandbox slots (default: CPU count)")
    run.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run the sandbox executions (and the necessity analysis) as Ray tasks on a cluster (ADDRESS, "
        "e.g. 10.0.0.1:6379, or auto); needs pip install 'edit-fidelity[ray]'",
    )
    run.add_argument(
        "--ray-sessions",
        type=NON_NEGATIVE,
        default=0,
        metavar="N",
        help="with --ray: N language-server sessions on the cluster's nodes, one CPU each (default 0: the one "
        "session runs here)",
    )
    run.add_argument("--quiet", action="store_true", help="no progress output")
    run.add_argument(
        "--allow-errors",
        action="store_true",
        help="exit 0 even when samples ended in an error (the scores stay marked incomplete)",
    )
    run.set_defaults(handler=_run)

    rep = commands.add_parser("report", help="summarise a run directory (writes RUN_DIR/summary.json)")
    rep.add_argument(
        "paths",
        type=Path,
        nargs="+",
        metavar="RUN_DIR",
        help="a run directory; with --published: the published results' directory, then our run directories",
    )
    rep.add_argument(
        "--published",
        metavar="SUITE",
        help="report a suite's published results (e.g. bics DATA/bics/stats) beside our runs",
    )
    rep.add_argument("--format", default="text", choices=("text", "json", "html"))
    rep.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="write the self-contained HTML report (charts, sample browser) to FILE",
    )
    rep.set_defaults(handler=_report)

    dl = commands.add_parser("download", help="fetch a suite's data into the data directory")
    dl.add_argument("suite", metavar="SUITE", help="a suite that has a download (e.g. canitedit, overedit, bics)")
    dl.add_argument("--data", help="benchmark data directory (default: EDIT_FIDELITY_DATA, else the per-user cache)")
    dl.set_defaults(handler=_download)

    cmp_ = commands.add_parser("compare", help="one table over several run directories")
    cmp_.add_argument("run_dirs", type=Path, nargs="+")
    cmp_.add_argument("--format", default="text", choices=("text", "json", "html"))
    cmp_.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="write the comparison page (sortable leaderboard, scatter, per-task differences) to FILE",
    )
    cmp_.set_defaults(handler=_compare)

    register_make_suite(commands)


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("edit-fidelity", "pygls", "lsprotocol", "coverage", "msgspec"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[dist] = metadata.version(dist)
    return out


def _fail(msg: str, code: int = 2) -> int:
    print(f"edit-fidelity bench: {msg}", file=sys.stderr)
    return code


def _run(args: argparse.Namespace) -> int:
    try:
        return _run_checked(args)
    except UserError as exc:  # bad input or data, a failed preflight, a run directory that cannot be used
        return _fail(" ".join(str(exc).split()))


def _run_checked(args: argparse.Namespace) -> int:
    # the run's machinery (the server session's pygls, the sandbox) only when a run starts: `bench report`,
    # `compare` and `download` build the same parser and stay quick
    from benchmark.run import answer_sources, preflight
    from benchmark.run.engine import Engine, RunAborted
    from benchmark.run.session import ServerUnavailable

    suite = suites.get(args.suite)
    options = {}
    for item in args.suite_option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            return _fail(f"--suite-option {item!r}: expected KEY=VALUE")
        options[key.strip()] = value.strip()
    try:
        suite.configure(options)
    except ValueError as exc:
        return _fail(str(exc))
    if args.conditions is None:
        conditions = list(suite.default_conditions or suite.conditions)
    else:
        conditions = [c.strip() for c in args.conditions.split(",") if c.strip()]
    bad = [c for c in conditions if c not in suite.conditions]
    if bad or not conditions:
        return _fail(
            f"unknown condition(s) {', '.join(bad) or '(none)'} for suite {suite.name}; "
            f"known: {', '.join(suite.conditions)}"
        )
    if args.limit is not None and args.limit < 1 or args.samples is not None and args.samples < 1:
        return _fail("--limit and --samples must be >= 1")
    if args.serve_vllm:
        if args.backend not in (None, "openai") or args.base_url:
            return _fail("--serve-vllm starts its own endpoint: leave out --backend and --base-url")
        args.backend, args.model = f"vllm:{args.serve_vllm}", args.serve_vllm
    elif not args.backend:
        return _fail("--backend SPEC (or --serve-vllm MODEL) is required")
    urls = list(args.base_url or [])
    if args.endpoints:
        try:
            urls += read_endpoints(args.endpoints)
        except EndpointsError as exc:
            return _fail(str(exc))
    try:
        backend = answer_sources.parse(
            args.backend,
            suite=suite,
            base_url=urls or None,
            model=args.model,
            api_key_env=args.api_key_env,
            temperature=args.temperature,
            top_p=args.top_p,
            max_tokens=args.max_tokens,
        )
    except answer_sources.BackendSpecError as exc:
        return _fail(str(exc))
    default_samples = backend.default_samples()
    samples = args.samples or default_samples
    if backend.recorded is not None and samples > default_samples:
        return _fail(f"the recorded run has {default_samples} samples per task; --samples {samples} asks for more")
    # preflight: what would fail every sample fails here, before anything is written
    preflight.check_key(backend)
    tasks = suite.load(args.data, args.limit)
    pairs = preflight.check_tasks(suite, tasks, conditions)
    preflight.check_recorded(suite, backend, tasks, conditions, samples, args.backend)
    preflight.check_envs(suite, tasks)
    if args.ray_sessions and not args.ray:
        return _fail("--ray-sessions needs --ray ADDRESS (the cluster the sessions run on)")
    if args.ray:
        from benchmark.run.cluster.judge import check_address

        check_address(args.ray)
    box = _sandbox(args.workers)
    try:
        if isinstance(backend, answer_sources.OpenAI) and backend.endpoints:
            preflight.check_endpoints(backend)
        elif not (isinstance(backend, answer_sources.OpenAI) and backend.serve_vllm):
            preflight.check_backend(backend)
        config = RunConfig(
            suite=args.suite,
            backend=args.backend,
            samples=samples,
            limit=args.limit,
            conditions=conditions,
            options=options,
            necessity_runs=args.necessity,
            # several endpoints: which servers answer does not decide a verdict (resume may use others)
            base_url=("balanced" if len(urls) > 1 else urls[0]) if urls else None,
            model=args.model,
            api_key_env=args.api_key_env,
            style=args.style,
            temperature=args.temperature,
            top_p=args.top_p,
            max_tokens=args.max_tokens,
            data_dir=str(data_dir(args.data)),
            tasks_digest=preflight.tasks_digest(suite, tasks, conditions),
            backend_digest=preflight.backend_digest(args.backend),
            sandbox=preflight.sandbox_identity(suite, tasks, box.level),
            planned=pairs * samples,
            versions=_versions(),
            serve=_serve_settings(args, urls),
            created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        )
        store = ResultsStore(args.out, config, resume=args.resume, retry_errors=not args.keep_errors)
    except BaseException:
        box.close()
        raise
    store.config.versions.setdefault("sandbox_level", box.level)
    show = None if args.quiet else for_stderr()
    vllm = None
    stack = contextlib.ExitStack()
    try:
        cluster = None
        if args.ray:
            from benchmark.run.cluster.judge import connect

            cluster = stack.enter_context(
                connect(args.ray, suite, options, args.out / "ray.jsonl", sessions=args.ray_sessions)
            )
        if isinstance(backend, answer_sources.OpenAI) and backend.serve_vllm:
            from benchmark.run.vllm import VllmError, VllmServer

            try:
                vllm = VllmServer(
                    args.serve_vllm,
                    args.out / "vllm.log",
                    host=cluster.serve_host if cluster is not None else "127.0.0.1",
                    tensor_parallel=args.tensor_parallel,
                    data_parallel=args.data_parallel,
                    seed=args.seed,
                    extra=args.vllm_arg,
                ).start()
            except VllmError as exc:
                return _fail(str(exc), 1)
            backend.base_url = vllm.base_url
            preflight.check_backend(backend)
        engine = Engine(
            store.config,
            suite,
            tasks,
            backend,
            store,
            box,
            concurrency=args.concurrency or 8 * max(1, args.ray_sessions),
            progress=show,
            necessity_runs=args.necessity,
            retries=0 if args.keep_errors else 1,
        )
        if cluster is not None:
            cluster.drive(engine)  # the sandbox runs as Ray tasks; with --ray-sessions the requests too
        progress = asyncio.run(engine.run())
    except (ServerUnavailable, RunAborted) as exc:  # what no sample can survive: the records stay
        return _fail(
            f"{exc}; {len(store.records)} records kept in {args.out}: continue with --resume "
            f"(server log: {args.out / ('server-session-*.log' if args.ray_sessions else 'server.log')})",
            1,
        )
    finally:
        stack.close()
        if isinstance(backend, answer_sources.OpenAI) and backend.endpoint_stats:
            _write_endpoint_stats(args.out, backend.endpoint_stats)
        if vllm is not None:
            vllm.stop()
        if show is not None:
            show.close()
        store.close()
        box.close()
    if not args.quiet:
        t = engine.timings
        print(
            f"{progress.done} records written ({len(store.records)} in the run); time in server "
            f"{t['server_s']:.1f} s, sandbox {t['sandbox_s']:.1f} s, scoring {t['scoring_s']:.1f} s"
            + (f", necessity analysis {t['necessity_s']:.1f} s" if "necessity_s" in t else "")
            + f" (summed over concurrent jobs); {engine.reused} identical programs reused a verdict",
            file=sys.stderr,
        )
    summary = report(args.out)
    if not args.quiet:
        print(render_text(summary))
    if not summary.get("complete", True):
        if args.allow_errors:
            return 0
        reason = "; ".join(line.strip() for line in state_lines(summary)[:2])
        return _fail(f"{reason} (--allow-errors accepts a run with errors)", 1)
    return 0


def _serve_settings(args: argparse.Namespace, urls: list[str]) -> dict[str, str]:
    """How the run was served, kept for the record (not part of its identity: `--resume` may use others)."""
    out: dict[str, str] = {}
    if args.serve_vllm:
        out |= {"tensor_parallel": str(args.tensor_parallel), "seed": str(args.seed), "extra": " ".join(args.vllm_arg)}
        if args.data_parallel > 1:
            out["data_parallel"] = str(args.data_parallel)
    if len(urls) > 1:
        out["endpoints"] = " ".join(urls)
    if args.ray:
        out["ray"] = args.ray
    if args.ray_sessions:
        out["ray_sessions"] = str(args.ray_sessions)
    return out


def _write_endpoint_stats(out: Path, stats: list) -> None:
    import msgspec

    (out / "endpoints.json").write_bytes(msgspec.json.format(msgspec.json.encode(stats)) + b"\n")


def _sandbox(workers: int | None) -> Sandbox:  # imported on use (start-up time)
    """The sandbox for the run, or a PreflightError naming what the requested isolation lacks."""
    import os

    from benchmark.run.preflight import PreflightError, check_sandbox_level
    from sandbox import IsolationUnavailable, Sandbox
    from sandbox.core import LEVEL_ENV

    if os.environ.get(LEVEL_ENV):
        check_sandbox_level(os.environ[LEVEL_ENV])
    try:
        return Sandbox(workers=workers)
    except (IsolationUnavailable, ValueError, OSError) as exc:
        raise PreflightError(f"sandbox: {exc}") from None


def _report(args: argparse.Namespace) -> int:

    if args.published:
        return _report_published(args)
    if len(args.paths) != 1:
        return _fail("report takes one RUN_DIR (several: `bench compare`, or --published SUITE DIR RUN_DIR...)")
    args.run_dir = args.paths[0]
    try:
        summary = report(args.run_dir)
    except RunDirError as exc:
        return _fail(str(exc))
    if args.format == "html" or args.html:
        from benchmark.report.html import render

        page = render(summary, read_records(args.run_dir / RESULTS), args.run_dir, read_config(args.run_dir))
        # the page is kept beside summary.json (RUN_DIR/report.html) unless --html names the file
        problem = _write_page(args.html or args.run_dir / "report.html", page)
        if problem:
            return _fail(problem)
        if args.format == "html":
            sys.stdout.write(page)  # --format html: the page itself on stdout, as everywhere
            return 0
    if args.format == "json":
        print(json.dumps(summary, indent=2))
    else:
        print(render_text(summary))
    return 0


def _write_page(path: Path, page: str) -> str | None:
    """Write an HTML page; a path that cannot take it is one line, not a traceback."""
    try:
        path.write_text(page)
    except OSError as exc:
        return f"cannot write the HTML page to {path}: {exc.strerror or exc}; give a writable file path"
    return None


def _offered(name: str, hook: str) -> str | None:
    """Why suite `name` cannot serve `hook` (imported only when asked: `edit-fidelity serve` never pays)."""

    if name not in suites.SUITES or not suites.suite_class(name).offers(hook):
        return f"no suite {name!r} with {hook.replace('_', ' ')}; choose one of {', '.join(suites.offering(hook))}"
    return None


def _report_published(args: argparse.Namespace) -> int:

    stats, *runs = args.paths
    problem = _offered(args.published, "published_report")
    if problem:
        return _fail(problem)
    suite = suites.get(args.published)
    try:
        text = suite.published_report(stats, args.format, runs)
        if args.html:
            args.html.write_text(text if args.format == "html" else suite.published_report(stats, "html", runs))
    except (RunDirError, OSError, ValueError) as exc:
        return _fail(str(exc))
    print(text)
    return 0


def _download(args: argparse.Namespace) -> int:

    problem = _offered(args.suite, "download")
    if problem:
        return _fail(problem)
    try:
        path = suites.get(args.suite).download(args.data, lambda m: print(m, file=sys.stderr))
    except DataError as exc:
        return _fail(str(exc), 1)
    except OSError as exc:
        return _fail(f"{args.suite}: {exc}", 1)
    print(path)
    return 0


def _compare(args: argparse.Namespace) -> int:

    # figures within each run (overedit: generic against explicit for the same backend)
    within: list[tuple[Path, tuple[dict, str]]] = []
    try:
        summaries = [load_summary(d) for d in args.run_dirs]
        for d, s in zip(args.run_dirs, summaries, strict=True):
            w = suites.get(s["suite"]).within_run(read_records(d / RESULTS))
            if w is not None:
                within.append((d, w))
    except RunDirError as exc:
        return _fail(str(exc))
    if args.format == "html" or args.html:
        from benchmark.report.compare import render_compare_html

        page = render_compare_html(args.run_dirs, summaries)
        problem = _write_page(args.html, page) if args.html else None
        if problem:
            return _fail(problem)
        if args.format == "html":
            sys.stdout.write(page)
            return 0
    if args.format == "json":
        print(json.dumps({**compare_json(summaries), "within": {str(d): w[0] for d, w in within}}, indent=2))
    else:
        print(render_compare(summaries))
        for d, w in within:
            print(f"\n{d}\n{w[1]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark.cli")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register(sub)
    args = parser.parse_args(argv)

    try:
        return int(args.handler(args) or 0)
    except UserError as exc:  # `edit-fidelity` reports these the same way (server/cli.py)
        return _fail(" ".join(str(exc).split()))


if __name__ == "__main__":
    sys.exit(main())
