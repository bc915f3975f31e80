"""`edit-fidelity bench make-suite`: its arguments. Every `bench` subcommand builds the whole `bench` parser,
so the generator (`benchmark.build.make_suite`, with the corruptions and the sandbox) is imported only when
this command runs; it imports nothing of this module.

    python -m benchmark.build.make_suite_cli make-suite ...   (the same as `edit-fidelity bench make-suite ...`)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmark.datadir import run_script


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
    # default: the generator's DEFAULT_TIMEOUT_S (60), filled in when the command runs
    p.add_argument("--timeout", type=float, help="seconds per test run (default 60)")
    p.add_argument("--memory", type=int, default=4096, help="MiB of address space per test run (default 4096)")
    p.add_argument("--workers", type=int, help="sandbox slots (default: CPU count)")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from benchmark.build.make_suite import command  # the generator: only when the command runs

    return command(args)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="edit-fidelity bench")
    register_make_suite(parser.add_subparsers(dest="bench_command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(run_script(main))
