"""Several OpenAI-compatible endpoints as one backend (benchmark/run/balancer.py): real scripted servers on
127.0.0.1, one fast, one slow, one failing, one that goes down and comes back, behind the balancer, and a
replay through the real CLI, language server and sandbox with all of them."""

import json
import logging
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmark import cli
from benchmark.run.balancer import Balancer
from benchmark.run.store import RESULTS, read_records
from benchmark.run.vllm import command
from sandbox import envs
from tests.benchmark.test_replay_vllm import _log, standin  # noqa: F401  # the stand-in `vllm` fixture
from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")


def _chat(base: str, i: int, key: str | None = None) -> tuple[int, dict]:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"request {i}"}]}).encode()
    headers = {"content-type": "application/json"} | ({"authorization": f"Bearer {key}"} if key else {})
    req = urllib.request.Request(f"{base}/chat/completions", data=body, headers=headers)  # noqa: S310  # 127.0.0.1
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:  # noqa: S310  # http://127.0.0.1 only
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _dead_url() -> str:
    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _until(what: str, check: Callable[[], object], deadline_s: float = 60.0) -> object:
    """Poll until `check()` is truthy (a generous deadline: the machine may be very loaded)."""
    end = time.monotonic() + deadline_s
    while not (got := check()):
        if time.monotonic() > end:
            pytest.fail(f"not within {deadline_s:.0f} s: {what}")
        time.sleep(0.02)
    return got


ECHO = [Step(content=lambda req: "echo " + req["messages"][-1]["content"])]


def test_balanced_by_outstanding_requests_failing_endpoint_removed_nothing_lost():
    answer = [Step(content=lambda req: "echo " + req["messages"][-1]["content"])]
    slow_answer = [Step(content=lambda req: "echo " + req["messages"][-1]["content"], delay_s=0.4)]
    with (
        ScriptedServer({"m": answer}) as fast,
        ScriptedServer({"m": slow_answer}) as slow,
        ScriptedServer({"m": [Step(status=500)]}) as failing,
    ):
        urls = fast_url, slow_url, failing_url = fast.base_url, slow.base_url, failing.base_url
        # probes far later than this test lasts: it is about removal (re-admission is tested below)
        with Balancer(list(urls), timeout_s=30, max_failures=2, probe_s=300) as bal:
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
    with (
        ScriptedServer({"m": [Step(status=502)]}) as a,
        Balancer([a.base_url, _dead_url()], max_failures=1, probe_s=120) as bal,
    ):
        status, body = _chat(bal.base_url, 0)
        t0 = time.monotonic()
        again, _ = _chat(bal.base_url, 1)  # both removed now: answered without trying them
        waited = time.monotonic() - t0
        stats = bal.stats()
    assert status == 503 and "no endpoint could answer" in body["error"]["message"]
    assert again == 503 and all(s.removed for s in stats) and len(a.received) == 1
    assert waited < 60  # at once, not after the probes (120 s away) had a chance to bring one back
    assert all(s.readmitted == 0 and s.last_removed == s.removed for s in stats)


