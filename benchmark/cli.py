"""`edit-fidelity bench run | report` (entry point `bench = "benchmark.cli:register"`; also
`python -m benchmark.cli bench ...`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmark import suites
from benchmark.arg_types import NON_NEGATIVE, POSITIVE, number_arg
from benchmark.build.make_suite_cli import register_make_suite
from benchmark.datadir import DataError
from benchmark.report.summary import compare_json, load_summary, render_compare, render_text, report, state_lines
from benchmark.run.balancer import EndpointsError, read_endpoints
from benchmark.run.store import RESULTS, RunDirError, read_config, read_records
from server.errors import UserError
from server.protocol.names import STYLES

if TYPE_CHECKING:
    from benchmark.suite import Suite


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


def _fail(msg: str, code: int = 2) -> int:
    print(f"edit-fidelity bench: {msg}", file=sys.stderr)
    return code


def _run(args: argparse.Namespace) -> int:
    """`bench run`: the arguments into one `benchmark.api.run` call, its summary on stdout."""
    from benchmark.api import RunFailed, VllmSettings, run

    options = {}
    for item in args.suite_option:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            return _fail(f"--suite-option {item!r}: expected KEY=VALUE")
        options[key.strip()] = value.strip()
    conditions = None
    if args.conditions is not None:
        conditions = [c.strip() for c in args.conditions.split(",") if c.strip()]
    urls = list(args.base_url or [])
    vllm = None
    if args.serve_vllm:
        vllm = VllmSettings(
            model=args.serve_vllm,
            tensor_parallel=args.tensor_parallel,
            data_parallel=args.data_parallel,
            seed=args.seed,
            extra=tuple(args.vllm_arg),
        )
    try:
        if args.endpoints:
            try:
                urls += read_endpoints(args.endpoints)
            except EndpointsError as exc:
                return _fail(str(exc))
        result = run(
            args.suite,
            args.backend,
            args.out,
            options=options,
            conditions=conditions,
            samples=args.samples,
            limit=args.limit,
            data=args.data,
            resume=args.resume,
            keep_errors=args.keep_errors,
            base_urls=urls,
            model=args.model,
            api_key_env=args.api_key_env,
            temperature=args.temperature,
            top_p=args.top_p,
            max_tokens=args.max_tokens,
            style=args.style,
            necessity=args.necessity,
            concurrency=args.concurrency,
            workers=args.workers,
            ray=args.ray,
            ray_sessions=args.ray_sessions,
            vllm=vllm,
            progress=not args.quiet,
        )
    except RunFailed as exc:  # stopped under way: the records stay
        return _fail(" ".join(str(exc).split()), 1)
    except UserError as exc:  # bad input or data, a failed preflight, a run directory that cannot be used
        return _fail(" ".join(str(exc).split()))
    if not args.quiet:
        t = result.timings
        print(
            f"{result.written} records written ({result.records} in the run); time in server "
            f"{t['server_s']:.1f} s, sandbox {t['sandbox_s']:.1f} s, scoring {t['scoring_s']:.1f} s"
            + (f", necessity analysis {t['necessity_s']:.1f} s" if "necessity_s" in t else "")
            + f" (summed over concurrent jobs); {result.reused} identical programs reused a verdict",
            file=sys.stderr,
        )
        print(render_text(result.summary))
    if not result.complete:
        if args.allow_errors:
            return 0
        reason = "; ".join(line.strip() for line in state_lines(result.summary)[:2])
        return _fail(f"{reason} (--allow-errors accepts a run with errors)", 1)
    return 0


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


def _offering(name: str, part: str) -> tuple[Suite[Any] | None, str | None]:
    """Suite `name` when it offers `part` (`download`, `published_report`), else why not (imported only when
    asked: `edit-fidelity serve` never pays)."""
    suite = suites.get(name) if name in suites.SUITES else None
    if suite is None or getattr(suite, part) is None:
        return (
            None,
            f"no suite {name!r} with {part.replace('_', ' ')}; choose one of {', '.join(suites.offering(part))}",
        )
    return suite, None


def _report_published(args: argparse.Namespace) -> int:
    stats, *runs = args.paths
    suite, problem = _offering(args.published, "published_report")
    if suite is None or suite.published_report is None:
        return _fail(problem or "")
    try:
        text = suite.published_report(stats, args.format, runs)
        if args.html:
            args.html.write_text(text if args.format == "html" else suite.published_report(stats, "html", runs))
    except (RunDirError, OSError, ValueError) as exc:
        return _fail(str(exc))
    print(text)
    return 0


def _download(args: argparse.Namespace) -> int:
    suite, problem = _offering(args.suite, "download")
    if suite is None or suite.download is None:
        return _fail(problem or "")
    try:
        path = suite.download(args.data, lambda m: print(m, file=sys.stderr))
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
            w = suites.get(s["suite"]).reporter.within_run(read_records(d / RESULTS))
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
