"""The docker level without an engine: never chosen, a clear line when asked for by name, and the
container and image it would use are locked down and built from the same sources as the local
levels. The same code against a real engine: tests/sandbox/test_docker_engine.py (scripts/ci-docker)."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from sandbox import IsolationUnavailable, Limits, Sandbox, detect, docker_image, envs
from sandbox.docker_backend import KEEPALIVE, KILL_MARGIN_S, USER, exec_command, host_config

NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/edit-fidelity-test.sock"}
CLI = [sys.executable, "-m", "sandbox"]


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], env={**os.environ, **env}, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_docker_is_not_chosen_without_an_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE["DOCKER_HOST"])
    monkeypatch.delenv("EDIT_FIDELITY_SANDBOX_LEVEL", raising=False)
    found = detect(("docker",))
    assert found["docker"] and found["docker"].startswith("no docker engine answers")
    with Sandbox(workers=1) as box:
        assert box.level != "docker" and "docker" in box.skipped
        res = box.run({"p.py": "print(1)"})
        assert res.status == "ok" and res.isolation == box.level


def test_docker_asked_for_without_an_engine_raises_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE["DOCKER_HOST"])
    with pytest.raises(IsolationUnavailable, match="docker level asked for but not usable: no docker engine"):
        Sandbox("docker", workers=1)


def test_cli_docker_level_without_an_engine_is_one_line_and_exit_2(tmp_path: Path) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("print(1)\n")
    done = _cli(["run", str(prog)], {**NO_ENGINE, "EDIT_FIDELITY_SANDBOX_LEVEL": "docker"}, tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "docker level asked for but not usable" in lines[0], done.stderr


def test_cli_missing_program_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _cli(["run", "MISSING.py"], {}, tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == "edit-fidelity sandbox: cannot read MISSING.py: No such file or directory"


def test_cli_prepare_docker_without_an_engine_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _cli(["prepare", "--docker"], NO_ENGINE, tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "no docker engine answers" in done.stderr


def test_doctor_says_in_one_line_why_docker_was_not_used(tmp_path: Path) -> None:
    done = _cli(["doctor"], NO_ENGINE, tmp_path)
    why = [ln for ln in done.stdout.splitlines() if ln.startswith("docker not used: ")]
    assert len(why) == 1 and "no docker engine answers" in why[0], done.stdout


def test_container_is_locked_down() -> None:
    limits = Limits(memory_mb=8192, nproc=64, tmp_mb=32, work_mb=100)
    cfg = host_config(limits, cpus=1.0)
    assert cfg["network_mode"] == "none" and cfg["read_only"] is True and cfg["auto_remove"] is True
    assert cfg["cap_drop"] == ["ALL"] and "no-new-privileges" in cfg["security_opt"]
    assert cfg["pids_limit"] == 64 and cfg["mem_limit"] == cfg["memswap_limit"] == "8448m"
    assert host_config(Limits(memory_mb=512))["mem_limit"] == "4352m"  # runs may ask for more than the default
    assert cfg["nano_cpus"] == 1_000_000_000 and cfg["init"] is True
    assert set(cfg["tmpfs"]) == {"/work", "/tmp"} and "size=32m" in cfg["tmpfs"]["/tmp"]
    assert "size=100m" in cfg["tmpfs"]["/work"] and "mode=1777" in cfg["tmpfs"]["/work"]
    assert {u["Name"] for u in cfg["ulimits"]} >= {"core", "nofile", "fsize"}
    # Programs run as 65534; the keep-alive is root's (so their kill -9 -1 cannot reach it) and
    # reads the owner's stdin (so it ends with the owner).
    assert USER == "65534:65534" and "read" in KEEPALIVE[-1]


def test_exec_command_has_rlimits_and_a_hard_timeout() -> None:
    argv = exec_command(["python3", "-E", "-s", "-B", "a b.py"], "/work/r1", 2.5, 256, Limits())
    assert argv[:2] == ["/bin/sh", "-c"]
    line = argv[2]
    # RLIMIT_CPU: soft the budget rounded up, hard a second later; the in-container kill comes
    # KILL_MARGIN_S after the ceiling (5 x 2.5 s), which the host enforces itself.
    assert "ulimit -t 4 && ulimit -S -t 3" in line and f"ulimit -v {256 * 1024}" in line
    assert f"timeout -s KILL {12.5 + KILL_MARGIN_S:.3f}" in line and shlex.quote("a b.py") in line
    assert line.startswith("cd /work/r1")
    assert line.endswith("< /dev/null")
    # The first exec of a run also unpacks its files (the tar on the exec's stdin); the program's
    # stdin is then a file, never the exec's stream.
    first = exec_command(["python3", "p.py"], "/work/r1", 2.5, 0, Limits(), setup=True, stdin_file="/work/r1.in")[2]
    assert first.startswith("{ mkdir -m 700 /work/r1 && tar -x -o -m -C /work -f - ; } || ")
    assert first.index("tar -x") < first.index("ulimit -t") < first.index("timeout -s KILL")
    assert first.endswith("p.py < /work/r1.in") and "ulimit -v" not in first


def test_build_context_is_generated_from_the_local_sources(tmp_path: Path) -> None:
    wheel = tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
    wheel.write_bytes(b"not really a wheel")
    (tmp_path / "unrelated-1.0-py3-none-any.whl").write_bytes(b"x")
    wheels = docker_image.wheels_for(("canitedit",), [tmp_path])
    assert wheels == [wheel]  # only the suites' projects travel into the context
    ca = tmp_path / "ca.crt"
    ca.write_text("CERT")
    buf = io.BytesIO()
    docker_image.write_context(buf, ("canitedit",), wheels, ca)
    with tarfile.open(fileobj=io.BytesIO(buf.getvalue())) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
    assert set(files) == {
        "Dockerfile",
        "build_envs.py",
        "suites.json",
        "covdriver.py",
        "host-ca.crt",
        f"wheels/{wheel.name}",
    }
    spec = json.loads(files["suites.json"])
    assert spec["suites"]["canitedit"]["requirements"] == list(envs.CANITEDIT_REQUIREMENTS)
    assert "class LLM" in spec["suites"]["canitedit"]["stub_sources"]["vllm"]
    assert set(spec["suites"]) == {"base", "canitedit"}
    assert files["covdriver.py"] == (Path(envs.__file__).parent / "covdriver.py").read_bytes()
    dockerfile = files["Dockerfile"].decode()
    for needed in ("ARG BASE_IMAGE", "nodejs", "g++", "openjdk", "python3-venv", "host-ca.crt"):
        assert needed in dockerfile


def test_digests_follow_their_inputs(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("CERT")
    one = docker_image.context_digest(("canitedit",), "local/bookworm:min", "https://pypi.org/simple", [], ca)
    assert one == docker_image.context_digest(("canitedit",), "local/bookworm:min", "https://pypi.org/simple", [], ca)
    assert one != docker_image.context_digest(("canitedit",), "debian:bookworm-slim", "https://pypi.org/simple", [], ca)
    ca.write_text("OTHER CERT")
    assert one != docker_image.context_digest(("canitedit",), "local/bookworm:min", "https://pypi.org/simple", [], ca)
    # The code digest (what the backend checks) ignores build inputs but follows the suites.
    assert docker_image.code_digest(("canitedit",)) != docker_image.code_digest(("overedit",))
    assert docker_image.code_digest(("canitedit",)) == docker_image.code_digest(("canitedit",))
