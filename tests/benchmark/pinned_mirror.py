"""A local mirror of raw.githubusercontent.com for the pinned-file downloads (GitHub is not reachable
here), on the shared `tools.doubles.files.FileServer`: it serves a suite's pinned files at /COMMIT/PATH from
the shared data, and can fail on purpose.

A plain module, imported by name (`from pinned_mirror import ...`) by the download tests next to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchmark.download import PinnedFiles
from tools.doubles.files import FileServer, Reply, Request


@contextmanager
def serve(
    pinned: PinnedFiles, source: Path, monkeypatch: pytest.MonkeyPatch, corrupt: Callable[[bytes], bytes]
) -> Iterator[dict]:
    """Serves every pinned file (read from `source`, the suite's folder of the shared data) at
    /COMMIT/PATH, with the suite's mirror variable pointing here. The state it yields:
    `state["fail"][dest]` = 404 | "truncate" | "corrupt" (through `corrupt`); `state["hits"]`, the paths asked for."""
    routes = {f"/{f.commit}/{f.path}": f for f in pinned.files}
    state: dict = {"fail": {}, "hits": []}

    def route(request: Request) -> Reply:
        f = routes.get(request.path)
        mode = state["fail"].get(f.dest) if f else 404
        state["hits"].append(request.path)
        if f is None or mode == 404:
            return Reply(404)
        body = (source / f.dest).read_bytes()
        if mode == "corrupt":
            body = corrupt(body)
        return Reply(body=body, cut_at=len(body) // 2 if mode == "truncate" else None)

    with FileServer(route=route) as srv:
        monkeypatch.setenv(pinned.url_env, f"{srv.url}/")  # a trailing slash is fine
        yield state


def tree(root: Path, skip: set[str] | frozenset[str] = frozenset()) -> dict[str, bytes]:
    """Every file below `root` (but those named in `skip`) by its relative path, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in skip
    }
