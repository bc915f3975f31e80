"""The docker level against a real engine: chosen only with its image, every hostile program
contained, containers gone on close and when the owner is killed, and the CanItEdit gold check.

Needs an engine and the image: `scripts/ci-docker` (run by `make test`) starts a private dockerd,
builds the image with `sandbox prepare --docker` and runs this file with EDIT_FIDELITY_DOCKER_HOST
set. Without it every test here skips, saying so.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_sandbox_canitedit import MEMORY_MB, _problems, gold_check
from test_sandbox_cpu_time import Watch, _marker, _starve, check_starved_twice
from test_sandbox_hostile import (  # noqa: F401 - `host` is a fixture
    KINDS,
    OUTPUT_LIMIT,
    SOURCES,
    _render,
    _timeout,
    _wall_factor,
    check_contained,
    host,
)
from test_sandbox_hostile import MEMORY_MB as HOSTILE_MB

from sandbox import Limits, Sandbox
from sandbox.docker_backend import LABEL, OWNER_LABEL, USER, DockerBackend
from sandbox.process import uid_processes

ENGINE = os.environ.get("EDIT_FIDELITY_DOCKER_HOST", "")
pytestmark = pytest.mark.skipif(
    not ENGINE,
    reason="no docker engine given: scripts/ci-docker (run by `make test`) "
    "starts one and sets EDIT_FIDELITY_DOCKER_HOST",
)
ABSENT_IMAGE = "edit-fidelity-sandbox:never-built"


@pytest.fixture(scope="module", autouse=True)
def engine() -> Iterator[None]:
    """DOCKER_HOST for this module only (any other process would pick the private engine up)."""
    old = os.environ.get("DOCKER_HOST")
    os.environ["DOCKER_HOST"] = ENGINE
    os.environ.pop("EDIT_FIDELITY_SANDBOX_LEVEL", None)
    yield
    if old is None:
        os.environ.pop("DOCKER_HOST", None)
    else:
        os.environ["DOCKER_HOST"] = old


@pytest.fixture(scope="module")
def docker_box() -> Iterator[Sandbox]:
    reason = DockerBackend.available()
    assert reason is None, f"the image must be built before this runs (scripts/ci-docker does): {reason}"
    with Sandbox(workers=2) as box:  # chosen, not forced: the engine answers and the image is there
        assert box.level == "docker" and box.skipped == {}
        yield box


def _containers(owner: str | None = None) -> list[str]:
    import docker

    client = docker.from_env()
    try:
        found = client.containers.list(all=True, filters={"label": LABEL})
        return [c.name for c in found if owner is None or c.labels.get(OWNER_LABEL, "").split(":")[1] == owner]
    finally:
        client.close()


def test_engine_without_the_image_falls_back_and_doctor_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDIT_FIDELITY_DOCKER_IMAGE", ABSENT_IMAGE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with Sandbox(workers=1) as box:
            assert box.level == "bwrap", box.skipped
            assert f"engine answers but image {ABSENT_IMAGE} is not built" in box.skipped["docker"]
            res = box.run({"p.py": "print(6 * 7)"})
            assert res.status == "ok" and res.stdout == "42\n" and res.isolation == "bwrap"
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", "doctor"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "EDIT_FIDELITY_DOCKER_IMAGE": ABSENT_IMAGE},
    )
    why = [ln for ln in done.stdout.splitlines() if ln.startswith("docker not used: ")]
    assert done.stdout.startswith("isolation chosen: bwrap")
    assert why == [
        f"docker not used: engine answers but image {ABSENT_IMAGE} is not built: "
        "run `edit-fidelity sandbox prepare --docker`"
    ], done.stdout


def test_prepare_again_with_the_same_inputs_skips_the_build() -> None:
    base = os.environ.get("EDIT_FIDELITY_DOCKER_BASE")
    if not base:
        pytest.skip("the base image the image was built from is not given (EDIT_FIDELITY_DOCKER_BASE)")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", "prepare", "--docker", "--base-image", base, "--build-network", "host"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "up to date" in done.stdout, (done.stdout, done.stderr)
    assert time.monotonic() - started < 120


def test_every_language_runs_with_stdin_and_coverage(docker_box: Sandbox) -> None:
    res = docker_box.run(
        {"p.py": "import os\nprint(input()[::-1], os.getuid(), os.getcwd().startswith('/work/'))"}, stdin="olleh\n"
    )
    assert (res.status, res.stdout, res.isolation) == ("ok", "hello 65534 True\n", "docker")
    res = docker_box.run({"p.py": "def f(x):\n    if x:\n        return 1\n    return 2\nf(1)\n"}, coverage=True)
    assert res.status == "ok" and res.coverage is not None
    assert res.coverage["p.py"].missing == [4] and res.coverage["p.py"].executed == [1, 2, 3, 5]
    for entry, source in (
        ("m.js", "console.log('js')"),
        ("m.cpp", '#include <cstdio>\nint main(){puts("cpp");}'),
        ("Main.java", 'public class Main{public static void main(String[] a){System.out.println("java");}}'),
    ):
        res = docker_box.run({entry: source}, timeout_s=30)
        assert res.status == "ok" and res.stdout.strip() in ("js", "cpp", "java"), (res.status, res.stderr, res.error)
    big = "x" * (3 << 20)  # stdin larger than any pipe buffer, echoed back while it is still being sent
    res = docker_box.run({"p.py": "import sys\nsys.stdout.write(sys.stdin.read())"}, stdin=big, output_limit=4 << 20)
    assert res.status == "ok" and res.stdout == big


@pytest.mark.parametrize("language", list(SOURCES))
@pytest.mark.parametrize("kind", KINDS)
def test_hostile_program_is_contained_by_docker(docker_box: Sandbox, host, kind: str, language: str) -> None:  # noqa: F811
    entry, source = _render(kind, language, host)
    res = docker_box.run(
        {entry: source},
        timeout_s=_timeout(kind),
        wall_factor=_wall_factor(kind),
        memory_mb=HOSTILE_MB,
        output_limit=OUTPUT_LIMIT,
    )
    assert res.isolation == "docker" and res.isolated
    check_contained(kind, res, host, docker_box, lambda box: box.backend.leftovers())
    again = docker_box.run({"ok.py": "print('next run works')"})  # the keep-alive survived the sweep
    assert again.status == "ok" and again.stdout == "next run works\n", (again.status, again.error)


def test_containers_are_removed_on_close_and_when_the_owner_is_killed(docker_box: Sandbox) -> None:
    with Sandbox(workers=2) as box:
        list(ThreadPoolExecutor(2).map(lambda _: box.run({"p.py": "print(1)"}), range(4)))
        assert len(_containers(str(os.getpid()))) >= 3  # docker_box's and these
        mine = set(_containers(str(os.getpid())))
    left = set(_containers(str(os.getpid())))
    assert left < mine and len(left) == len(docker_box.backend._boxes)
    # A CLI run killed with SIGKILL mid-program: its container goes with it (the keep-alive's stdin closes).
    prog = Path(os.environ.get("TMPDIR", "/tmp")) / f"ef-docker-sleep-{os.getpid()}.py"
    prog.write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    try:
        cli = subprocess.Popen(
            [sys.executable, "-m", "sandbox", "run", str(prog), "--timeout", "60"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while not _containers(str(cli.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _containers(str(cli.pid)), "the CLI never started a container"
        time.sleep(1.0)  # the program is running inside it by now
        cli.send_signal(signal.SIGKILL)
        cli.wait()
        while _containers(str(cli.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _containers(str(cli.pid)) == []
    finally:
        prog.unlink(missing_ok=True)


def test_output_cap_closes_the_stream_and_a_silent_program_hits_the_clock(docker_box: Sandbox) -> None:
    started = time.monotonic()
    res = docker_box.run({"p.py": "import sys\nwhile True:\n    sys.stdout.write('y' * 1000)\n"}, output_limit=10_000)
    assert res.status == "output_limit" and len(res.stdout) <= 10_000 and time.monotonic() - started < 10
    res = docker_box.run({"p.py": "import os, time\nos.close(1)\ntime.sleep(60)"}, timeout_s=1.0)
    assert res.status == "timeout" and res.starved_runs == 0 and res.wall_limit_s <= res.wall_s < res.wall_limit_s + 5


def test_cpu_budget_and_wall_clock_ceiling_at_the_docker_level(docker_box: Sandbox) -> None:
    """As at the local levels: the budget is CPU time (the container's cgroup), the ceiling stops a
    sleeper, whose scheduler figures this host reads from /proc before the kill."""
    res = docker_box.run({"spin.py": "while True:\n    pass\n"}, timeout_s=1, wall_factor=30)
    assert res.status == "timeout" and res.starved_runs == 0 and res.cpu_limit_s == 1.0, res
    assert 0.8 <= res.cpu_s < 1.5, res.cpu_s  # RLIMIT_CPU is checked on tick-sampled time
    code = "import os\nfor _ in range(2):\n    os.fork()\nwhile True:\n    pass\n"
    res = docker_box.run({"fork.py": code}, timeout_s=1, wall_factor=30)
    assert res.status == "timeout" and 0.95 <= res.cpu_s < 4.0, res  # one budget for all four
    res = docker_box.run({"nap.py": "import time\ntime.sleep(1000)\n"}, timeout_s=1)
    assert res.status == "timeout" and res.starved_runs == 0 and res.error == "", res
    assert res.wall_s >= res.wall_limit_s == 5.0 and res.cpu_s < 1.0
    assert res.wait_s is not None and res.wait_s < res.wall_s / 4


def test_a_program_starved_twice_is_not_judged_at_the_docker_level(docker_box: Sandbox) -> None:
    if os.geteuid() != 0:
        pytest.skip("pinning the container's processes and raising hog priorities needs root")
    marker = _marker()
    with Watch(lambda: uid_processes(int(USER.split(":")[0])), marker) as watch:
        res = _starve(docker_box, marker, watch, until_first_over=False)
    check_starved_twice(res)
    assert res.isolation == "docker"


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_canitedit_gold_check_at_the_docker_level() -> None:
    """As tests/sandbox/test_sandbox_canitedit.py does at bwrap: every gold `after + tests` passes
    with full coverage and every `before + tests` fails, here inside the image's suite environment."""
    problems = _problems()
    with Sandbox("docker", workers=2, limits=Limits(memory_mb=MEMORY_MB)) as box:
        assert len(gold_check(box, problems, "docker")) == 3 * len(problems) == 315
