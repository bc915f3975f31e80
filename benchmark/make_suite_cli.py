"""`edit-fidelity bench make-suite`: its arguments only. Every `edit-fidelity` start-up (the language
server's included) builds the command line, so the generator itself (`benchmark.make_suite`) is imported
only when the command runs."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_TIMEOUT_S = 60.0


def register_make_suite(commands: argparse._SubParsersAction) -> None:
    """Add `make-suite` to the `bench` subcommands (benchmark/cli.py calls this once)."""
    p = commands.add_parser(
        "make-suite", help="build a minimal-fix suite by corrupting solutions that pass their tests"
    )
    p.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="SUITE|DIR",
        help="overedit, canitedit, or a directory of (solution, tests) pairs",
    )
    p.add_argument("--families", default="in", help="in | ood | all | comma-separated family names (default in)")
    p.add_argument("--max-corruptions", type=int, default=2, metavar="N", help="1..N corruptions per task (default 2)")
    p.add_argument(
        "--functions",
        choices=("first", "all"),
        default="first",
        help="corrupt the first function (the paper) or any function (class-based code, e.g. canitedit)",
    )
    p.add_argument("--seed", type=int, default=0, metavar="S")
    p.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="FILE",
        help="the suite (JSON lines), written as tasks are kept; FILE.progress marks it unfinished",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the unfinished run in FILE (same arguments): the result equals an uninterrupted run",
    )
    p.add_argument("--data", help="benchmark data directory (default: EDIT_FIDELITY_DATA)")
    p.add_argument(
        "--variants", type=int, default=1, metavar="K", help="corrupted versions per source task (default 1)"
    )
    p.add_argument("--attempts", type=int, default=3, help="corruptions tried per variant until the tests fail")
    p.add_argument("--max-tasks", type=int, metavar="N", help="stop once N tasks are kept (the first N in order)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N source tasks")
    p.add_argument("--env", help="sandbox environment for the tests (default: the source's; base for a directory)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds per test run (default 60)")
    p.add_argument("--memory", type=int, default=4096, help="MiB of address space per test run (default 4096)")
    p.add_argument("--workers", type=int, help="sandbox slots (default: CPU count)")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from benchmark.make_suite import _make_suite_cli

    return _make_suite_cli(args)
