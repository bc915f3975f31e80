"""`bench run --ray`: a real local Ray cluster of two nodes (`ray start --head` and `ray start --address`,
told apart by custom resources), a CanItEdit replay through it compared with the single-machine run,
a node's raylet killed mid-run, and a run resumed on a restarted cluster. Every process a cluster starts
is in the process group of its `ray start --block`, which the teardown ends (no `ray stop`: it would end
every Ray process of the machine, other users' included)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmark.run.cluster.judge import TASK_RETRIES
from benchmark.run.cluster.trace import HOLD_ENV, TRACE_ENV
from benchmark.run.store import RESULTS, read_records
from sandbox import envs
from tools.doubles.scripted import ScriptedServer, Step, fenced

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")
ROOT = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).with_name("ray")
# a private test cluster on 127.0.0.1: no token auth (Ray >= 2.5x turns it on when ~/.ray/auth_token exists)
ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
TIMINGS = ("server_ms", "sandbox_ms", "scoring_ms", "reused_verdict", "executions")  # how long, and which duplicate ran

needs_data = [
    pytest.mark.skipif(
        not (DATA / "canitedit" / "canitedit_test.jsonl").exists(), reason=f"no CanItEdit data at {DATA}"
    ),
    pytest.mark.skipif(
        not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox"
    ),
]
needs_ray = pytest.mark.skipif(not RAY.exists(), reason="ray is not installed: pip install 'edit-fidelity[ray]'")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Node:
    proc: subprocess.Popen[bytes]
    node_manager_port: int

    def raylet_pid(self) -> int:
        """The raylet this node's `ray start` launched (found by its own node-manager port)."""
        mark = f"--node_manager_port={self.node_manager_port}".encode()
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    cmd = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                if b"raylet" in cmd.split(b"\0")[0] and mark in cmd:
                    return int(entry.name)
        raise AssertionError(f"no raylet with {mark.decode()}")

    def kill(self) -> None:
        """The node dies: its raylet and the worker processes it started (SIGKILL, by pid)."""
        raylet = self.raylet_pid()
        children = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _ppid(p) == raylet]
        for pid in [raylet, *children]:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _ppid(proc: Path) -> int | None:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _events(trace: Path) -> list[dict]:
    return [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []


def _open_steps(trace: Path, kind: str) -> list[str]:
    """The tasks of `kind` steps (`""`: executions, `"ask-"`: session requests) started and not ended."""
    open_: dict[tuple[int, str], int] = {}
    for e in _events(trace):
        key = (e["pid"], e["task_id"])
        if e["event"] == f"{kind}start":
            open_[key] = open_.get(key, 0) + 1
        elif e["event"] == f"{kind}end":
            open_[key] = open_.get(key, 0) - 1
    return [task for (_pid, task), n in open_.items() if n > 0]


@dataclass
class Cluster:
    address: str
    head: Node
    worker: Node
    traces: dict[str, Path]  # each node's steps: `start`/`end` and `ask-start`/`ask-end` lines (TRACE_ENV)

    @property
    def worker_trace(self) -> Path:
        return self.traces["worker"]

    def running_on_worker(self) -> str | None:
        """A task the worker node has started executing and not finished, if any."""
        return next(iter(_open_steps(self.worker_trace, "")), None)

    def asking_on_worker(self) -> str | None:
        """A task whose request a session on the worker node is answering, if any."""
        return next(iter(_open_steps(self.worker_trace, "ask-")), None)

    def finished_on_worker(self, task_id: str) -> bool:
        return any(e["event"] == "end" and e["task_id"] == task_id for e in _events(self.worker_trace))


def _start_node(temp: Path, log: Path, *args: str, env: dict[str, str] | None = None, cpus: int = 1) -> Node:
    nm = _free_port()
    cmd = [
        str(RAY),
        "start",
        "--block",
        "--num-cpus",
        str(cpus),
        "--disable-usage-stats",
        "--temp-dir",
        str(temp),
        "--node-manager-port",
        str(nm),
        "--object-manager-port",
        str(_free_port()),
        "--min-worker-port",
        "0",
        "--max-worker-port",
        "0",  # any free ports for the workers
        "--dashboard-agent-listen-port",
        str(_free_port()),
        "--metrics-export-port",
        str(_free_port()),
        "--object-store-memory",
        str(100 * 1024 * 1024),  # small: CI machines have little /dev/shm
        "--runtime-env-agent-port",
        str(_free_port()),
        *args,
    ]
    out = open(log, "ab")  # noqa: SIM115  # the node's output for the test's failure message
    proc = subprocess.Popen(
        cmd, stdout=out, stderr=subprocess.STDOUT, env={**ENV, **(env or {})}, start_new_session=True
    )
    out.close()
    deadline = time.monotonic() + 90
    while b"Ray runtime started" not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop(Node(proc, nm))
            pytest.skip(f"ray cannot start a node here: {log.read_text(errors='replace')[-600:]}")
        time.sleep(0.2)
    return Node(proc, nm)


def _descendants(pid: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit() and (pp := _ppid(p)) is not None:
            parents.setdefault(pp, []).append(int(p.name))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _stop(node: Node) -> None:
    """The node's processes: its `ray start` group, then any descendant that left the group."""
    left = _descendants(node.proc.pid)
    for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 10)):
        try:
            os.killpg(node.proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            node.proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    for pid in left:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _wait_nodes(address: str, n: int) -> None:
    probe = (
        "import ray, sys, time; ray.init(address=sys.argv[1], log_to_driver=False); d = time.monotonic() + 60\n"
        "while sum(x['Alive'] for x in ray.nodes()) < int(sys.argv[2]) and time.monotonic() < d: time.sleep(0.2)\n"
        "sys.exit(sum(x['Alive'] for x in ray.nodes()) < int(sys.argv[2]))"
    )
    assert subprocess.run([sys.executable, "-c", probe, address, str(n)], timeout=120, env=ENV).returncode == 0


@contextmanager
def cluster(cpus: int = 1, hold: dict[str, float] | None = None) -> Iterator[Cluster]:
    """Two nodes of `cpus` logical CPUs each (a session's or an execution's slot); `hold`: per node, the
    seconds each traced step waits after its start line (`benchmark.run.cluster.trace.HOLD_ENV`)."""
    temp = Path(tempfile.mkdtemp(prefix="efray-", dir="/tmp"))  # short: Ray's socket paths have a length limit
    port = _free_port()
    nodes: list[Node] = []
    traces = {name: temp / f"{name}-trace.jsonl" for name in ("head", "worker")}

    def env(name: str) -> dict[str, str]:
        out = {TRACE_ENV: str(traces[name])}
        if hold and name in hold:
            out[HOLD_ENV] = str(hold[name])
        return out

    try:
        nodes.append(
            _start_node(
                temp,
                temp / "head.log",
                "--head",
                "--port",
                str(port),
                "--include-dashboard=false",
                "--resources",
                '{"head": 1}',
                env=env("head"),
                cpus=cpus,
            )
        )
        address = f"127.0.0.1:{port}"
        nodes.append(
            _start_node(
                temp,
                temp / "worker.log",
                "--address",
                address,
                "--resources",
                '{"worker": 1}',
                env=env("worker"),
                cpus=cpus,
            )
        )
        _wait_nodes(address, 2)
        yield Cluster(address, nodes[0], nodes[1], traces)
    finally:
        for node in reversed(nodes):
            _stop(node)
        shutil.rmtree(temp, ignore_errors=True)


def bench(out: Path, *extra: str, ray: str | None = None, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable,
        "-m",
        "benchmark.cli",
        "bench",
        "run",
        "--suite",
        "canitedit",
        "--backend",
        "gold",
        "--out",
        str(out),
        "--data",
        str(DATA),
        "--quiet",
        "--workers",
        "2",
        *extra,
    ]
    if ray:
        cmd += ["--ray", ray]
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**ENV, **(env or {})},
    )


