"""Several OpenAI-compatible endpoints as one backend (benchmark/balancer.py): real scripted servers on
127.0.0.1, one fast, one slow, one failing, behind the balancer, and a replay through the real CLI,
language server and sandbox with all of them."""

import json
import os
import socket
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmark import cli
from benchmark.balancer import Balancer
from benchmark.store import RESULTS, read_records
from benchmark.vllm import command
from sandbox import envs
from tests.benchmark.test_replay_vllm import _log, standin  # noqa: F401  # the stand-in `vllm` fixture
from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")


def _chat(base: str, i: int) -> tuple[int, dict]:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"request {i}"}]}).encode()
    req = urllib.request.Request(  # noqa: S310  # http://127.0.0.1 only
        f"{base}/chat/completions", data=body, headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310  # http://127.0.0.1 only
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _dead_url() -> str:
    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def test_balanced_by_outstanding_requests_failing_endpoint_removed_nothing_lost():
    answer = [Step(content=lambda req: "echo " + req["messages"][-1]["content"])]
    slow_answer = [Step(content=lambda req: "echo " + req["messages"][-1]["content"], delay_s=0.4)]
    with (
        ScriptedServer({"m": answer}) as fast,
        ScriptedServer({"m": slow_answer}) as slow,
        ScriptedServer({"m": [Step(status=500)]}) as failing,
    ):
        urls = fast_url, slow_url, failing_url = fast.base_url, slow.base_url, failing.base_url
        with Balancer(list(urls), timeout_s=30, max_failures=2) as bal:
            with ThreadPoolExecutor(6) as pool:
                got = list(pool.map(lambda i: _chat(bal.base_url, i), range(40)))
            stats = {s.url: s for s in bal.stats()}
    # every request answered, each with its own text (a retried request is not mixed up with another)
    assert [status for status, _ in got] == [200] * 40
    assert [b["choices"][0]["message"]["content"] for _, b in got] == [f"echo request {i}" for i in range(40)]
    # the failing endpoint: removed after two failures in a row, its requests answered elsewhere
    bad = stats[failing_url]
    assert bad.served == 0 and bad.removed is not None and "HTTP 500" in bad.removed
    # removed at its second failure; requests already on their way to it (at most the 6 in flight) fail too,
    # and none is sent to it afterwards
    assert 2 <= bad.failures <= 6 and len(failing.received) == bad.failures
    # by outstanding requests: the slow one holds its requests longer, so it is given fewer
    assert stats[fast_url].served + stats[slow_url].served == 40
    assert stats[fast_url].served > 2 * stats[slow_url].served > 0
    assert len(fast.received) == stats[fast_url].served and len(slow.received) == stats[slow_url].served


def test_all_endpoints_failing_is_a_503_not_an_answer():
    with ScriptedServer({"m": [Step(status=502)]}) as a, Balancer([a.base_url, _dead_url()], max_failures=1) as bal:
        status, body = _chat(bal.base_url, 0)
        again, _ = _chat(bal.base_url, 1)  # both removed now: answered without trying them
        stats = bal.stats()
    assert status == 503 and "no endpoint could answer" in body["error"]["message"]
    assert again == 503 and all(s.removed for s in stats) and len(a.received) == 1


def test_busy_endpoint_moves_on_without_removal():
    with (
        ScriptedServer({"m": [Step(status=429, headers={"retry-after": "1"})]}) as busy,
        ScriptedServer({"m": [Step(content="ok")]}) as free,
    ):
        busy_url = busy.base_url
        with Balancer([busy_url, free.base_url]) as bal:
            got = [_chat(bal.base_url, i) for i in range(4)]
            stats = {s.url: s for s in bal.stats()}
    assert [s for s, _ in got] == [200] * 4
    assert stats[busy_url].removed is None  # busy is not broken


def test_concurrent_forwarding_stays_within_what_was_sent():
    lock = threading.Lock()
    seen: list[str] = []

    def content(req: dict) -> str:
        with lock:
            seen.append(req["messages"][-1]["content"])
        return "x"

    with (
        ScriptedServer({"m": [Step(content=content, delay_s=0.05)]}) as a,
        ScriptedServer({"m": [Step(content=content, delay_s=0.05)]}) as b,
        Balancer([a.base_url, b.base_url]) as bal,
        ThreadPoolExecutor(8) as pool,
    ):
        list(pool.map(lambda i: _chat(bal.base_url, i), range(16)))
        stats = bal.stats()
    assert sorted(seen) == sorted(f"request {i}" for i in range(16))  # each sent once, none twice
    assert all(s.max_outstanding >= 2 for s in stats)  # both carried concurrent requests


def test_bad_endpoint_options_are_usage_errors(tmp_path, capsys):
    def bench(*argv: str) -> int:
        return cli.main(["bench", "run", "--suite", "canitedit", "--out", str(tmp_path / "x"), *argv])

    assert bench("--backend", "openai", "--model", "m", "--base-url", "http://a:1/v1", "--base-url", "ftp://b") == 2
    assert "not an http(s) URL" in capsys.readouterr().err
    assert (
        bench("--backend", "openai", "--model", "m", "--base-url", "http://a:1/v1", "--base-url", "http://a:1/v1/") == 2
    )
    assert "listed twice" in capsys.readouterr().err
    (tmp_path / "none.txt").write_text("# nothing here\n\n")
    assert bench("--backend", "openai", "--model", "m", "--endpoints", str(tmp_path / "none.txt")) == 2
    assert "no URL in the file" in capsys.readouterr().err
    assert bench("--backend", "openai", "--model", "m", "--endpoints", str(tmp_path / "missing.txt")) == 2
    assert "--endpoints" in capsys.readouterr().err


def test_vllm_parallel_options_reach_its_argv():
    argv = command("vllm", "org/model", 8123, tensor_parallel=2, data_parallel=4, seed=3)
    assert argv[argv.index("--tensor-parallel-size") + 1] == "2"
    assert argv[argv.index("--data-parallel-size") + 1] == "4"
    assert "--data-parallel-size" not in command("vllm", "org/model", 8123)  # vLLM's default: one replica


@pytest.mark.skipif(not (DATA / "canitedit" / "canitedit_test.jsonl").exists(), reason=f"no CanItEdit data at {DATA}")
@pytest.mark.skipif(not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox")
def test_serve_vllm_parallel_options_through_the_cli(standin, tmp_path):  # noqa: F811  # the fixture
    out = tmp_path / "run"
    argv = ["bench", "run", "--suite", "canitedit", "--serve-vllm", "org/m", "--data-parallel", "4",
            "--tensor-parallel", "2", "--out", str(out), "--data", str(DATA), "--limit", "1", "--conditions", "lazy",
            "--quiet", "--workers", "1"]  # fmt: skip
    assert cli.main(argv) == 0
    started = _log(standin)[0]["argv"]
    assert started[started.index("--data-parallel-size") + 1] == "4"
    assert started[started.index("--tensor-parallel-size") + 1] == "2"
    serve = json.loads((out / "config.json").read_text())["serve"]
    assert serve["data_parallel"] == "4" and serve["tensor_parallel"] == "2"


@pytest.mark.skipif(not (DATA / "canitedit" / "canitedit_test.jsonl").exists(), reason=f"no CanItEdit data at {DATA}")
@pytest.mark.skipif(not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox")
def test_replay_through_several_endpoints_loses_no_sample(tmp_path, capsys):
    from benchmark import suites

    tasks = suites.get("canitedit").load(str(DATA), 3)
    gold = {t.before: t.after.rstrip("\n") + "\n" for t in tasks}

    def answer(req: dict) -> str:  # the gold edit of whichever task the prompt holds
        code = user_code(req, 0)
        return fenced(next(after for before, after in gold.items() if before.strip() == code.strip()))

    with (
        ScriptedServer({"fix": [Step(content=answer)]}) as fast,
        ScriptedServer({"fix": [Step(content=answer, delay_s=0.5)]}) as slow,
        ScriptedServer({"fix": [Step(status=503)]}) as failing,
    ):
        fast_url, slow_url, failing_url = fast.base_url, slow.base_url, failing.base_url
        dead_url = _dead_url()  # down from the start: a warning, then removed on its first failures
        (tmp_path / "endpoints.txt").write_text(f"# servers of one model\n{slow_url}\n{failing_url}\n{dead_url}\n")
        out = tmp_path / "run"
        code = cli.main(
            [
                "bench",
                "run",
                "--suite",
                "canitedit",
                "--backend",
                "openai",
                "--base-url",
                fast.base_url,
                "--endpoints",
                str(tmp_path / "endpoints.txt"),
                "--model",
                "fix",
                "--out",
                str(out),
                "--data",
                str(DATA),
                "--limit",
                "3",
                "--samples",
                "2",
                "--quiet",
                "--workers",
                "2",
                "--concurrency",
                "4",
            ]
        )
    assert code == 0
    records = read_records(out / RESULTS)
    assert len(records) == 12 and all(r.outcome == "pass" for r in records)  # 3 tasks x 2 conditions x 2 samples
    stats = {s["url"]: s for s in json.loads((out / "endpoints.json").read_text())}
    assert stats[failing_url]["removed"] and stats[failing_url]["served"] == 0
    assert stats[dead_url]["removed"] and stats[dead_url]["served"] == 0
    err = capsys.readouterr().err
    assert f"warning: backend {dead_url} does not answer" in err and "goes on with the others" in err
    assert stats[fast_url]["served"] + stats[slow_url]["served"] == 6  # one request per prompt (n=2)
    assert stats[fast_url]["served"] >= stats[slow_url]["served"]
    config = json.loads((out / "config.json").read_text())
    assert config["base_url"] == "balanced" and fast_url in config["serve"]["endpoints"]
