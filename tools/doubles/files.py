"""A file server on 127.0.0.1 for the download tests (stdlib only): the mirrors and hub stand-ins that
stand for hosts these machines cannot reach.

`files` maps a URL path to its bytes; `route(request)` may compute a reply for any request instead (None:
fall back to `files`; a path in neither is a 404). GET and HEAD (HEAD: the GET's status and headers, no
body). A `Range: bytes=N-` request of a 200 reply gets 206 with the rest. A reply's `cut_at` sends only that
many bytes under the full Content-Length and closes the connection (a lost connection, a truncated body).
Every request is recorded in `requests`.

    with FileServer({"/a.txt": b"..."}) as srv:
        srv.url  # http://127.0.0.1:PORT
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self
from urllib.parse import unquote, urlsplit


@dataclass
class Request:
    method: str
    path: str  # the URL path, unquoted, without the query
    query: str
    headers: dict[str, str]  # lower-case names

    @property
    def range(self) -> str | None:
        return self.headers.get("range")


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    cut_at: int | None = None


class FileServer:
    def __init__(
        self, files: dict[str, bytes] | None = None, *, route: Callable[[Request], Reply | None] | None = None
    ) -> None:
        self.files: dict[str, bytes] = dict(files or {})
        self.route = route
        self.requests: list[Request] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._answer(head=False)

            def do_HEAD(self) -> None:
                self._answer(head=True)

            def _answer(self, head: bool) -> None:
                url = urlsplit(self.path)
                request = Request(
                    self.command, unquote(url.path), url.query, {k.lower(): v for k, v in self.headers.items()}
                )
                outer.requests.append(request)
                reply = outer._reply(request)
                body, status, headers = reply.body, reply.status, dict(reply.headers)
                start = _range_start(request.range) if status == 200 else None
                if start:
                    headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
                    body, status = body[start:], 206
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if head:
                    return
                with contextlib.suppress(OSError):  # the client went away
                    self.wfile.write(body if reply.cut_at is None else body[: reply.cut_at])
                if reply.cut_at is not None:
                    self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def _reply(self, request: Request) -> Reply:
        reply = self.route(request) if self.route is not None else None
        if reply is not None:
            return reply
        body = self.files.get(request.path)
        return Reply(body=body) if body is not None else Reply(404, b"not found")

    def paths(self, method: str = "GET") -> list[str]:
        """The paths asked for with `method`, in order."""
        return [r.path for r in self.requests if r.method == method]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _range_start(header: str | None) -> int | None:
    if not header or not header.startswith("bytes=") or not header.endswith("-"):
        return None
    try:
        return int(header[len("bytes=") : -1])
    except ValueError:
        return None