def finished(proc: subprocess.Popen[bytes], timeout: float = 180) -> str:
    out, _ = proc.communicate(timeout=timeout)
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text[-2000:]
    return text


def comparable(run: Path) -> list[dict]:
    """The run's records, timings aside; of a sample run again (a retried error), its latest record."""
    rows = {}
    for line in (run / RESULTS).read_text().splitlines():
        r = json.loads(line)
        rows[r["task_id"], r["condition"], r["sample"]] = {k: v for k, v in r.items() if k not in TIMINGS}
    return [rows[k] for k in sorted(rows)]


def executed(run: Path) -> list[dict]:
    return [e for e in map(json.loads, (run / "ray.jsonl").read_text().splitlines()) if e["event"] == "executed"]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local") / "run"
    finished(bench(out, "--limit", "6"))
    return out


@pytest.fixture(scope="module")
def plain_cluster() -> Iterator[Cluster]:
    """One cluster of the default shape for the tests that only run on it (no hold, no node killed)."""
    if not RAY.exists():
        pytest.skip("ray is not installed: pip install 'edit-fidelity[ray]'")
    with cluster() as c:
        yield c


pytestmark = [*needs_data, pytest.mark.timeout(300)]


@needs_ray
def test_two_node_replay_equals_the_local_run(local_run, plain_cluster, tmp_path):
    finished(bench(tmp_path / "ray", "--limit", "6", ray=plain_cluster.address))
    assert comparable(tmp_path / "ray") == comparable(local_run)
    assert (tmp_path / "ray" / "summary.json").read_bytes() == (local_run / "summary.json").read_bytes()
    log = [json.loads(line) for line in (tmp_path / "ray" / "ray.jsonl").read_text().splitlines()]
    assert log[0]["event"] == "connected" and log[0]["slots"] == 2
    assert {e["node"] for e in executed(tmp_path / "ray")} == {"head", "worker"}  # work ran on both nodes
    # each node said what it did about its sandbox environment, once per worker process
    notes = [e for e in log if e["event"] == "environment"]
    assert {e["node"] for e in notes} == {"head", "worker"} and all("canitedit" in e["note"] for e in notes)
    assert len(notes) == len({e["pid"] for e in notes})
    closed = log[-1]
    assert closed["event"] == "closed" and closed["max_in_flight"] <= 2  # never more than the cluster's slots
    assert closed["executed"] == len(executed(tmp_path / "ray"))


