"""`--serve-vllm` with a stand-in `vllm` executable on PATH that speaks the OpenAI protocol: it is
started with the benchmark settings, waited for, used for every sample, and stopped at the end."""

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchmark import cli
from benchmark.run.store import RESULTS, read_records
from benchmark.run.vllm import VllmError, VllmServer
from sandbox import envs

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")

REPO = Path(__file__).resolve().parents[2]

STANDIN = textwrap.dedent('''\
    #!{python}
    """A stand-in for `vllm serve`: the shared scripted OpenAI server, answering with the code it was given."""
    import json, os, signal, sys, time
    sys.path.insert(0, {root!r})
    from tools.doubles.scripted import ScriptedServer, Step, user_code

    argv = sys.argv[1:]
    log = os.environ["STANDIN_LOG"]
    with open(log, "a") as fh:
        fh.write(json.dumps({{"pid": os.getpid(), "argv": argv}}) + "\\n")
    if os.environ.get("STANDIN_FAIL"):
        print("CUDA error: no GPU", file=sys.stderr)
        sys.exit(3)
    port = int(argv[argv.index("--port") + 1])
    model = argv[argv.index("--served-model-name") + 1]
    time.sleep(float(os.environ.get("STANDIN_DELAY", "0.5")))  # loading weights
    # every GET (/health, /v1/models) lists the model; each completion is the request's code, fenced
    srv = ScriptedServer({{model: [Step(content=lambda req: "```python\\n" + user_code(req, 0) + "```")]}}, port=port)

    def stop(*_):
        with open(log, "a") as fh:
            for r in srv.received:
                keys = ("model", "temperature", "top_p", "max_tokens", "n")
                fh.write(json.dumps({{"request": {{k: r.body.get(k) for k in keys}}}}) + "\\n")
            fh.write('{{"stopped": true}}\\n')
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    srv.start()
    while True:
        time.sleep(1)
''')


@pytest.fixture
def standin(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "vllm"
    exe.write_text(STANDIN.format(python=sys.executable, root=str(REPO)))
    exe.chmod(0o755)
    log = tmp_path / "standin.jsonl"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_LOG", str(log))
    monkeypatch.delenv("EDIT_FIDELITY_VLLM", raising=False)
    return log


def _log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox")
@pytest.mark.skipif(not (DATA / "canitedit").exists(), reason=f"no CanItEdit data at {DATA}")
def test_serve_vllm_runs_the_suite_and_stops_the_server(standin, tmp_path):
    out = tmp_path / "run"
    assert (
        cli.main(
            [
                "bench",
                "run",
                "--suite",
                "canitedit",
                "--serve-vllm",
                "org/coder-7b",
                "--tensor-parallel",
                "2",
                "--seed",
                "7",
                "--temperature",
                "0.2",
                "--top-p",
                "0.95",
                "--max-tokens",
                "512",
                "--out",
                str(out),
                "--data",
                str(DATA),
                "--limit",
                "2",
                "--samples",
                "3",
                "--conditions",
                "lazy",
                "--quiet",
                "--workers",
                "2",
                "--vllm-arg=--dtype=half",
            ]
        )
        == 0
    )
    log = _log(standin)
    argv = log[0]["argv"]
    assert argv[:2] == ["serve", "org/coder-7b"]
    for flag, value in (
        ("--tensor-parallel-size", "2"),
        ("--seed", "7"),
        ("--generation-config", "vllm"),
        ("--host", "127.0.0.1"),
        ("--max-num-seqs", "256"),
    ):
        assert argv[argv.index(flag) + 1] == value
    assert "--enable-prefix-caching" in argv and "--dtype=half" in argv
    requests = [e["request"] for e in log if "request" in e]
    assert len(requests) == 2  # one request per prompt: vLLM samples n=3 from one prefill
    assert all(
        r == {"model": "org/coder-7b", "temperature": 0.2, "top_p": 0.95, "max_tokens": 512, "n": 3} for r in requests
    )
    assert log[-1] == {"stopped": True}
    assert not _alive(log[0]["pid"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["backend"] == "vllm:org/coder-7b"
    assert summary["conditions"]["lazy"] == {"pass@1": 0.0, "excess_code": None, "n_tasks": 2, "n_samples": 3}
    assert len(read_records(out / RESULTS)) == 6
    assert json.loads((out / "config.json").read_text())["serve"]["tensor_parallel"] == "2"


def test_a_vllm_that_dies_at_start_up_is_a_clear_error(standin, tmp_path, monkeypatch):
    monkeypatch.setenv("STANDIN_FAIL", "1")
    with pytest.raises(VllmError, match="(?s)exited with status 3.*CUDA error"):
        VllmServer("m", tmp_path / "vllm.log", startup_timeout_s=30).start()


def test_missing_vllm_executable(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("EDIT_FIDELITY_VLLM", raising=False)
    with pytest.raises(VllmError, match="vllm` executable"):
        VllmServer("m", tmp_path / "vllm.log")


def test_slow_start_is_waited_for_and_stop_is_clean(standin, tmp_path, monkeypatch):
    monkeypatch.setenv("STANDIN_DELAY", "1.0")
    t0 = time.monotonic()
    with VllmServer("m", tmp_path / "vllm.log", startup_timeout_s=30) as srv:
        assert time.monotonic() - t0 >= 1.0
        pid = srv.proc.pid
        assert srv.base_url.startswith("http://127.0.0.1:")
    assert not _alive(pid)
