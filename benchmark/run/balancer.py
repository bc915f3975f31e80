"""Several OpenAI-compatible endpoints as one backend: a forwarding endpoint (on 127.0.0.1 by default).

The language server is given one backend whose `baseUrl` is this endpoint; each request it forwards
goes to the healthy upstream with the fewest outstanding requests (ties: the fewest served, then the
order given), so a slow server gets fewer requests and a fast one more. An upstream that fails (no
connection, a timeout, a 5xx) has the request retried on another one; after `max_failures` failures in a
row it is removed. A removed upstream gets no request; a background thread probes it with
`GET {base}/models` (cheap, every OpenAI-compatible server has it), first `probe_s` after the removal,
then at a cool-down that doubles after each failed probe up to `probe_max_s`, and re-admits it when it
answers 2xx (a vLLM server restarted after an OOM gets work again). When every upstream is removed the
request is answered with HTTP 503 at once, which the server reports as a backend error (a retryable
error of the sample, never a model failure). Lives on the benchmark side so the server keeps its
one-endpoint backend and the dependency rules stay as they are. Stdlib only; one thread per connection;
the key the server sends is forwarded (and used by the probes) and never logged.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
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
PROBE_TIMEOUT_S = 5.0  # a health probe: a server that cannot list its models this fast is not back


class EndpointStats(msgspec.Struct):
    url: str
    served: int = 0  # requests it answered (any status it was not failed over for)
    failures: int = 0  # failed attempts (connection, timeout, 5xx)
    max_outstanding: int = 0
    removed: str | None = None  # why it was removed, None while healthy
    readmitted: int = 0  # times a probe found it answering again and it was given work again
    last_removed: str | None = None  # why it was last removed (kept after a re-admission)
    probe_failures: int = 0  # probes it did not answer while removed


@dataclass
class _Upstream:
    url: str
    stats: EndpointStats
    cooldown_s: float  # wait before the next probe once removed
    outstanding: int = 0
    in_a_row: int = 0
    probe_at: float = 0.0  # time.monotonic() of the next probe, while removed
    removed_at: float = 0.0
    unproven: bool = False  # re-admitted and no request answered since: removed again, the cool-down grows

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
    """`with Balancer(urls) as b: b.base_url` while the run lasts; `b.stats()` afterwards.

    `host` is the address it binds and names in `base_url` (127.0.0.1: only this machine reaches it)."""

    def __init__(
        self,
        urls: list[str],
        *,
        timeout_s: float = 300.0,
        max_failures: int = 2,
        probe_s: float = 10.0,
        probe_max_s: float = 300.0,
        host: str = "127.0.0.1",
    ) -> None:
        if not urls:
            raise EndpointsError("the balancer needs at least one endpoint")
        if probe_s <= 0:
            raise EndpointsError(f"the balancer's probe interval must be positive, not {probe_s}")
        self._ups = [_Upstream(u, EndpointStats(u), cooldown_s=probe_s) for u in urls]
        self._lock = threading.Condition()  # notified when an upstream is removed, and on close
        self.timeout_s = timeout_s
        self.max_failures = max_failures
        self.probe_s = probe_s
        self.probe_max_s = max(probe_max_s, probe_s)
        self._probe_timeout_s = min(timeout_s, PROBE_TIMEOUT_S)
        self._auth: str | None = None  # the last key the server sent: the probes need it where a key is set
        self._closing = False
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

        class Server(ThreadingHTTPServer):
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

        self._server = Server((host, 0), Handler)
        self._server.daemon_threads = True
        self._host = f"[{host}]" if ":" in host else host
        self._thread: threading.Thread | None = None
        self._prober: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self._server.server_address[1]}{PREFIX}"

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
                if u.healthy:  # it works: a later removal starts again from the first cool-down
                    u.cooldown_s, u.unproven = self.probe_s, False
                return
            u.stats.failures += 1
            u.in_a_row += 1
            if u.in_a_row >= self.max_failures and u.healthy:
                if u.unproven:  # answers the probe but fails requests: probe it less and less often
                    u.cooldown_s = min(u.cooldown_s * 2, self.probe_max_s)
                u.stats.removed = u.stats.last_removed = failed
                u.removed_at = time.monotonic()
                u.probe_at = u.removed_at + u.cooldown_s
                self._lock.notify_all()
                logger.warning(
                    "endpoint %s removed after %d failures in a row (probed again in %.3g s): %s",
                    u.url,
                    u.in_a_row,
                    u.cooldown_s,
                    failed,
                )

    def forward(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> _Reply:
        suffix = path[len(PREFIX) :] if path.startswith(PREFIX) else path
        auth = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
        if auth is not None:
            self._auth = auth
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

    def _send(
        self,
        base: str,
        method: str,
        suffix: str,
        body: bytes | None,
        headers: dict[str, str],
        timeout_s: float | None = None,
    ) -> _Reply:
        parts = urlsplit(base)
        conn_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = conn_type(parts.hostname or "", parts.port, timeout=timeout_s or self.timeout_s)
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

    # -- re-admission -------------------------------------------------------------------------
    def _due(self) -> list[int] | None:
        """Wait until some removed upstream is due a probe: their indices, None once closing."""
        with self._lock:
            while not self._closing:
                now = time.monotonic()
                removed = [i for i, u in enumerate(self._ups) if not u.healthy]
                due = [i for i in removed if self._ups[i].probe_at <= now]
                if due:
                    return due
                self._lock.wait(min((self._ups[i].probe_at - now for i in removed), default=None))
            return None

    def _probe_loop(self) -> None:
        while (due := self._due()) is not None:
            for i in due:  # one at a time, outside the lock: a probe is bounded by its short timeout
                self._probe(i)

    def _probe(self, i: int) -> None:
        u = self._ups[i]
        headers = {"accept": "application/json"}
        if self._auth is not None:
            headers["authorization"] = self._auth
        try:
            status: int | str = self._send(u.url, "GET", "/models", None, headers, self._probe_timeout_s).status
        except (OSError, http.client.HTTPException) as exc:
            status = type(exc).__name__
        with self._lock:
            if self._closing or u.healthy:
                return
            if isinstance(status, int) and 200 <= status < 300:
                u.stats.removed, u.in_a_row, u.unproven = None, 0, True
                u.stats.readmitted += 1
                logger.warning(
                    "endpoint %s answers again (GET /models: HTTP %d) after %.1f s out; re-admitted",
                    u.url,
                    status,
                    time.monotonic() - u.removed_at,
                )
                return
            u.stats.probe_failures += 1
            u.cooldown_s = min(u.cooldown_s * 2, self.probe_max_s)
            u.probe_at = time.monotonic() + u.cooldown_s
            logger.debug("endpoint %s still out (GET /models: %s); next probe in %.3g s", u.url, status, u.cooldown_s)

    # -- lifetime -----------------------------------------------------------------------------
    def start(self) -> Self:
        self._thread = threading.Thread(target=self._server.serve_forever, name="balancer", daemon=True)
        self._thread.start()
        self._prober = threading.Thread(target=self._probe_loop, name="balancer-probe", daemon=True)
        self._prober.start()
        return self

    def close(self) -> None:
        with self._lock:
            self._closing = True
            self._lock.notify_all()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
        if self._prober is not None:
            self._prober.join(self._probe_timeout_s + 1)  # at most one probe in flight to wait for

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