def _kill_worker_when(c: Cluster, proc: subprocess.Popen[bytes], step: Callable[[], str | None]) -> str:
    """Kills the worker node while `step` names a task in flight there (its hold keeps it there); that task."""
    deadline = time.monotonic() + 120
    while (running := step()) is None:
        assert proc.poll() is None and time.monotonic() < deadline, "the run ended before the worker ran anything"
        time.sleep(0.01)
    c.worker.kill()  # the node dies: its raylet and its worker processes
    return running


@needs_ray
def test_a_node_killed_mid_run_loses_nothing(local_run, tmp_path):
    out = tmp_path / "ray"
    with cluster(hold={"worker": 2.0}) as c:  # the worker's executions wait 2 s after starting: killed inside
        proc = bench(out, "--limit", "6", ray=c.address)
        running = _kill_worker_when(c, proc, c.running_on_worker)
        finished(proc)
        assert not c.finished_on_worker(running)
    assert comparable(out) == comparable(local_run)  # every sample, every verdict as on one machine
    records = read_records(out / RESULTS)
    assert not any(r.outcome == "sandbox_error" for r in records)  # retried by Ray, not stored as errors
    ran = [e for e in executed(out) if e["task_id"] == running]
    assert [e["node"] for e in ran] == ["head"]  # run again on the node left


@needs_ray
def test_resume_on_a_restarted_cluster(local_run, plain_cluster, tmp_path):
    out = tmp_path / "ray"
    with cluster() as c:
        proc = bench(out, "--limit", "6", ray=c.address)
        deadline = time.monotonic() + 120
        while not (out / RESULTS).exists() or len((out / RESULTS).read_bytes().splitlines()) < 3:
            assert proc.poll() is None and time.monotonic() < deadline, "the run ended before it could be cut short"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the run dies with the cluster
        proc.wait(30)
    kept = len((out / RESULTS).read_bytes().splitlines())
    assert 3 <= kept < 12
    assert plain_cluster.address != c.address  # another cluster: other ports, other node ids
    finished(bench(out, "--limit", "6", "--resume", ray=plain_cluster.address))
    assert comparable(out) == comparable(local_run)
    assert (out / "summary.json").read_bytes() == (local_run / "summary.json").read_bytes()


