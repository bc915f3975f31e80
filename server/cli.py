"""The `edit-fidelity` console script.

Built-in subcommands live in `server`; `sandbox` and `benchmark` contribute theirs through the
`edit_fidelity.commands` entry-point group (each entry is a `register(subparsers)` callable), so
`server` never imports `benchmark`. Only the named subcommand's module is imported: `serve` starts
without loading `benchmark` or `sandbox.cli` (tests/test_architecture.py holds it to that); a missing
or unknown command, or a bare `--help`, builds the whole parser to list them all.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import NoReturn

from server.errors import UserError

DEBUG_ENV = "EDIT_FIDELITY_DEBUG"

Register = Callable[[argparse._SubParsersAction], None]

# name -> module with a `register(subparsers)`; imported only when that command is asked for
BUILTIN: dict[str, str] = {
    "check": "server.check_cli",
    "serve": "server.serve_cli",
    "model": "server.models.cli",
    "demo": "server.demo_cli",
    "mcp": "server.mcp_cli",
}


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (`edit-fidelity check: error: ...`), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _registrars(command: str | None) -> list[Register]:
    """The `register` of `command` alone when it is a known name, else of every command (in order)."""
    if command in BUILTIN:
        return [importlib.import_module(BUILTIN[command]).register]
    contributed = sorted(
        (ep for ep in entry_points(group="edit_fidelity.commands") if ep.name not in BUILTIN), key=lambda e: e.name
    )
    chosen = [ep for ep in contributed if ep.name == command]
    if chosen:
        return [chosen[0].load()]
    return [
        *(importlib.import_module(module).register for module in BUILTIN.values()),
        *(ep.load() for ep in contributed),
    ]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for `argv` (only its subcommand registered), or for every subcommand when None."""
    parser = _Parser(
        prog="edit-fidelity",
        description="Measure how faithfully a model edited code; serve that to editors; replay benchmarks.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # the top-level parser has no options but --help, so a command is the first word when there is one
    command = argv[0] if argv and not argv[0].startswith("-") else None
    for register in _registrars(command):
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
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
        print(
            f"{parser.prog} {args.command}: internal error: {type(exc).__name__}: {_one_line(exc)} "
            f"(please report it; {DEBUG_ENV}=1 shows the traceback)",
            file=sys.stderr,
        )
        return 1


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:500] + ("..." if len(text) > 500 else "")


if __name__ == "__main__":
    sys.exit(main())
