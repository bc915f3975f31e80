"""The replay endpoint over real HTTP on 127.0.0.1 and the recorded-run loaders."""

import gzip
import io
import json
import tarfile
import urllib.error
import urllib.request

import pytest

from benchmark.run import recorded
from benchmark.run.endpoint import AnswerBook, ReplayEndpoint, fence
from benchmark.suites.canitedit.suite import Edits


def post(url: str, body: dict) -> tuple[int, dict]:
    data, headers = json.dumps(body).encode(), {"content-type": "application/json"}
    req = urllib.request.Request(url + "/chat/completions", data=data, headers=headers)  # noqa: S310 - ours
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:  # noqa: S310
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_endpoint_answers_by_slot_text_and_instruction():
    book = AnswerBook()
    book.put("s0", "x = 1\n", "make it two", "x = 2\n")
    book.put("s1", "x = 1\n", "make it two", "x = 3\n")
    book.put("s0", "y = 1\n", "make it two", "y = 2\n")
    with ReplayEndpoint(book) as ep:
        assert ep.base_url.startswith("http://127.0.0.1:")
        msg = "Edit.\n\nInstruction: make it two\n```python\nx = 1\n```"
        status, body = post(ep.base_url, {"model": "s1", "messages": [{"role": "user", "content": msg}]})
        assert status == 200
        assert body["choices"][0]["message"]["content"] == "```python\nx = 3\n```\n"
        status, body = post(
            ep.base_url, {"model": "s0", "messages": [{"role": "user", "content": msg.replace("x", "y")}]}
        )
        assert body["choices"][0]["message"]["content"] == "```python\ny = 2\n```\n"
        status, body = post(ep.base_url, {"model": "s0", "messages": [{"role": "user", "content": "other"}]})
        assert status == 404 and ep.unmatched == 1


def _has_ipv6_loopback() -> bool:
    import socket

    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_endpoint_listens_on_the_address_given(host):
    """Servers on a cluster's nodes reach the endpoint at the driver's address (IPv4 or IPv6)."""
    if ":" in host and not _has_ipv6_loopback():
        pytest.skip("no IPv6 loopback here")
    book = AnswerBook()
    book.put("s0", "x = 1\n", "make it two", "x = 2\n")
    with ReplayEndpoint(book, host=host) as ep:
        assert ep.base_url.startswith("http://[::1]:" if ":" in host else "http://127.0.0.1:")
        msg = "Instruction: make it two\n```python\nx = 1\n```"
        status, body = post(ep.base_url, {"model": "s0", "messages": [{"role": "user", "content": msg}]})
    assert status == 200 and body["choices"][0]["message"]["content"] == "```python\nx = 2\n```\n"


def test_fence_outgrows_backticks_in_the_code():
    code = 'doc = """\n```python\nx\n```\n"""\n'
    assert fence(code).startswith("````python\n") and fence(code).endswith("````\n")


def _archive(tmp_path):
    buf = tmp_path / "run.tar.gz"
    with tarfile.open(buf, "w:gz") as tar:

        def add(name, obj):
            data = gzip.compress(json.dumps(obj).encode())
            info = tarfile.TarInfo(f"somerun/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        add("1_cipher_instruction_lazy.json.gz", {"completions": ["a = 1\n", "a = 2\n"]})
        add(
            "1_cipher_instruction_lazy.results.json.gz",
            {
                "results": [
                    {"status": "OK", "coverage_missing": "[3]"},
                    {"status": "Exception", "coverage_missing": None},
                ]
            },
        )
        add("summary.json.gz", {})
    return buf


def test_load_a_canitedit_archive(tmp_path):
    r = Edits().load_recorded(_archive(tmp_path))  # the suite reads its archives, `recorded` the rest
    assert r.get("1_cipher", "lazy") == ["a = 1\n", "a = 2\n"]
    assert r.verdict("1_cipher", "lazy", 0) is True and r.verdict("1_cipher", "lazy", 1) is False
    assert r.recorded_missing("1_cipher", "lazy", 0) == [3]
    assert r.samples == 2 and r.get("1_cipher", "descriptive") == []


def test_load_errors(tmp_path):
    with pytest.raises(recorded.RecordedError, match="not found"):
        recorded.load(tmp_path / "nope.tar.gz")
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(recorded.RecordedError, match="expected"):
        recorded.load(tmp_path / "x.txt")
    with pytest.raises(recorded.RecordedError, match="CanItEdit's format: replay it with --suite canitedit"):
        recorded.load(_archive(tmp_path))  # the generic loader: an archive is CanItEdit's hook's to read
