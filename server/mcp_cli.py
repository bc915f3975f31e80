"""`edit-fidelity mcp`: the Model Context Protocol server for coding agents, on stdio (server/mcp_server.py).

The SDK and the server are imported only when the command runs, so listing the commands stays fast.
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "mcp",
        help="serve the fidelity check to coding agents (Model Context Protocol, stdio)",
        description="A Model Context Protocol server on stdin/stdout with the tools check_edit and check_git, "
        "for Claude Code, Cursor, Cline, Codex CLI, aider and any other MCP client (README: Coding agents).",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if sys.stdin.isatty():
        print(
            "edit-fidelity mcp: speaks the Model Context Protocol on stdin/stdout; "
            "start it from an MCP client (see README: Coding agents), not a terminal",
            file=sys.stderr,
        )
    try:
        from server.mcp_server import create
    except ImportError as exc:
        print(
            f"edit-fidelity mcp: error: {exc}; install the `mcp` package (pip install 'mcp>=2.3,<3')", file=sys.stderr
        )
        return 2
    create().run("stdio")
    return 0