def test_bench_run_without_ray_never_imports_it(tmp_path):
    code = (
        "import sys; from benchmark import cli\n"
        f"rc = cli.main(['bench', 'run', '--suite', 'canitedit', '--backend', 'gold', '--limit', '1', '--quiet',"
        f" '--workers', '1', '--data', {str(DATA)!r}, '--out', {str(tmp_path / 'run')!r}])\n"
        "print(rc, sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert out.stdout.strip().splitlines()[-1] == "0 []", out.stdout + out.stderr


@pytest.mark.parametrize("address", ["no-port-here", "nobody", "auto"])
def test_bad_ray_address_is_a_usage_error_before_anything_is_written(tmp_path, address):
    expected = (
        "HOST:PORT" if address == "no-port-here" else "no Ray head answers" if RAY.exists() else "edit-fidelity[ray]"
    )
    nowhere = f"127.0.0.1:{_free_port()}"  # a port nothing listens on
    # auto: the cluster RAY_ADDRESS names (here nowhere), checked as an address given outright
    proc = bench(
        tmp_path / "run",
        "--limit",
        "1",
        ray=nowhere if address == "nobody" else address,
        env={"RAY_ADDRESS": nowhere} if address == "auto" else None,
    )
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2
    lines = out.decode().strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], lines
    assert not (tmp_path / "run").exists()


def _log(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "ray.jsonl").read_text().splitlines()]


@needs_ray
def test_sessions_on_two_nodes_equal_the_local_run(local_run, tmp_path):
    out = tmp_path / "ray"
    with cluster(cpus=2) as c:
        finished(bench(out, "--limit", "6", "--ray-sessions", "2", ray=c.address))
        # a suite that is not an edit (BICS: `editFidelity.locateBug` through open/execute/close) asks on a
        # session just the same
        finished(bench(tmp_path / "bics-ray", "--suite", "bics", "--limit", "4", "--ray-sessions", "1", ray=c.address))
        # as many sessions as CPUs leave none for the executions: one line, before any request
        too_many = bench(tmp_path / "too-many", "--limit", "1", "--ray-sessions", "4", ray=c.address)
        text = too_many.communicate(timeout=180)[0].decode()
        # a key set where `bench run` runs but not on the nodes: the sessions say so before any request
        with ScriptedServer({"m": [Step(content=fenced("x = 1\n"))]}) as model:
            keyless = bench(
                tmp_path / "keyless",
                *("--limit", "1", "--ray-sessions", "1", "--backend", "openai", "--base-url", model.base_url),
                *("--model", "m", "--api-key-env", "EF_TEST_KEY"),
                ray=c.address,
                env={"EF_TEST_KEY": "sk-never-shown"},
            )
            keyless_text = keyless.communicate(timeout=180)[0].decode()
            asked_model = [r for r in model.received if r.path.endswith("/chat/completions")]
    assert comparable(out) == comparable(local_run)
    assert (out / "summary.json").read_bytes() == (local_run / "summary.json").read_bytes()
    finished(bench(tmp_path / "bics-local", "--suite", "bics", "--limit", "4"))
    assert comparable(tmp_path / "bics-ray") == comparable(tmp_path / "bics-local")
    assert len([e for e in _log(tmp_path / "bics-ray") if e["event"] == "asked"]) == len(
        comparable(tmp_path / "bics-local")
    )
    log = _log(out)
    sessions = [e for e in log if e["event"] == "session"]
    assert sorted(e["node"] for e in sessions) == ["head", "worker"]  # spread: one language server per node
    asked = [e for e in log if e["event"] == "asked"]
    assert len(asked) == 12 and {e["node"] for e in asked} == {"head", "worker"}  # every request, on both
    assert next(e for e in log if e["event"] == "reserved")["slots"] == 2  # 4 CPUs less the 2 sessions'
    assert max(e["max_in_flight"] for e in log if e["event"] == "closed") <= 2
    for e in sessions:  # each session's server log came back
        assert (out / f"server-session-{e['session']}.log").exists()
    assert not (out / "server.log").exists()  # no language server ran on this machine
    assert too_many.returncode == 2 and len(text.strip().splitlines()) == 1 and "--ray-sessions 4" in text, text
    errors = [ln for ln in keyless_text.splitlines() if ln.startswith("edit-fidelity")]
    assert keyless.returncode == 1 and len(errors) == 1, keyless_text
    assert "EF_TEST_KEY is not set on this node" in errors[0] and "sk-never-shown" not in keyless_text
    results = tmp_path / "keyless" / RESULTS
    assert not results.exists() or not read_records(results)  # no sample recorded as the model's
    assert len(asked_model) <= 1  # the preflight's one check from here; no sample's request reached the model