def test_endpoint_that_restarts_is_probed_readmitted_and_serves_again(caplog):
    caplog.set_level(logging.DEBUG, logger="benchmark.run.balancer")
    flaky = ScriptedServer({"m": ECHO}).start()
    flaky_url = flaky.base_url
    port = int(flaky_url.rsplit(":", 1)[1].split("/")[0])
    back: ScriptedServer | None = None
    try:
        with (
            ScriptedServer({"m": ECHO}) as steady,
            Balancer([flaky_url, steady.base_url], timeout_s=30, probe_s=0.2, probe_max_s=1.0) as bal,
        ):

            def stats():
                return {s.url: s for s in bal.stats()}[flaky_url]

            # ties go to the fewest served, then the first: sequential requests alternate, then the
            # stopped server is tried first until its second failure removes it
            got = [_chat(bal.base_url, i, key="sk-secret-1") for i in range(4)]
            assert stats().served == 2
            flaky.close()  # the vLLM server dies (an OOM)
            got += [_chat(bal.base_url, i, key="sk-secret-1") for i in range(4, 6)]
            assert stats().removed is not None and stats().failures == 2
            _until("a probe of the stopped server fails", lambda: stats().probe_failures >= 1)
            got += [_chat(bal.base_url, i, key="sk-secret-1") for i in range(6, 9)]  # while it is out
            back = ScriptedServer({"m": ECHO}, port=port).start()  # restarted on the same port
            _until("the restarted server is re-admitted", lambda: stats().readmitted == 1)
            got += [_chat(bal.base_url, i, key="sk-secret-1") for i in range(9, 13)]
            final = stats()
    finally:
        if back is not None:
            back.close()
    assert [status for status, _ in got] == [200] * 13  # nothing lost while it was out
    assert [b["choices"][0]["message"]["content"] for _, b in got] == [f"echo request {i}" for i in range(13)]
    # back in use: the requests after re-admission went to it first (it had served the fewest)
    assert final.removed is None and final.readmitted == 1 and final.served > 2 and len(back.received) >= 1
    assert final.last_removed is not None and "ConnectionRefusedError" in final.last_removed
    assert final.failures == 2  # no request was tried on it while it was out: only the probes
    # the probes: GET /v1/models with the key the server sends; no completion before the re-admission
    assert back.gets and all(g.path == "/v1/models" for g in back.gets)
    assert all(g.headers.get("authorization") == "Bearer sk-secret-1" for g in back.gets)
    readmitted_at = next(r.created for r in caplog.records if "answers again" in r.getMessage())
    assert all(r.at >= readmitted_at for r in back.received)
    assert any(flaky_url in r.getMessage() and "re-admitted" in r.getMessage() for r in caplog.records)
    assert "sk-secret-1" not in caplog.text  # the key is used, never logged


def test_endpoint_answering_500_then_ok_comes_back_after_its_cool_down(caplog):
    caplog.set_level(logging.WARNING, logger="benchmark.run.balancer")
    script = [Step(status=500), Step(status=500), Step(content="ok")]  # 500s while it recovers, then fine
    with ScriptedServer({"m": script}) as srv, Balancer([srv.base_url], probe_s=0.2, max_failures=2) as bal:
        url = srv.base_url
        first = [_chat(bal.base_url, i)[0] for i in range(2)]  # the only endpoint fails: removed at the 2nd
        _until("the endpoint is re-admitted", lambda: bal.stats()[0].readmitted == 1)
        status, body = _chat(bal.base_url, 2)
        (final,) = bal.stats()
    assert first == [503, 503] and status == 200 and body["choices"][0]["message"]["content"] == "ok"
    assert final.removed is None and final.last_removed == f"{url}: HTTP 500"
    assert (final.readmitted, final.failures, final.served, len(srv.received)) == (1, 2, 1, 3)
    # the first probe waited for the cool-down after the removal (a lower bound: never sooner)
    removed_at = next(r.created for r in caplog.records if "removed after 2 failures" in r.getMessage())
    assert srv.gets and srv.gets[0].at - removed_at >= 0.15


def test_balancer_binds_the_host_it_is_given():
    with ScriptedServer({"m": ECHO}) as a, Balancer([a.base_url], host="localhost") as bal:
        assert bal.base_url.startswith("http://localhost:")
        status, body = _chat(bal.base_url, 0)
    assert status == 200 and body["choices"][0]["message"]["content"] == "echo request 0"
    with ScriptedServer({"m": ECHO}) as a, Balancer([a.base_url]) as bal:
        assert bal.base_url.startswith("http://127.0.0.1:")  # the default: this machine only


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

    tasks = suites.get("canitedit").dataset.load(str(DATA), 3)
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
    # it answers the probes (GET /models) but fails every request: removed again each time it is re-admitted
    assert stats[failing_url]["last_removed"] and stats[failing_url]["served"] == 0
    assert stats[dead_url]["removed"] and stats[dead_url]["served"] == 0
    err = capsys.readouterr().err
    assert f"warning: backend {dead_url} does not answer" in err and "goes on with the others" in err
    assert stats[fast_url]["served"] + stats[slow_url]["served"] == 6  # one request per prompt (n=2)
    assert stats[fast_url]["served"] >= stats[slow_url]["served"]
    config = json.loads((out / "config.json").read_text())
    assert config["base_url"] == "balanced" and fast_url in config["serve"]["endpoints"]
