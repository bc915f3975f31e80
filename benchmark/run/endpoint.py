"""An OpenAI-compatible chat-completions endpoint on 127.0.0.1 that answers from an answer book.

Replayed completions (recorded runs, gold, identity) reach the language server the way a model's
answer would: the server sends its usual request to this endpoint and gets the stored completion
back in a fenced block. The engine registers each answer before it sends `requestEdit`, under the
backend's model name (one per sample slot) with the document text and the instruction; the
endpoint finds the entry whose text and instruction both occur in the request's user message.
Stdlib only; one thread per connection.
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


def fence(code: str, lang: str = "python") -> str:
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    marks = "`" * max(3, longest + 1)
    body = code if code.endswith("\n") else code + "\n"
    return f"{marks}{lang}\n{body}{marks}\n"


class _Entry:
    __slots__ = ("answer", "instruction", "lang", "served", "text")

    def __init__(self, text: str, instruction: str, answer: str, lang: str | None) -> None:
        self.text, self.instruction, self.answer, self.served = text, instruction.strip(), answer, 0
        self.lang = lang


class AnswerBook:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, dict[int, _Entry]] = {}
        self._ids = itertools.count()

    def put(self, model: str, text: str, instruction: str, answer: str, *, lang: str | None = "python") -> int:
        """Register an answer; `lang`: the code fence's tag it is served in, None: served as it is."""
        with self._lock:
            i = next(self._ids)
            self._entries.setdefault(model, {})[i] = _Entry(text, instruction, answer, lang)
            return i

    def drop(self, model: str, handle: int) -> None:
        with self._lock:
            self._entries.get(model, {}).pop(handle, None)

    def find(self, model: str, message: str) -> _Entry | None:
        with self._lock:
            best: _Entry | None = None
            for e in self._entries.get(model, {}).values():
                if (
                    e.text in message
                    and e.instruction in message
                    and (best is None or len(e.text) + len(e.instruction) > len(best.text) + len(best.instruction))
                ):
                    best = e
            if best is None:
                return None
            best.served += 1
            return best


class ReplayEndpoint:
    """`with ReplayEndpoint(book) as ep: ep.base_url` -> http://127.0.0.1:PORT/v1 (`host`: the address it
    binds, e.g. the driver's cluster address when the language servers run on other nodes)"""

    def __init__(self, book: AnswerBook, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.book = book
        self.host = host
        self.requests = 0
        self.unmatched = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in book._entries]})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    req = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                    return
                outer.requests += 1
                model = str(req.get("model", ""))
                text_completion = not self.path.rstrip("/").endswith("/chat/completions")
                if text_completion:  # /v1/completions: the prompt is the message, the answer a `text`
                    message = str(req.get("prompt", ""))
                else:
                    message = "\n".join(
                        str(m.get("content", "")) for m in req.get("messages", []) if m.get("role") == "user"
                    )
                entry = book.find(model, message)
                if entry is None:
                    outer.unmatched += 1
                    self._send(404, {"error": {"message": f"no replayed answer for model {model!r} and this request"}})
                    return
                answer = entry.answer
                n = max(1, int(req.get("n") or 1))
                if text_completion:  # a base model continues the prompt with the code itself
                    choices = [{"index": i, "text": answer, "finish_reason": "stop"} for i in range(n)]
                else:
                    content = fence(answer, entry.lang) if answer.strip() and entry.lang else answer
                    choices = [
                        {"index": i, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                        for i in range(n)
                    ]
                self._send(
                    200,
                    {
                        "id": "cmpl-replay",
                        "object": "text_completion" if text_completion else "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": choices,
                        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                    },
                )

            def _send(self, status: int, obj: dict) -> None:
                body = json.dumps(obj).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 256
            daemon_threads = True
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET  # a cluster's IPv6 address

        self._httpd = Server((host, port), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
