"""The docker level: honest about being unavailable here, and the container it would build is locked down.

No engine runs on these machines, so only its pure parts are tested; with an engine the last test
runs a real program through it.
"""

from __future__ import annotations

import io
import shlex
import tarfile

import pytest

from sandbox import Limits, Sandbox, detect, envs
from sandbox.docker_backend import USER, DockerBackend, build_context, container_config, exec_command

ENGINE = DockerBackend.available()


def test_docker_is_only_chosen_when_an_engine_answers_ping() -> None:
    found = detect(("docker",))
    if ENGINE is None:
        pytest.skip("a docker engine answers here")
    assert found["docker"] and "docker" in found["docker"]
    box = Sandbox(workers=1)
    try:
        assert box.level != "docker" and "docker" in box.skipped
        res = box.run({"p.py": "print(1)"})
        assert res.isolation == box.level and res.isolation != "docker"
    finally:
        box.close()


def test_container_config_is_locked_down() -> None:
    limits = Limits(memory_mb=512, nproc=64, tmp_mb=32)
    cfg = container_config(3, limits, cpus=1.0)
    assert cfg["network_mode"] == "none" and cfg["read_only"] is True
    assert cfg["cap_drop"] == ["ALL"] and "no-new-privileges" in cfg["security_opt"]
    assert cfg["user"] == USER and not cfg["user"].startswith("0")
    assert cfg["pids_limit"] == 64 and cfg["mem_limit"] == cfg["memswap_limit"] == "768m"
    assert cfg["nano_cpus"] == 1_000_000_000
    assert set(cfg["tmpfs"]) == {"/work", "/tmp"} and "size=32m" in cfg["tmpfs"]["/tmp"]
    assert {u["name"] for u in cfg["ulimits"]} >= {"core", "nofile", "fsize"}
    assert cfg["command"] == ["sleep", "infinity"] and cfg["detach"] is True  # reused, not per sample


def test_exec_command_has_rlimits_and_a_hard_timeout() -> None:
    argv = exec_command(["python3", "-E", "-s", "-B", "a b.py"], "/work/r1", 2.5, 256, Limits())
    assert argv[:2] == ["/bin/sh", "-c"]
    line = argv[2]
    assert "ulimit -t 3" in line and f"ulimit -v {256 * 1024}" in line
    assert "timeout -s KILL 2.500" in line and shlex.quote("a b.py") in line and line.startswith("cd /work/r1")


def test_image_context_carries_the_same_requirements_as_the_local_envs() -> None:
    with tarfile.open(fileobj=io.BytesIO(build_context())) as tar:
        files = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}  # type: ignore[union-attr]
    assert set(files) == {"Dockerfile", "requirements-canitedit.txt", "vllm_stub.py", "covdriver.py"}
    assert files["requirements-canitedit.txt"].split() == list(envs.CANITEDIT_REQUIREMENTS)
    docker = files["Dockerfile"]
    for needed in ("nodejs", "g++", "openjdk", "USER 65534", "download.pytorch.org/whl/cpu"):
        assert needed in docker
    assert "class LLM" in files["vllm_stub.py"]


@pytest.mark.skipif(ENGINE is not None, reason=f"needs a docker engine ({ENGINE})")
def test_docker_runs_a_program_for_real() -> None:  # pragma: no cover - no engine on CI machines
    box = Sandbox("docker", workers=1)
    try:
        res = box.run({"p.py": "import socket\nprint('hi')\n"}, timeout_s=30)
        assert res.status == "ok" and res.isolation == "docker" and res.stdout == "hi\n"
    finally:
        box.close()
