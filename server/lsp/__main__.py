"""`python -m server.lsp [--tcp HOST:PORT] ...`: the same as `edit-fidelity serve`."""

import argparse
import sys

from server import serve_cli

parser = argparse.ArgumentParser(prog="python -m server.lsp")
sub = parser.add_subparsers(dest="command")
serve_cli.register(sub)
args = parser.parse_args(["serve", *sys.argv[1:]])
sys.exit(args.handler(args))
