"""A local mirror of raw.githubusercontent.com for the pinned-file downloads (GitHub is not reachable
here): it serves a suite's pinned files at /COMMIT/PATH from the shared data, and can fail on purpose.

A plain module, imported by name (`from pinned_mirror import ...`) by the download tests next to it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from benchmark.download import PinnedFiles


@contextmanager
def serve(pinned: PinnedFiles, source: Path, monkeypatch: pytest.MonkeyPatch,
          corrupt: Callable[[bytes], bytes]) -> Iterator[dict]:
    """Serves every pinned file (read from `source`, the suite's folder of the shared data) at
    /COMMIT/PATH, with the suite's mirror variable pointing here. The state it yields:
    `state["fail"][dest]` = 404 | "truncate" | "corrupt" (through `corrupt`); `state["hits"]`, the paths asked for."""
    routes = {f"/{f.commit}/{f.path}": f for f in pinned.files}
    state: dict = {"fail": {}, "hits": []}

    class H(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            f = routes.get(self.path)
            mode = state["fail"].get(f.dest) if f else 404
            state["hits"].append(self.path)
            if f is None or mode == 404:
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            body = (source / f.dest).read_bytes()
            if mode == "corrupt":
                body = corrupt(body)
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2] if mode == "truncate" else body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    monkeypatch.setenv(pinned.url_env, f"http://127.0.0.1:{srv.server_address[1]}/")  # a trailing slash is fine
    try:
        yield state
    finally:
        srv.shutdown()
        srv.server_close()


def tree(root: Path, skip: set[str] | frozenset[str] = frozenset()) -> dict[str, bytes]:
    """Every file below `root` (but those named in `skip`) by its relative path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in skip}
