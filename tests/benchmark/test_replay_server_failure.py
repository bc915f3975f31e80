"""A language server that fails is a run error (nothing stored for the samples it did not answer), not
thousands of error records: the run stops with a clear message and --resume does the rest."""

import asyncio
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmark import backends
from benchmark.engine import Engine
from benchmark.records import RunConfig
from benchmark.session import ServerError, ServerSession
from benchmark.store import ResultsStore
from benchmark.suites import canitedit
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


@pytest.mark.skipif(not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox")
@pytest.mark.skipif(not (DATA / "canitedit").exists(), reason=f"no CanItEdit data at {DATA}")
def test_a_server_that_dies_mid_run_stops_the_run_and_resume_completes_it(tmp_path):
    problems = canitedit.load(DATA, 3)
    config = RunConfig(suite="canitedit", backend="gold", samples=12, limit=3, conditions=["descriptive", "lazy"])
    box = Sandbox(workers=2)
    try:
        with ResultsStore(tmp_path, config, resume=False) as store:
            engine = Engine(config, canitedit.CanItEdit(), problems, backends.parse("gold"), store, box, concurrency=2)
            watcher = _kill_server_after(tmp_path / "results.jsonl", 10)
            with pytest.raises(ServerError, match="exited with (status|return code:) -9"):
                asyncio.run(engine.run())
            watcher.join(5)
            kept = len(store.records)
        assert 0 < kept < 72 and all(r.outcome == "pass" for r in store.records)
        with ResultsStore(tmp_path, config, resume=True) as store:
            asyncio.run(
                Engine(config, canitedit.CanItEdit(), problems, backends.parse("gold"), store, box, concurrency=8).run()
            )
            assert len(store.records) == 72 and all(r.outcome == "pass" for r in store.records)
    finally:
        box.close()


def test_a_judge_that_raises_costs_its_sample_only_and_resume_runs_it_again(tmp_path):
    problems = canitedit.load(DATA, 2)

    class Flaky(canitedit.CanItEdit):
        broken = True

        async def judge(self, box, task, condition, completion):
            if self.broken and task.task_id == problems[0].task_id:
                raise RuntimeError("judge bug")
            return await super().judge(box, task, condition, completion)

    config = RunConfig(suite="canitedit", backend="gold", samples=1, limit=2, conditions=["lazy"])
    box = Sandbox(workers=2)
    suite = Flaky()
    try:
        with ResultsStore(tmp_path, config, resume=False) as store:
            asyncio.run(Engine(config, suite, problems, backends.parse("gold"), store, box).run())
            outcomes = {r.task_id: (r.outcome, r.error) for r in store.records}
        assert outcomes[problems[1].task_id] == ("pass", None)
        assert outcomes[problems[0].task_id] == ("sandbox_error", "judge failed: RuntimeError: judge bug")
        suite.broken = False
        with ResultsStore(tmp_path, config, resume=True) as store:
            assert store.retrying == 1
            asyncio.run(Engine(config, suite, problems, backends.parse("gold"), store, box).run())
            assert sorted(r.outcome for r in store.records) == ["pass", "pass"]
    finally:
        box.close()
