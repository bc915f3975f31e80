"""The git HEAD version of an open file, for `checkChange` with baseline "git"."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable

from server.lsp.args import RequestFailed

Git = Callable[..., Awaitable[tuple[int, bytes, bytes]]]  # git(*argv) -> (exit code, stdout, stderr)


async def head_text(path: str | None, *, timeout: float = 10.0) -> str:
    if not path or not os.path.isabs(path):
        raise RequestFailed(message='checkChange: baseline "git" needs a file: URI')
    folder, name = os.path.split(path)
    if not os.path.isdir(folder):
        raise RequestFailed(message=f"checkChange: folder {folder} does not exist")

    async def git(*argv: str) -> tuple[int, bytes, bytes]:
        try:
            proc = await asyncio.create_subprocess_exec(
                "git",
                "-C",
                folder,
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
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
    if code != 0:  # a file moved since HEAD (`git mv`, or `mv` + `git add`): its HEAD version is under the old name
        old = await _renamed_from(git, f"{prefix}{name}")
        if old is not None:
            code, out, err = await git("show", f"HEAD:{old}")
    if code != 0:
        detail = err.decode("utf-8", "replace").strip().splitlines()
        raise RequestFailed(
            message=f"checkChange: {name} has no version in git HEAD ({detail[0] if detail else 'git show failed'})"
        )
    return out.decode("utf-8", "replace")


async def _renamed_from(git: Git, rel: str) -> str | None:
    """The HEAD path of `rel` when git sees it as a rename against HEAD (the index: staged moves)."""
    code, out, _ = await git("diff", "--cached", "--name-status", "-M", "-z", "HEAD", "--")
    if code != 0:
        return None
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    while i < len(fields) and fields[i]:
        if fields[i][0] in "RC":
            if fields[i + 2] == rel:
                return fields[i + 1]
            i += 3
        else:
            i += 2
    return None
