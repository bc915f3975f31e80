"""`python -m tools.doubles.faulty_server [serve args]`: the real language server with one injected fault,
for the benchmark's failure tests (a stand-in only for *when* the server fails; everything else is real).

`EDIT_FIDELITY_FAULT=MODE:MARKER[:ONCE_FILE]`: an `editFidelity.requestEdit` whose document URI contains
MARKER fails the way MODE says: `raise` (the handler raises the SystemError CPython's AST converter
raises under threads, so the request is answered with an internal error), `exit` (the process dies at
once, as after a crash). With ONCE_FILE the fault fires only while that file does not exist (it is made
on the first fault), so the restarted server or the retry at the end of the run succeeds.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from server import serve_cli
from server.lsp import edit_flow
from server.lsp.handlers import request_edit


def _armed(once: str | None) -> bool:
    if once is None:
        return True
    try:
        Path(once).touch(exist_ok=False)  # the first fault makes it: later requests go through
    except FileExistsError:
        return False
    return True


def install(spec: str) -> None:
    mode, _, rest = spec.partition(":")
    marker, _, once = rest.partition(":")
    real = edit_flow.run_edit

    async def run_edit(ls, req, token, title):
        if marker in req.uri and _armed(once or None):
            if mode == "exit":
                os._exit(3)
            raise SystemError("AST constructor recursion depth mismatch (before=63, after=31)")
        return await real(ls, req, token, title)

    request_edit.run_edit = run_edit


def main() -> int:
    import argparse

    install(os.environ["EDIT_FIDELITY_FAULT"])
    parser = argparse.ArgumentParser(prog="python -m tools.doubles.faulty_server")
    sub = parser.add_subparsers(dest="command")
    serve_cli.register(sub)
    args = parser.parse_args(["serve", *sys.argv[1:]])
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
