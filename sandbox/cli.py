"""`edit-fidelity sandbox run | prepare | doctor`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from sandbox.result import LEVELS


def register(sub: argparse._SubParsersAction) -> None:  # server/cli.py's signature
    parser = sub.add_parser("sandbox", help="run untrusted code with isolation")
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="sandbox_command", metavar="SUBCOMMAND")

    run = commands.add_parser("run", help="run one program and print its ExecResult as JSON")
    run.add_argument("file", type=Path)
    run.add_argument("--language", help="python, javascript, cpp, java (default: from the extension)")
    run.add_argument("--stdin", type=Path, help="file given to the program as standard input")
    run.add_argument(
        "--timeout", type=float, default=15.0, help="CPU seconds (default 15; the wall-clock ceiling is 5x that)"
    )
    run.add_argument("--memory", type=int, default=1024, help="memory limit in MiB (default 1024)")
    run.add_argument("--output-limit", type=int, default=1 << 20, help="bytes of output kept")
    run.add_argument("--coverage", action="store_true", help="line coverage (Python)")
    run.add_argument("--suite", help="run with a prepared suite environment, e.g. canitedit")
    run.add_argument("--level", choices=LEVELS, help="isolation level (default: the best that works)")
    run.add_argument("--require-isolation", action="store_true", help="refuse to run without isolation")
    run.set_defaults(handler=_run)

    prep = commands.add_parser("prepare", help="build a suite's environment or the docker image (idempotent)")
    prep.add_argument(
        "--suite",
        action="append",
        help="suite name, e.g. canitedit or base (with --docker: "
        "repeat for each suite to put in the image; default canitedit)",
    )
    prep.add_argument("--docker", action="store_true", help="build the docker level's image instead")
    prep.add_argument(
        "--base-image",
        default=None,
        help="with --docker: a Debian bookworm base image "
        "(default debian:bookworm-slim; without a registry, one made with debootstrap)",
    )
    prep.add_argument("--build-network", default=None, help="with --docker: network for the build, e.g. host")
    prep.add_argument(
        "--wheels",
        action="append",
        type=Path,
        help="with --docker: a folder of wheels to "
        "install from (e.g. a CPU torch wheel; default: the find-links folders of pip's config)",
    )
    prep.add_argument("--index-url", help="with --docker: the package index (default $PIP_INDEX_URL or PyPI)")
    prep.set_defaults(handler=_prepare)

    doctor = commands.add_parser("doctor", help="report which isolation levels and languages work here")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(handler=_doctor)


def _fail(message: str) -> int:
    print(f"edit-fidelity sandbox: {message}", file=sys.stderr)
    return 2


def _run(args: argparse.Namespace) -> int:
    from sandbox.core import IsolationUnavailable, Sandbox

    try:
        source = args.file.read_bytes()
        stdin = args.stdin.read_bytes() if args.stdin else None
    except OSError as exc:
        return _fail(f"cannot read {exc.filename}: {exc.strerror}")
    try:
        box = Sandbox(args.level, workers=1, require_isolation=args.require_isolation or None)
    except (IsolationUnavailable, ValueError) as exc:
        return _fail(str(exc))
    with box:
        result = box.run(
            {args.file.name: source},
            args.file.name,
            language=args.language,
            stdin=stdin,
            timeout_s=args.timeout,
            memory_mb=args.memory,
            output_limit=args.output_limit,
            coverage=args.coverage,
            suite=args.suite,
        )
    sys.stdout.buffer.write(msgspec.json.format(result.to_json()) + b"\n")
    return 0 if result.status == "ok" else 1


def _prepare(args: argparse.Namespace) -> int:
    from sandbox import envs

    suites = args.suite or []
    for name in suites:
        if name not in envs.SUITES:
            return _fail(f"unknown suite {name!r}; known: {', '.join(envs.SUITES)}")
    if args.docker:
        return _prepare_docker(args, tuple(suites))
    if len(suites) != 1:
        return _fail("say which suite to prepare: --suite NAME (or --docker for the image)")
    # one line per step with its seconds, on stderr (stdout keeps only the notes below)
    envs.prepare(suites[0], log=lambda message: print(f"sandbox prepare: {message}", file=sys.stderr, flush=True))
    for module, reason in envs.SUITES[suites[0]].stubs.items():
        print(f"note: {module} is an import stub: {reason}")
    for module, reason in envs.missing_modules(
        suites[0]
    ).items():  # the suite's tasks that need it are listed by the suite
        print(f"missing: {module}: {reason}")
    return 0


def _prepare_docker(args: argparse.Namespace, suites: tuple[str, ...]) -> int:
    import docker

    from sandbox import docker_image

    for folder in args.wheels or []:
        if not folder.is_dir():
            return _fail(f"--wheels {folder}: not a folder")
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any failure means no engine
        return _fail(f"no docker engine answers ({type(exc).__name__}); start one or set DOCKER_HOST")
    try:
        docker_image.prepare(
            client,
            suites=suites or docker_image.DEFAULT_SUITES,
            base=args.base_image or docker_image.DEFAULT_BASE,
            network=args.build_network,
            wheel_dirs=args.wheels,
            index_url=args.index_url,
        )
    except docker_image.ImageError as exc:
        print(f"edit-fidelity sandbox: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from sandbox.doctor import diagnose, render

    report = diagnose()
    if args.json:
        sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(report)) + b"\n")
    else:
        print(render(report))
    return 0 if report.chosen != "none" else 1
