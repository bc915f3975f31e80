"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 (stdlib only).

For tests, benchmarks and demos without a model: each model name maps to a script, a list of steps
played in order (the last one repeats). A step answers with a chat completion whose content is a
fixed string or is computed from the request, or with an HTTP error (and headers such as
Retry-After), or with non-JSON garbage, after an optional delay; `hang` keeps the connection open
until the client goes away, which is recorded, so a test can see that cancellation closed it.

    with ScriptedServer({"fix": [Step(content=lambda req: ...)]}) as srv:
        srv.base_url  # http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import json
import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Step:
    content: str | Callable[[dict], str] | None = None  # the assistant message
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None  # raw body instead of a completion (garbage, error JSON)
    delay_s: float = 0.0
    hang: bool = False  # never answer; wait for the client to close the connection
    usage: tuple[int, int] | None = (100, 20)
    cached_tokens: int | None = None  # usage.prompt_tokens_details.cached_tokens, as vLLM and OpenAI send it
    drip_s: float = 0.0  # send the body one byte at a time, this long apart (a slow-drip server)


@dataclass
class Received:
    model: str
    body: dict
    headers: dict[str, str]
    at: float
    path: str = ""


def user_code(request: dict, which: int = -1) -> str:
    """The code of a fenced block in the request's last user message (the last one by default)."""
    text = ""
    for msg in request.get("messages", []):
        if msg.get("role") == "user":
            text = msg.get("content", "")
    blocks = []
    parts = text.split("```python\n")
    for part in parts[1:]:
        blocks.append(part.split("\n```")[0] + "\n")
    return blocks[which] if blocks else ""


def fenced(code: str, prose: str = "Here is the edited code:") -> str:
    return f"{prose}\n\n```python\n{code}```\n"


class ScriptedServer:
    def __init__(self, scripts: dict[str, list[Step]] | None = None, *, host: str = "127.0.0.1", port: int = 0):
        self.scripts: dict[str, list[Step]] = dict(scripts or {})
        self.received: list[Received] = []
        self.gets: list[Received] = []  # GET requests (health probes, model lists), apart from the completions
        self.disconnects: list[str] = []  # model names whose hung request the client abandoned
        self._counters: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.active = 0
        self.max_active = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # /v1/models, for completeness
                with outer._lock:
                    outer.gets.append(
                        Received("", {}, {k.lower(): v for k, v in self.headers.items()}, time.time(), self.path)
                    )
                body = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in outer.scripts]})
                self._send(200, body.encode(), {"content-type": "application/json"})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    request = json.loads(raw or b"{}")
                except ValueError:
                    request = {}
                model = str(request.get("model", ""))
                with outer._lock:
                    outer.received.append(
                        Received(
                            model, request, {k.lower(): v for k, v in self.headers.items()}, time.time(), self.path
                        )
                    )
                    outer.active += 1
                    outer.max_active = max(outer.max_active, outer.active)
                try:
                    step = outer._next_step(model)
                    if step is None:
                        self._send(
                            404,
                            json.dumps({"error": {"message": f"model {model!r} not found"}}).encode(),
                            {"content-type": "application/json"},
                        )
                        return
                    if step.hang:
                        self._hang(model)
                        return
                    if step.delay_s and self._wait_or_disconnect(step.delay_s):
                        outer.disconnects.append(model)
                        return
                    if step.body is not None:
                        headers = {"content-type": "application/json", **step.headers}
                        self._send(step.status, step.body, headers, drip_s=step.drip_s)
                        return
                    if step.status != 200:
                        body = json.dumps({"error": {"message": f"scripted HTTP {step.status}", "type": "scripted"}})
                        self._send(step.status, body.encode(), {"content-type": "application/json", **step.headers})
                        return
                    n = request.get("n") if isinstance(request.get("n"), int) and request.get("n") > 0 else 1
                    text_completion = not self.path.rstrip("/").endswith("/chat/completions")
                    choices = []
                    for i in range(n):  # `n` samples: the scripted content, evaluated once per choice
                        content = step.content(request) if callable(step.content) else (step.content or "")
                        choices.append(
                            {"index": i, "text": content, "finish_reason": "stop"}
                            if text_completion
                            else {
                                "index": i,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        )
                    completion: dict[str, Any] = {
                        "id": "chatcmpl-scripted",
                        "object": "text_completion" if text_completion else "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": choices,
                    }
                    if step.usage is not None:
                        completion["usage"] = {
                            "prompt_tokens": step.usage[0],
                            "completion_tokens": step.usage[1],
                            "total_tokens": sum(step.usage),
                        }
                        if step.cached_tokens is not None:
                            completion["usage"]["prompt_tokens_details"] = {"cached_tokens": step.cached_tokens}
                    self._send(
                        200,
                        json.dumps(completion).encode(),
                        {"content-type": "application/json", **step.headers},
                        drip_s=step.drip_s,
                    )
                finally:
                    with outer._lock:
                        outer.active -= 1

            def _send(self, status: int, body: bytes, headers: dict[str, str], drip_s: float = 0.0) -> None:
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    if not drip_s:
                        self.wfile.write(body)
                        return
                    for i in range(len(body)):
                        if outer._stop.is_set():
                            return
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                        time.sleep(drip_s)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

            def _wait_or_disconnect(self, seconds: float) -> bool:
                """Sleep up to `seconds`; True if the client closed the connection meanwhile."""
                deadline = time.monotonic() + seconds
                sock = self.connection
                while not outer._stop.is_set():
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    readable, _, _ = select.select([sock], [], [], min(left, 0.05))
                    if readable:
                        try:
                            import socket

                            if sock.recv(1, socket.MSG_PEEK) == b"":
                                return True
                        except OSError:
                            return True
                return True

            def _hang(self, model: str) -> None:
                if self._wait_or_disconnect(120.0) and not outer._stop.is_set():
                    outer.disconnects.append(model)
                self.close_connection = True

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # many concurrent clients (the default backlog is 5)

        self._httpd = Server((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def _next_step(self, model: str) -> Step | None:
        with self._lock:
            steps = self.scripts.get(model)
            if not steps:
                return None
            i = self._counters.get(model, 0)
            self._counters[model] = i + 1
            return steps[min(i, len(steps) - 1)]

    def requests_for(self, model: str) -> list[Received]:
        return [r for r in self.received if r.model == model]

    @property
    def base_url(self) -> str:
        host, port = self._httpd.socket.getsockname()[:2]  # what server_address holds, as str
        return f"http://{host}:{port}/v1"

    def start(self) -> Self:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
