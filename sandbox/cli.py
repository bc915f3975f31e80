"""`edit-fidelity sandbox run | prepare | doctor`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from sandbox.result import LEVELS


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]  # server/cli.py's signature
    parser = sub.add_parser("sandbox", help="run untrusted code with isolation")
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="sandbox_command", metavar="SUBCOMMAND")

    run = commands.add_parser("run", help="run one program and print its ExecResult as JSON")
    run.add_argument("file", type=Path)
    run.add_argument("--language", help="python, javascript, cpp, java (default: from the extension)")
    run.add_argument("--stdin", type=Path, help="file given to the program as standard input")
    run.add_argument("--timeout", type=float, default=15.0, help="wall-clock seconds (default 15)")
    run.add_argument("--memory", type=int, default=1024, help="memory limit in MiB (default 1024)")
    run.add_argument("--output-limit", type=int, default=1 << 20, help="bytes of output kept")
    run.add_argument("--coverage", action="store_true", help="line coverage (Python)")
    run.add_argument("--suite", help="run with a prepared suite environment, e.g. canitedit")
    run.add_argument("--level", choices=LEVELS, help="isolation level (default: the best that works)")
    run.add_argument("--require-isolation", action="store_true", help="refuse to run without isolation")
    run.set_defaults(handler=_run)

    prep = commands.add_parser("prepare", help="build a suite's environment (idempotent)")
    prep.add_argument("--suite", required=True, help="suite name, e.g. canitedit or base")
    prep.set_defaults(handler=_prepare)

    doctor = commands.add_parser("doctor", help="report which isolation levels and languages work here")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(handler=_doctor)


def _run(args: argparse.Namespace) -> int:
    from sandbox.core import IsolationUnavailable, Sandbox

    try:
        box = Sandbox(args.level, workers=1, require_isolation=args.require_isolation or None)
    except IsolationUnavailable as exc:
        print(f"edit-fidelity sandbox: {exc}", file=sys.stderr)
        return 3
    stdin = args.stdin.read_bytes() if args.stdin else None
    result = box.run({args.file.name: args.file.read_bytes()}, args.file.name, language=args.language,
                     stdin=stdin, timeout_s=args.timeout, memory_mb=args.memory,
                     output_limit=args.output_limit, coverage=args.coverage, suite=args.suite)
    sys.stdout.buffer.write(msgspec.json.format(result.to_json()) + b"\n")
    return 0 if result.status == "ok" else 1


def _prepare(args: argparse.Namespace) -> int:
    from sandbox import envs

    if args.suite not in envs.SUITES:
        print(f"unknown suite {args.suite!r}; known: {', '.join(envs.SUITES)}", file=sys.stderr)
        return 2
    envs.prepare(args.suite)
    for module, reason in envs.SUITES[args.suite].stubs.items():
        print(f"note: {module} is an import stub: {reason}")
    for module, reason in envs.missing_modules(args.suite).items():  # the suite's tasks that need it are listed by the suite
        print(f"missing: {module}: {reason}")
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from sandbox.doctor import diagnose, render

    report = diagnose()
    if args.json:
        sys.stdout.buffer.write(msgspec.json.format(msgspec.json.encode(report)) + b"\n")
    else:
        print(render(report))
    return 0 if report.chosen != "none" else 1
