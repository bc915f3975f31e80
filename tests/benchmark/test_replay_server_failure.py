"""A language server that fails costs the samples it failed, never the run: each is an error record
(`server_error`), a dead server is started again, the end-of-run retry runs those samples once more."""

import asyncio
import dataclasses
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmark.run import answer_sources
from benchmark.run.engine import Engine
from benchmark.run.local_sessions import LocalSessions
from benchmark.run.records import RunConfig
from benchmark.run.session import ServerError, ServerSession, ServerUnavailable
from benchmark.run.store import ResultsStore
from benchmark.suites import canitedit
from benchmark.suites.canitedit import suite as canitedit_suite
from sandbox import Sandbox, envs

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")


async def test_a_server_that_exits_at_start_is_a_server_error():
    session = ServerSession([], command=[sys.executable, "-c", "import sys; sys.exit(3)"], start_timeout_s=20)
    with pytest.raises(ServerError, match="exited with (status|return code:) 3"):
        await session.__aenter__()


def _kill_server_after(results: Path, lines: int) -> threading.Thread:
    """SIGKILL this process' `server.lsp` child once `results` holds `lines` records."""

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if results.exists() and results.read_bytes().count(b"\n") >= lines:
                for entry in Path("/proc").iterdir():
                    try:
                        if (
                            entry.name.isdigit()
                            and b"server.lsp" in (entry / "cmdline").read_bytes()
                            and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == os.getpid()
                        ):
                            os.kill(int(entry.name), signal.SIGKILL)
                            return
                    except OSError:
                        continue
            time.sleep(0.01)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


CANITEDIT = pytest.mark.skipif(
    not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox"
)


def _engine(config: RunConfig, problems, store: ResultsStore, box: Sandbox, **kw) -> Engine:
    return Engine(config, canitedit.make(), problems, answer_sources.parse("gold"), store, box, **kw)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@CANITEDIT
def test_a_server_that_dies_mid_run_is_restarted_and_the_run_completes_by_itself(tmp_path):
    """The lost requests are error records of their samples (`server_error`), run again at the end; the
    run itself never stops, and every sample ends with its verdict."""
    problems = canitedit.load(DATA, 3)
    config = RunConfig(suite="canitedit", backend="gold", samples=12, limit=3, conditions=["descriptive", "lazy"])
    box = Sandbox(workers=2)
    try:
        with ResultsStore(tmp_path, config, resume=False) as store:
            engine = _engine(config, problems, store, box, concurrency=2)
            watcher = _kill_server_after(tmp_path / "results.jsonl", 10)
            asyncio.run(engine.run())
            watcher.join(5)
            assert not watcher.is_alive()
            assert isinstance(engine.sessions, LocalSessions) and engine.sessions.restarts == 1
            assert len(store.records) == 72 and all(r.outcome == "pass" for r in store.records)
        written = _lines(tmp_path / "results.jsonl")
        lost = [r for r in written if r["outcome"] == "server_error"]
        assert lost and all(r["error_kind"] == "server_exited" for r in lost)
        assert len(written) == 72 + len(lost)  # each lost sample once more, at the end
    finally:
        box.close()


@CANITEDIT
def test_an_internal_error_and_a_crash_on_one_sample_cost_that_sample_only(tmp_path):
    """A request the server fails (the SystemError of CPython's AST converter, raised in the handler) and a
    request that kills the server: each an error record, the run goes on, the end-of-run retry cures both."""
    problems = canitedit.load(DATA, 3)
    config = RunConfig(suite="canitedit", backend="gold", samples=2, limit=3, conditions=["lazy"])
    faulty = [sys.executable, "-m", "tools.doubles.faulty_server"]
    box = Sandbox(workers=2)
    once = tmp_path / "faults"
    once.mkdir()
    try:
        for mode, task in (("raise", problems[0]), ("exit", problems[1])):
            out = tmp_path / mode
            marker = f"/{task.task_id}-lazy-1".replace("/", "_")[1:]
            os.environ["EDIT_FIDELITY_FAULT"] = f"{mode}:{marker}:{once / mode}"
            try:
                with ResultsStore(out, config, resume=False) as store:
                    engine = _engine(config, problems, store, box, server_command=faulty, concurrency=1)
                    asyncio.run(engine.run())
                    assert sorted(r.outcome for r in store.records) == ["pass"] * 6
            finally:
                del os.environ["EDIT_FIDELITY_FAULT"]
            failed = [r for r in _lines(out / "results.jsonl") if r["outcome"] != "pass"]
            assert [(r["task_id"], r["sample"], r["outcome"]) for r in failed] == [(task.task_id, 1, "server_error")]
            kind = {"raise": "internal", "exit": "server_exited"}[mode]
            assert failed[0]["error_kind"] == kind, failed[0]
            if mode == "raise":
                assert "AST constructor recursion depth mismatch" in failed[0]["error"]
    finally:
        box.close()


def test_a_server_that_never_starts_ends_the_run_in_one_line(tmp_path):
    problems = canitedit.load(DATA, 1)
    config = RunConfig(suite="canitedit", backend="gold", samples=1, limit=1, conditions=["lazy"])
    box = Sandbox(workers=1)
    try:
        with ResultsStore(tmp_path, config, resume=False) as store:
            engine = _engine(config, problems, store, box, server_command=[sys.executable, "-c", "raise SystemExit(3)"])
            with pytest.raises(ServerUnavailable, match="does not start"):
                asyncio.run(engine.run())
            assert store.records == []
    finally:
        box.close()


def test_a_judge_that_raises_costs_its_sample_only_and_resume_runs_it_again(tmp_path):
    problems = canitedit.load(DATA, 2)

    class Flaky(canitedit_suite.Tests):
        broken = True

        async def judge(self, box, task, condition, completion):
            if self.broken and task.task_id == problems[0].task_id:
                raise RuntimeError("judge bug")
            return await super().judge(box, task, condition, completion)

    config = RunConfig(suite="canitedit", backend="gold", samples=1, limit=2, conditions=["lazy"])
    box = Sandbox(workers=2)
    scorer = Flaky()
    suite = dataclasses.replace(canitedit.make(), scorer=scorer)
    try:
        with ResultsStore(tmp_path, config, resume=False) as store:
            asyncio.run(Engine(config, suite, problems, answer_sources.parse("gold"), store, box).run())
            outcomes = {r.task_id: (r.outcome, r.error) for r in store.records}
        assert outcomes[problems[1].task_id] == ("pass", None)
        assert outcomes[problems[0].task_id] == ("sandbox_error", "judge failed: RuntimeError: judge bug")
        scorer.broken = False
        with ResultsStore(tmp_path, config, resume=True) as store:
            assert store.retrying == 1
            asyncio.run(Engine(config, suite, problems, answer_sources.parse("gold"), store, box).run())
            assert sorted(r.outcome for r in store.records) == ["pass", "pass"]
    finally:
        box.close()
