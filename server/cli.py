"""The `edit-fidelity` console script.

Built-in subcommands live in `server`; `sandbox` and `benchmark` contribute theirs through the
`edit_fidelity.commands` entry-point group (each entry is a `register(subparsers)` callable), so
`server` never imports `benchmark`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import NoReturn

from server import check_cli, serve_cli
from server.errors import UserError

DEBUG_ENV = "EDIT_FIDELITY_DEBUG"

BUILTIN: dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "check": check_cli.register,
    "serve": serve_cli.register,
}


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (`edit-fidelity check: error: ...`), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="edit-fidelity",
        description="Measure how faithfully a model edited code; serve that to editors; replay benchmarks.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for register in BUILTIN.values():
        register(sub)
    for ep in sorted(entry_points(group="edit_fidelity.commands"), key=lambda e: e.name):
        if ep.name not in BUILTIN:
            ep.load()(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except UserError as exc:  # the subcommands report their own; this catches one that escaped a handler
        if os.environ.get(DEBUG_ENV):
            raise
        print(f"{parser.prog} {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: a last resort, so a user never reads a traceback they cannot act on
        if os.environ.get(DEBUG_ENV):
            raise
        print(f"{parser.prog} {args.command}: internal error: {type(exc).__name__}: {_one_line(exc)} "
              f"(please report it; {DEBUG_ENV}=1 shows the traceback)", file=sys.stderr)
        return 1


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:500] + ("..." if len(text) > 500 else "")


if __name__ == "__main__":
    sys.exit(main())
