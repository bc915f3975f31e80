"""A Hugging Face hub stand-in on 127.0.0.1 serving one model repository from a directory (stdlib only).

It answers what `huggingface_hub.snapshot_download` asks for: the revision info, the file tree, and
HEAD/GET of each file under /{repo}/resolve/{sha}/. Point HF_ENDPOINT at `url`. Requests are recorded.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Self
from urllib.parse import unquote, urlsplit

SHA = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    def __init__(self, repo: str, directory: Path):
        self.repo = repo
        self.files = {p.name: p.read_bytes() for p in Path(directory).iterdir() if p.is_file()}
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                hub.requests.append(f"{self.command} {self.path}")

            def do_GET(self) -> None:
                self._route(head=False)

            def do_HEAD(self) -> None:
                self._route(head=True)

            def _send(self, code: int, body: bytes, headers: dict[str, str], head: bool) -> None:
                self.send_response(code)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _route(self, head: bool) -> None:
                path = unquote(urlsplit(self.path).path)
                as_json = {"Content-Type": "application/json"}
                if path in (f"/api/models/{hub.repo}", f"/api/models/{hub.repo}/revision/main"):
                    info = {"id": hub.repo, "sha": SHA, "siblings": [{"rfilename": f} for f in hub.files]}
                    return self._send(200, json.dumps(info).encode(), as_json, head)
                if path.startswith(f"/api/models/{hub.repo}/tree/"):
                    tree = [{"type": "file", "path": f, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                            for f, b in hub.files.items()]
                    return self._send(200, json.dumps(tree).encode(), as_json, head)
                prefix = f"/{hub.repo}/resolve/{SHA}/"
                name = path[len(prefix):] if path.startswith(prefix) else None
                if name in hub.files:
                    body = hub.files[name]
                    headers = {"X-Repo-Commit": SHA, "ETag": f'"{hashlib.sha1(body).hexdigest()}"'}
                    return self._send(200, body, headers, head)
                self._send(404, b'{"error": "not found"}', {**as_json, "X-Error-Code": "EntryNotFound"}, head)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
