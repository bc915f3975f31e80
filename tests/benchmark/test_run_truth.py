"""Runs that tell the truth, through the real CLI (`python -m benchmark.cli`, a subprocess), the real
language server, a real OpenAI-protocol endpoint on 127.0.0.1 and the real sandbox: what would fail
every sample fails the preflight (one line, exit 2, nothing written); a sample that ends in an error of
the machinery is an error, never a failure (summary `errors`, `complete: false`, exit 1); a resume
cannot mix runs; summary.json does not depend on the order of results.jsonl."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from benchmark.run.records import ExcessCode, RunConfig, SampleRecord
from benchmark.run.store import CONFIG, RESULTS, read_records
from sandbox import envs
from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or ROOT.parent / "shared" / "data")
RUNS = sorted((DATA / "canitedit_runs").glob("codellama*.tar.gz"))

pytestmark = pytest.mark.skipif(
    not (DATA / "canitedit" / "canitedit_test.jsonl").exists(), reason=f"no CanItEdit data at {DATA}"
)
needs_env = pytest.mark.skipif(
    not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox"
)


def bench(*argv: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmark.cli", "bench", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def run_args(out: Path, *extra: str, suite: str = "canitedit") -> list[str]:
    return ["run", "--suite", suite, "--out", str(out), "--data", str(DATA), "--workers", "2", *extra]


def one_line(done: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The process failed with `code` and said why in one line, without a traceback."""
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("edit-fidelity bench: ")
    return lines[0]


def _echo() -> Step:
    # a "model" that answers with the code it was given: a verdict (the tests fail), never an error
    return Step(content=lambda req: fenced(user_code(req)))


# ------------------------------------------------------------------ preflight


