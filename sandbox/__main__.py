"""`python -m sandbox run|prepare|doctor ...`: the same subcommands as `edit-fidelity sandbox`."""

from __future__ import annotations

import argparse
import sys

from sandbox.cli import register


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["sandbox", *(sys.argv[1:] if argv is None else argv)])
    return int(args.handler(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
