"""A Hugging Face hub stand-in on 127.0.0.1 serving one repository (a model or a data set) from memory,
built on the shared `FileServer`. It answers what `huggingface_hub` asks for: the revision info and the
file tree (`snapshot_download`), and HEAD/GET of each file under resolve/REVISION/ with the commit, the
size and the SHA-256 as the hub sends them for LFS files (X-Linked-Etag). Point HF_ENDPOINT (or the
`endpoint` argument) at `url`.

`bad_etag`: files whose announced SHA-256 is not their content's. `cut`: files whose first GET is cut
off after 1000 bytes (a lost connection).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from tools.doubles.files import FileServer, Reply, Request

SHA = "0123456789abcdef0123456789abcdef01234567"
_JSON = {"Content-Type": "application/json"}


class FakeHub(FileServer):
    def __init__(
        self,
        repo: str,
        files: dict[str, bytes],
        *,
        kind: str = "model",
        bad_etag: Iterable[str] = (),
        cut: Iterable[str] = (),
    ) -> None:
        super().__init__(route=self._hub)
        self.repo, self.kind, self.files = repo, kind, dict(files)
        self.bad_etag, self.cut = set(bad_etag), set(cut)
        self._resolve = f"/{repo}/resolve/" if kind == "model" else f"/{kind}s/{repo}/resolve/"
        self._api = f"/api/{kind}s/{repo}"

    def _hub(self, request: Request) -> Reply:
        path = request.path
        if path in (self._api, f"{self._api}/revision/main"):
            info = {"id": self.repo, "sha": SHA, "siblings": [{"rfilename": f} for f in self.files]}
            return Reply(body=json.dumps(info).encode(), headers=_JSON)
        if path.startswith(f"{self._api}/tree/"):
            tree = [
                {"type": "file", "path": f, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                for f, b in self.files.items()
            ]
            return Reply(body=json.dumps(tree).encode(), headers=_JSON)
        revision, _, name = path.removeprefix(self._resolve).partition("/")
        if not path.startswith(self._resolve) or revision not in ("main", SHA) or name not in self.files:
            return Reply(404, b'{"error": "Entry not found"}', {**_JSON, "X-Error-Code": "EntryNotFound"})
        body = self.files[name]
        etag = hashlib.sha256(b"other" if name in self.bad_etag else body).hexdigest()
        headers = {"X-Repo-Commit": SHA, "X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(body))}
        cut_at = None
        if request.method == "GET" and name in self.cut and not request.range:
            self.cut.discard(name)
            cut_at = 1000
        return Reply(body=body, headers=headers, cut_at=cut_at)
