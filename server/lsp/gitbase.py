"""The git HEAD version of an open file, for `checkChange` with baseline "git"."""

from __future__ import annotations

import asyncio
import os

from server.lsp.args import RequestFailed


async def head_text(path: str | None, *, timeout: float = 10.0) -> str:
    if not path or not os.path.isabs(path):
        raise RequestFailed(message="checkChange: baseline \"git\" needs a file: URI")
    folder, name = os.path.split(path)
    if not os.path.isdir(folder):
        raise RequestFailed(message=f"checkChange: folder {folder} does not exist")

    async def git(*argv: str) -> tuple[int, bytes, bytes]:
        try:
            proc = await asyncio.create_subprocess_exec(
                "git", "-C", folder, *argv,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
            )
        except FileNotFoundError:
            raise RequestFailed(message="checkChange: git is not installed") from None
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except (TimeoutError, asyncio.CancelledError):
            proc.kill()
            await proc.wait()
            raise
        return proc.returncode or 0, out, err

    code, out, err = await git("rev-parse", "--show-prefix")
    if code != 0:
        raise RequestFailed(message=f"checkChange: {folder} is not in a git repository")
    prefix = out.decode("utf-8", "replace").strip()
    code, out, err = await git("show", f"HEAD:{prefix}{name}")
    if code != 0:
        detail = err.decode("utf-8", "replace").strip().splitlines()
        raise RequestFailed(
            message=f"checkChange: {name} has no version in git HEAD ({detail[0] if detail else 'git show failed'})"
        )
    return out.decode("utf-8", "replace")