def test_a_closed_port_fails_the_preflight_and_nothing_is_written(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = bench(
        *run_args(out, "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--limit", "2")
    )
    line = one_line(done)
    assert "http://127.0.0.1:9/v1 does not answer" in line and "--base-url" in line
    assert not out.exists()


def test_an_unset_key_variable_and_a_model_the_endpoint_lacks_fail_the_preflight(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "BENCH_TRUTH_UNSET"}
    with ScriptedServer({"echo": [_echo()]}) as srv:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmark.cli",
                "bench",
                *run_args(
                    tmp_path / "a",
                    "--backend",
                    "openai",
                    "--base-url",
                    srv.base_url,
                    "--model",
                    "echo",
                    "--api-key-env",
                    "BENCH_TRUTH_UNSET",
                    "--limit",
                    "1",
                ),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert "BENCH_TRUTH_UNSET" in one_line(done) and "not set" in done.stderr
        done = bench(
            *run_args(
                tmp_path / "b", "--backend", "openai", "--base-url", srv.base_url, "--model", "other", "--limit", "1"
            )
        )
        assert "serves echo, not --model other" in one_line(done)
        assert srv.requests_for("echo") == [] and srv.requests_for("other") == []  # no sample was asked
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_backend_the_server_rejects_ends_the_run_in_its_own_words(tmp_path: Path) -> None:
    """An embedded model that does not exist fails every sample the same way: the run ends at the server's
    start with the server's reason, not with one error record per sample."""
    out = tmp_path / "run"
    done = bench(*run_args(out, "--backend", "local:nosuch-model", "--limit", "2"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    # the progress line printed at the start, then the reason, once, last
    said = [ln for ln in done.stderr.splitlines() if ln.startswith("edit-fidelity bench: ")]
    assert len(said) == 1 and done.stderr.rstrip().endswith(said[0])
    line = said[0]
    assert "rejects the run's backends" in line and "'nosuch-model' is neither a model name" in line
    assert read_records(out / RESULTS) == []


def test_overedit_before_its_environment_is_prepared_fails_the_preflight(tmp_path: Path) -> None:
    if not (DATA / "overedit").exists():
        pytest.skip("no overedit data")
    done = bench(
        *run_args(tmp_path / "run", "--backend", "gold", "--limit", "2", suite="overedit"),
        env={"EDIT_FIDELITY_SANDBOX_HOME": str(tmp_path / "empty-sandbox-home")},
    )
    line = one_line(done)
    assert "'overedit', which is not prepared" in line and "edit-fidelity sandbox prepare --suite overedit" in line
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(not RUNS, reason="no recorded CanItEdit run")
def test_a_recorded_run_of_another_suite_is_refused(tmp_path: Path) -> None:
    done = bench(
        *run_args(tmp_path / "run", "--backend", f"recorded:{RUNS[0]}", "--limit", "2", suite="codeeditorbench")
    )
    line = one_line(done)
    # a run archive is CanItEdit's format, read by that suite's `load_recorded`: refused before it is read
    assert "a run archive is CanItEdit's format: replay it with --suite canitedit" in line
    assert not (tmp_path / "run").exists()
    # a run of ours of another suite is read, and refused for holding none of this suite's tasks
    other = tmp_path / "other.jsonl"
    record = SampleRecord(
        suite="canitedit",
        task_id="1_cipher",
        task="1_cipher",
        condition="lazy",
        backend="gold",
        sample=0,
        outcome="pass",
        completion="x = 1\n",
    )
    other.write_bytes(msgspec.json.encode(record) + b"\n")
    args = run_args(tmp_path / "run", "--backend", f"recorded:{other}", "--limit", "2", suite="codeeditorbench")
    line = one_line(bench(*args))
    assert "has no completion for any of the" in line and "pass a recorded run of suite codeeditorbench" in line
    assert not (tmp_path / "run").exists()
    # a recorded run that covers only part of what is asked: more samples than it holds for some task
    done = bench(*run_args(tmp_path / "run", "--backend", f"recorded:{RUNS[0]}", "--samples", "21", "--limit", "1"))
    assert "has 20 samples per task" in one_line(done)


def test_docker_level_without_an_engine_fails_before_config_is_written(tmp_path: Path) -> None:
    from sandbox.docker_backend import DockerBackend

    if DockerBackend.available() is None:
        pytest.skip("a docker engine answers here")
    done = bench(
        *run_args(tmp_path / "run", "--backend", "gold", "--limit", "1"), env={"EDIT_FIDELITY_SANDBOX_LEVEL": "docker"}
    )
    assert "sandbox level docker: no docker engine" in one_line(done)
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------ run directories


@needs_env
def test_out_naming_a_file_and_a_damaged_config_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert "is a file, not a run directory" in one_line(
        bench(*run_args(tmp_path / "file", "--backend", "gold", "--limit", "1"))
    )
    out = tmp_path / "run"
    assert bench(*run_args(out, "--backend", "gold", "--limit", "1", "--conditions", "lazy", "--quiet")).returncode == 0
    (out / CONFIG).write_text((out / CONFIG).read_text()[:40])
    assert "config.json is damaged" in one_line(bench("report", str(out)))
    assert "config.json is damaged" in one_line(
        bench(*run_args(out, "--backend", "gold", "--limit", "1", "--conditions", "lazy", "--resume"))
    )
    assert "config.json is damaged" in one_line(bench("compare", str(out), str(out)))


@needs_env
def test_resume_refuses_another_necessity_budget_or_other_tasks(tmp_path: Path) -> None:
    out = tmp_path / "run"
    base = run_args(out, "--backend", "gold", "--limit", "2", "--conditions", "lazy", "--quiet")
    assert bench(*base).returncode == 0
    line = one_line(bench(*base, "--resume", "--necessity", "4"))
    assert "holds a different run" in line and "necessity_runs 0 there, 4 asked" in line
    # another data directory whose first problem has other tests: its verdicts would not be comparable
    other = tmp_path / "data" / "canitedit"
    other.mkdir(parents=True)
    rows = [json.loads(ln) for ln in (DATA / "canitedit" / "canitedit_test.jsonl").read_text().splitlines()]
    rows.sort(key=lambda r: r["id"])
    rows[0]["tests"] += "\nassert True\n"
    (other / "canitedit_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    resumed = [a if a != str(DATA) else str(other.parent) for a in base]
    line = one_line(bench(*resumed, "--resume"))
    assert "tasks_digest" in line
    # the same tasks under another directory name are the same run
    same = tmp_path / "same" / "canitedit"
    same.mkdir(parents=True)
    (same / "canitedit_test.jsonl").write_bytes((DATA / "canitedit" / "canitedit_test.jsonl").read_bytes())
    assert bench(*[a if a != str(DATA) else str(same.parent) for a in base], "--resume").returncode == 0
    assert len(read_records(out / RESULTS)) == 2


# ------------------------------------------------------------------ errors are errors


@needs_env
def test_backend_errors_are_errors_not_failures_and_the_run_says_so(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # the first request is answered, every later one fails (the server retries twice, the run once more)
    with ScriptedServer({"echo": [_echo(), Step(status=500)]}) as srv:
        args = run_args(
            out,
            "--backend",
            "openai",
            "--base-url",
            srv.base_url,
            "--model",
            "echo",
            "--limit",
            "2",
            "--conditions",
            "lazy",
            "--concurrency",
            "1",
        )
        done = bench(*args, env={"EDIT_FIDELITY_PROGRESS_S": "0.2"})
        assert done.returncode == 1, done.stderr[-2000:]
        assert "Traceback" not in done.stderr
        assert "INCOMPLETE" in done.stdout and "backend_error/http" in done.stdout
        assert done.stderr.splitlines()[-1].startswith("edit-fidelity bench: INCOMPLETE")
        assert "--allow-errors" in done.stderr.splitlines()[-1]
        progress = [ln for ln in done.stderr.splitlines() if ln.startswith("replay ")]
        assert progress and progress[-1].startswith("replay 3/3 done, 0 passing") and "1 error(s)" in progress[-1]
        s = json.loads((out / "summary.json").read_text())
        assert (
            s["complete"] is False
            and s["errors"] == {"lazy": 1}
            and s["error_kinds"] == {"lazy": {"backend_error/http": 1}}
        )
        # the score is over the one verdict, not two samples of which one "failed"
        assert s["conditions"]["lazy"] == {"pass@1": 0.0, "excess_code": None, "n_tasks": 1, "n_samples": 1}
        assert s["n_verdicts"] == 1 and "incomplete, left out: 1 ended in an error" in s["scores"]
        outcomes = sorted(r.outcome for r in read_records(out / RESULTS))
        assert outcomes == ["backend_error", "fail"]

        text = bench("compare", str(out))
        assert text.returncode == 0 and "1!" in text.stdout and "INCOMPLETE" in text.stdout
        assert bench("report", str(out), "--format", "html").returncode == 0
        assert "INCOMPLETE" in (out / "report.html").read_text()

        accepted = bench(
            *run_args(tmp_path / "accepted", *args[args.index("--backend") :]), "--allow-errors", "--quiet"
        )
        assert accepted.returncode == 0, accepted.stderr[-2000:]
        assert json.loads((tmp_path / "accepted" / "summary.json").read_text())["complete"] is False

        # the endpoint recovers: --resume runs the failed sample again and the run is complete
        srv.scripts["echo"] = [_echo()]
        again = bench(*args, "--resume", "--quiet")
        assert again.returncode == 0, again.stderr[-2000:]
    s = json.loads((out / "summary.json").read_text())
    assert s["complete"] is True and s["errors"] == {"lazy": 0} and s["conditions"]["lazy"]["n_tasks"] == 2
    assert sorted(r.outcome for r in read_records(out / RESULTS)) == ["fail", "fail"]


@needs_env
def test_outside_a_terminal_a_plain_progress_line_every_few_seconds(tmp_path: Path) -> None:
    done = bench(
        *run_args(tmp_path / "run", "--backend", "gold", "--limit", "2"), env={"EDIT_FIDELITY_PROGRESS_S": "0.2"}
    )
    assert done.returncode == 0, done.stderr[-2000:]
    pattern = re.compile(r"^replay (\d+)/4 done, (\d+) passing \(.*\), (\d+) error\(s\), elapsed \d+:\d\d:\d\d, ETA ")
    lines = [m for ln in done.stderr.splitlines() if (m := pattern.match(ln))]
    # the timer prints while the server starts (well over 0.2 s), and the last line is the end
    assert len(lines) >= 2 and lines[-1].groups() == ("4", "4", "0")
    assert "\x1b[" not in done.stderr  # no terminal control codes in a log


# ------------------------------------------------------------------ summaries that cannot drift


def test_summary_bytes_do_not_depend_on_the_order_of_results(tmp_path: Path) -> None:
    rng = random.Random(7)
    config = RunConfig(
        suite="canitedit",
        backend="recorded:x",
        samples=20,
        limit=None,
        conditions=["descriptive", "lazy"],
        data_dir=str(DATA),
        planned=2 * 10 * 20,
    )
    records = []
    for t in range(10):
        for cond in ("descriptive", "lazy"):
            for s in range(20):
                passed = rng.random() < 0.47
                records.append(
                    SampleRecord(
                        suite="canitedit",
                        task_id=f"{t + 1}_task",
                        task="t",
                        condition=cond,
                        backend="recorded:x",
                        sample=s,
                        outcome="pass" if passed else "fail",
                        scores=ExcessCode(excess_code=rng.random() / 3, excess_code_strict=rng.random() / 3)
                        if passed
                        else None,
                        excess_lev=rng.random() / 7 if passed else None,
                        added_cc=rng.choice([0.0, 1.0, -1.0, 0.5]) if passed else None,
                        distance=rng.random(),
                    )
                )

    def write(run: Path, recs: list[SampleRecord]) -> bytes:
        run.mkdir()
        (run / CONFIG).write_bytes(msgspec.json.encode(config))
        (run / RESULTS).write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in recs))
        done = bench("report", str(run), "--format", "json")
        assert done.returncode == 0, done.stderr
        return (run / "summary.json").read_bytes()

    first = write(tmp_path / "a", records)
    for i in range(3):
        rng.shuffle(records)
        assert write(tmp_path / f"shuffled{i}", records) == first
    s = json.loads(first)
    assert s["complete"] is True and s["missing"] == 0 and s["errors"] == {"descriptive": 0, "lazy": 0}
    # a run cut short (one planned sample never ran): its scores say they are incomplete
    write(tmp_path / "cut", records[1:])
    text = bench("report", str(tmp_path / "cut"))
    assert (
        text.returncode == 0
        and "INCOMPLETE: every score above is over the 399 samples with a verdict; incomplete, left out: 1 not run yet"
        in text.stdout
    )
    assert json.loads((tmp_path / "cut" / "summary.json").read_text())["complete"] is False
    # a pass whose coverage run failed: pass@1 counts it, ExcessCode lacks it, and the summary says so
    hurt = next(r for r in records if r.passed)
    hurt.error, hurt.scores = "coverage run: timeout", None
    s = json.loads(write(tmp_path / "partial", records))
    assert s["complete"] is False and s["partial"] == {hurt.condition: 1} and "coverage" in s["scores"]
