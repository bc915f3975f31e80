"""`edit-fidelity sandbox ...` subcommands (placeholder until the sandbox lands)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("sandbox", help="run untrusted code with isolation")
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)