@needs_ray
def test_a_session_node_killed_mid_request_loses_nothing(local_run, tmp_path):
    out = tmp_path / "ray"
    with cluster(cpus=2, hold={"worker": 2.0}) as c:  # the worker's requests wait 2 s after starting
        proc = bench(out, "--limit", "6", "--ray-sessions", "2", ray=c.address)
        asking = _kill_worker_when(c, proc, c.asking_on_worker)
        finished(proc)
    assert comparable(out) == comparable(local_run)
    assert not any(r.outcome in ("backend_error", "sandbox_error") for r in read_records(out / RESULTS))
    log = _log(out)
    lost = [e for e in log if e["event"] == "session_lost"]
    assert [e["node"] for e in lost] == ["worker"]  # the session there, lost once
    # the request in flight there was answered again, by the session left
    assert "head" in {e["node"] for e in log if e["event"] == "asked" and e["task_id"] == asking}


def _killer(traces: list[Path], task_id: str, stop: threading.Event, killed: list[int]) -> None:
    """SIGKILLs every Ray worker process that starts executing `task_id` (a worker that dies each time)."""
    while not stop.is_set():
        for trace in traces:
            for e in _events(trace):
                if e["event"] == "start" and e["task_id"] == task_id and e["pid"] not in killed:
                    with suppress(ProcessLookupError):
                        os.kill(e["pid"], signal.SIGKILL)
                    killed.append(e["pid"])
        time.sleep(0.02)


@needs_ray
def test_retries_that_run_out_are_sandbox_errors_and_resume_runs_them(local_run, tmp_path):
    out = tmp_path / "ray"
    expected = [r for r in comparable(local_run) if r["task_id"] in {"1_cipher", "2_cov_corr"}]
    # every execution waits 1 s after its start line: the killer's SIGKILL lands inside it
    with cluster(hold={"head": 1.0, "worker": 1.0}) as c:
        stop, killed = threading.Event(), []
        thread = threading.Thread(target=_killer, args=(list(c.traces.values()), "1_cipher", stop, killed))
        thread.start()
        try:
            # `--ray auto`: the cluster named by RAY_ADDRESS (as `ray start` tells its users)
            proc = bench(out, "--limit", "2", "--keep-errors", ray="auto", env={"RAY_ADDRESS": c.address})
            text = proc.communicate(timeout=240)[0].decode(errors="replace")
        finally:
            stop.set()
            thread.join()
        assert proc.returncode == 1, text[-2000:]  # a run with errors: not a score
        assert len(killed) == TASK_RETRIES + 1  # the first run and each of Ray's retries
        records = {(r.task_id, r.condition): r for r in read_records(out / RESULTS)}
        assert {k for k, r in records.items() if r.outcome == "sandbox_error"} == {
            ("1_cipher", "descriptive"),
            ("1_cipher", "lazy"),
        }
        assert all("judge failed" in (records["1_cipher", c].error or "") for c in ("descriptive", "lazy"))
        assert all(r.outcome == "pass" for (t, _c), r in records.items() if t == "2_cov_corr")
        summary = json.loads((out / "summary.json").read_text())
        assert summary["complete"] is False
        finished(bench(out, "--limit", "2", "--resume", ray=c.address))  # the errors are run again
    assert comparable(out) == expected


@needs_ray
def test_necessity_analysis_runs_on_the_cluster_and_equals_the_local_one(plain_cluster, tmp_path):
    local = tmp_path / "local"
    finished(bench(local, "--limit", "2", "--necessity", "6"))
    finished(bench(tmp_path / "ray", "--limit", "2", "--necessity", "6", ray=plain_cluster.address))
    assert comparable(tmp_path / "ray") == comparable(local)
    analysed = [r for r in comparable(local) if "necessity_status" in r["metrics"]]
    assert analysed  # the analysis ran (and its numbers are in both runs alike)
    runs = [e for e in _log(tmp_path / "ray") if e["event"] == "necessity_run"]
    assert runs and {e["task_id"] for e in runs} <= {r["task_id"] for r in analysed}
