"""Several OpenAI-compatible endpoints as one backend: a forwarding endpoint on 127.0.0.1.

The language server is given one backend whose `baseUrl` is this endpoint; each request it forwards
goes to the healthy upstream with the fewest outstanding requests (ties: the fewest served, then the
order given), so a slow server gets fewer requests and a fast one more. An upstream that fails (no
connection, a timeout, a 5xx) has the request retried on another one; after `max_failures` failures in a
row it is removed for the rest of the run. When every upstream has failed the request is answered with
HTTP 503, which the server reports as a backend error (a retryable error of the sample, never a model
failure). Lives on the benchmark side so the server keeps its one-endpoint backend and the dependency
rules stay as they are. Stdlib only; one thread per connection; the key the server sends is forwarded
and never logged.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import urlsplit

import msgspec

logger = logging.getLogger(__name__)

# answers that say this upstream cannot serve now (another one may): the request moves on
FAILOVER = frozenset({500, 502, 503, 504, 520, 521, 522, 524, 529})
BUSY = frozenset({408, 429})  # move on, but the upstream is not unhealthy
PREFIX = "/v1"


class EndpointStats(msgspec.Struct):
    url: str
    served: int = 0  # requests it answered (any status it was not failed over for)
    failures: int = 0  # failed attempts (connection, timeout, 5xx)
    max_outstanding: int = 0
    removed: str | None = None  # why it was removed, None while healthy


@dataclass
class _Upstream:
    url: str
    stats: EndpointStats
    outstanding: int = 0
    in_a_row: int = 0

    @property
    def healthy(self) -> bool:
        return self.stats.removed is None


@dataclass
class _Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


class EndpointsError(ValueError):
    pass


def read_endpoints(path: str) -> list[str]:
    """`--endpoints FILE`: one base URL a line; blank lines and `#` comments are skipped."""
    try:
        lines = open(path, encoding="utf-8").read().splitlines()  # noqa: SIM115  # a small file read once
    except OSError as exc:
        raise EndpointsError(f"--endpoints {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise EndpointsError(f"--endpoints {path}: not a UTF-8 text file (one base URL a line)") from None
    urls = [ln.split("#", 1)[0].strip() for ln in lines]
    urls = [u for u in urls if u]
    if not urls:
        raise EndpointsError(f"--endpoints {path}: no URL in the file (one base URL a line, e.g. http://host:8000/v1)")
    return check_urls(urls)


def check_urls(urls: list[str]) -> list[str]:
    out: list[str] = []
    for u in urls:
        parts = urlsplit(u)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EndpointsError(f"endpoint {u!r} is not an http(s) URL (e.g. http://127.0.0.1:8000/v1)")
        u = u.rstrip("/")
        if u in out:
            raise EndpointsError(f"endpoint {u} is listed twice")
        out.append(u)
    return out


class Balancer:
    """`with Balancer(urls) as b: b.base_url` while the run lasts; `b.stats()` afterwards."""

    def __init__(self, urls: list[str], *, timeout_s: float = 300.0, max_failures: int = 2) -> None:
        if not urls:
            raise EndpointsError("the balancer needs at least one endpoint")
        self._ups = [_Upstream(u, EndpointStats(u)) for u in urls]
        self._lock = threading.Lock()
        self.timeout_s = timeout_s
        self.max_failures = max_failures
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: the run's log says what matters
                pass

            def _answer(self, reply: _Reply) -> None:
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(k, v)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def do_GET(self) -> None:
                self._answer(outer.forward("GET", self.path, None, dict(self.headers.items())))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                self._answer(outer.forward("POST", self.path, body, dict(self.headers.items())))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{PREFIX}"

    def stats(self) -> list[EndpointStats]:
        with self._lock:
            return [msgspec.structs.replace(u.stats) for u in self._ups]

    # -- choosing and forwarding --------------------------------------------------------------
    def _pick(self, tried: set[int]) -> int | None:
        with self._lock:
            ready = [i for i, u in enumerate(self._ups) if u.healthy and i not in tried]
            if not ready:
                return None
            i = min(ready, key=lambda j: (self._ups[j].outstanding, self._ups[j].stats.served, j))
            u = self._ups[i]
            u.outstanding += 1
            u.stats.max_outstanding = max(u.stats.max_outstanding, u.outstanding)
            return i

    def _done(self, i: int, *, failed: str | None) -> None:
        with self._lock:
            u = self._ups[i]
            u.outstanding -= 1
            if failed is None:
                u.in_a_row = 0
                u.stats.served += 1
                return
            u.stats.failures += 1
            u.in_a_row += 1
            if u.in_a_row >= self.max_failures and u.healthy:
                u.stats.removed = failed
                logger.warning("endpoint %s removed after %d failures in a row: %s", u.url, u.in_a_row, failed)

    def forward(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> _Reply:
        suffix = path[len(PREFIX) :] if path.startswith(PREFIX) else path
        tried: set[int] = set()
        problems: list[str] = []
        busy: _Reply | None = None
        while (i := self._pick(tried)) is not None:
            tried.add(i)
            url = self._ups[i].url
            try:
                reply = self._send(url, method, suffix, body, headers)
            except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out
                problems.append(f"{url}: {type(exc).__name__}: {exc}"[:200])
                self._done(i, failed=problems[-1])
                continue
            if reply.status in FAILOVER:
                problems.append(f"{url}: HTTP {reply.status}")
                self._done(i, failed=problems[-1])
                continue
            self._done(i, failed=None)
            if reply.status in BUSY:
                busy = reply
                continue
            return reply
        if busy is not None:
            return busy  # every endpoint is busy: the server's own retry policy takes it from here
        with self._lock:
            removed = sum(not u.healthy for u in self._ups)
        detail = "; ".join(problems[-3:]) or f"all {removed} endpoints were removed after failures"
        msg = f"no endpoint could answer ({removed} of {len(self._ups)} removed): {detail}"
        return _Reply(
            503,
            json.dumps({"error": {"message": msg, "type": "balancer"}}).encode(),
            {"content-type": "application/json"},
        )

    def _send(self, base: str, method: str, suffix: str, body: bytes | None, headers: dict[str, str]) -> _Reply:
        parts = urlsplit(base)
        conn_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = conn_type(parts.hostname or "", parts.port, timeout=self.timeout_s)
        keep = {k: v for k, v in headers.items() if k.lower() in ("content-type", "authorization", "accept")}
        try:
            conn.request(method, parts.path.rstrip("/") + suffix, body=body, headers=keep)
            resp = conn.getresponse()
            data = resp.read()
            return _Reply(
                resp.status,
                data,
                {k: v for k, v in resp.getheaders() if k.lower() in ("content-type", "retry-after", "retry-after-ms")},
            )
        finally:
            conn.close()

    # -- lifetime -----------------------------------------------------------------------------
    def start(self) -> Self:
        self._thread = threading.Thread(target=self._server.serve_forever, name="balancer", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
