"""The sandbox API: statuses, languages with stdin, coverage, errors, threads, asyncio, the CLI."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

import sandbox
from sandbox import ExecResult, IsolationUnavailable, Sandbox, envs
from sandbox.cli import register

SUM = {  # judge-style: read two integers from stdin, print their sum
    "python": ("sum.py", "a, b = map(int, input().split())\nprint(a + b)\n"),
    "javascript": (
        "sum.js",
        "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
    ),
    "cpp": (
        "sum.cpp",
        "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n",
    ),
    "java": (
        "Main.java",
        "import java.util.Scanner;\npublic class Main { public static void main(String[] x) {"
        " Scanner s = new Scanner(System.in);"
        " System.out.println(s.nextLong() + s.nextLong()); } }\n",
    ),
}


@pytest.mark.parametrize("language", list(SUM))
def test_each_language_reads_stdin_and_reports_its_run(bwrap_box: Sandbox, language: str) -> None:
    entry, source = SUM[language]
    res = bwrap_box.run({entry: source}, stdin="40 2\n", timeout_s=20)
    assert res.status == "ok", res
    assert res.stdout.strip() == "42" and res.exit_code == 0 and res.signal is None
    assert res.language == language and res.phase == "run" and res.isolation == "bwrap" and res.isolated
    assert 0 < res.wall_s < 20 and res.cpu_s > 0 and res.peak_memory_mb > 0


@pytest.mark.parametrize(
    ("entry", "source"),
    [
        ("bad.cpp", "int main() { return undefined_name; }\n"),
        ("Main.java", 'public class Main { void f() { int x = "s"; } }\n'),
    ],
)
def test_compile_errors_are_failures_of_the_compile_phase(bwrap_box: Sandbox, entry: str, source: str) -> None:
    res = bwrap_box.run({entry: source}, timeout_s=20)
    assert res.status == "failed" and res.phase == "compile" and res.exit_code != 0
    assert "error" in res.stderr


def test_exit_code_and_exception_are_failed(bwrap_box: Sandbox) -> None:
    res = bwrap_box.run({"x.py": "import sys\nprint('before')\nsys.exit(3)\n"})
    assert (res.status, res.exit_code, res.stdout) == ("failed", 3, "before\n")
    res = bwrap_box.run({"x.py": "raise ValueError('boom')\n"})
    assert res.status == "failed" and res.exit_code == 1 and "ValueError: boom" in res.stderr


def test_a_sleeping_program_stops_at_the_wall_clock_ceiling(bwrap_box: Sandbox) -> None:
    # timeout_s is CPU time; sleeping uses none, so the ceiling (5 x timeout_s) stops it.
    res = bwrap_box.run({"s.py": "import time\ntime.sleep(30)\n"}, timeout_s=0.5)
    assert res.status == "timeout" and res.signal == 9 and res.starved_runs == 0
    assert res.cpu_limit_s == 0.5 and res.wall_limit_s == 2.5 and 2.5 <= res.wall_s < 12.5 and res.cpu_s < 0.5


def test_multi_file_python_imports_its_own_module(bwrap_box: Sandbox) -> None:
    res = bwrap_box.run(
        {
            "main.py": "from pkg.helper import twice\nprint(twice(21))\n",
            "pkg/__init__.py": "",
            "pkg/helper.py": "def twice(x):\n    return 2 * x\n",
        },
        "main.py",
    )
    assert res.status == "ok" and res.stdout == "42\n", res


def test_host_environment_does_not_leak(bwrap_box: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EF_HOST_TOKEN", "do-not-leak")
    res = bwrap_box.run({"e.py": "import os\nprint(sorted(os.environ))\nprint(os.environ.get('EF_HOST_TOKEN'))"})
    assert res.status == "ok" and "do-not-leak" not in res.stdout and "EF_HOST_TOKEN" not in res.stdout


COVERED = """import abc


class Base(abc.ABC):
    @abc.abstractmethod
    def area(self):
        ...


class Square(Base):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side ** 2

    def unused(self):
        return "never called"

    def debug(self):  # pragma: no cover
        return "excluded"


assert Square(3).area() == 9
"""


def test_coverage_reports_missing_lines_with_canitedit_exclusions(bwrap_box: Sandbox) -> None:
    res = bwrap_box.run({"prog.py": COVERED}, coverage=True)
    assert res.status == "ok", res.stderr
    assert res.coverage is not None and set(res.coverage) == {"prog.py"}
    cov = res.coverage["prog.py"]
    lines = COVERED.splitlines()
    assert [lines[n - 1].strip() for n in cov.missing] == ['return "never called"']
    assert lines[cov.missing[0] - 2].strip() == "def unused(self):" and cov.missing[0] - 1 in cov.executed
    excluded_text = {lines[n - 1].strip() for n in cov.excluded}
    assert {"@abc.abstractmethod", "def debug(self):  # pragma: no cover"} <= excluded_text
    assert 1 in cov.executed and not set(cov.executed) & set(cov.missing)


def test_coverage_keeps_exit_status_and_output(bwrap_box: Sandbox) -> None:
    res = bwrap_box.run({"p.py": "print('hi')\nimport sys\nsys.exit(2)\nprint('never')\n"}, coverage=True)
    assert (res.status, res.exit_code, res.stdout) == ("failed", 2, "hi\n")
    assert res.coverage is not None and res.coverage["p.py"].missing == [4]
    res = bwrap_box.run({"p.py": "def f():\n    raise KeyError('k')\nf()\n"}, coverage=True)
    assert res.status == "failed" and res.exit_code == 1 and "KeyError: 'k'" in res.stderr
    res = bwrap_box.run({"p.py": "import time\ntime.sleep(5)\n"}, coverage=True, timeout_s=0.5)
    assert res.status == "timeout" and res.coverage is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"files": {"../escape.py": "print(1)"}}, "relative path"),
        ({"files": {"/etc/x.py": "print(1)"}}, "relative path"),
        ({"files": {}}, "no files"),
        ({"files": {"a.py": "", "b.py": ""}}, "entry"),
        ({"files": {"a.py": ""}, "language": "cobol"}, "unknown language"),
        ({"files": {"a.txt": ""}}, "cannot tell the language"),
        ({"files": {"a.py": ""}, "suite": "no-such-suite"}, "unknown suite"),
        ({"files": {"a.py": ""}, "timeout_s": 0}, "positive"),
        ({"files": {"a.js": "1"}, "coverage": True}, "only available for Python"),
    ],
)
def test_bad_requests_are_error_results_not_exceptions(bwrap_box: Sandbox, kwargs: dict, message: str) -> None:
    res = bwrap_box.run(**kwargs)
    assert res.status == "error" and message in res.error, res
    assert res.exit_code is None


def test_result_round_trips_through_json(bwrap_box: Sandbox) -> None:
    res = bwrap_box.run({"p.py": "print('x')\n"}, coverage=True)
    again = msgspec.json.decode(res.to_json(), type=ExecResult)
    assert again == res and again.coverage is not None
    assert json.loads(res.to_json())["status"] == "ok"


def test_threads_share_the_pool_safely(bwrap_box: Sandbox) -> None:
    results: dict[int, ExecResult] = {}

    def work(i: int) -> None:
        results[i] = bwrap_box.run({"t.py": f"import os\nprint({i}, os.getuid())\n"})

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == list(range(8))
    for i, res in results.items():
        n, uid = res.stdout.split()
        assert res.status == "ok" and int(n) == i and int(uid) in bwrap_box.uids


async def test_async_runs_concurrently_from_many_tasks(bwrap_box: Sandbox) -> None:
    code = "import time\nstart = time.time()\ntime.sleep(2)\nprint({i}, start, time.time())"
    results = await asyncio.gather(*(bwrap_box.arun({"a.py": code.format(i=i)}) for i in range(4)))
    assert all(r.status == "ok" for r in results), results
    lines = [r.stdout.split() for r in results]
    assert [int(n) for n, *_ in lines] == [0, 1, 2, 3]
    # two slots ran in parallel: some two programs slept at the same time (the clock is the host's),
    # which a serial run never shows however loaded the machine is
    spans = [(float(a), float(b)) for _, a, b in lines]
    assert any(a[0] < b[1] and b[0] < a[1] for a, b in itertools.combinations(spans, 2)), spans


def test_module_level_run_uses_the_best_level() -> None:
    res = sandbox.run({"m.py": "print('default')"}, timeout_s=5)
    assert res.status == "ok" and res.stdout == "default\n"
    assert res.isolation in ("docker", "bwrap") and res.isolated


def test_require_isolation_refuses_the_none_level() -> None:
    with pytest.raises(IsolationUnavailable):
        Sandbox("none", workers=1, require_isolation=True)
    with pytest.warns(RuntimeWarning, match="WITHOUT isolation"):
        box = Sandbox("none", workers=1)
    res = box.run({"n.py": "print(1)"})
    box.close()
    assert res.isolation == "none" and res.isolated is False and res.status == "ok"


def test_uids_are_leased_exclusively_across_sandboxes(bwrap_box: Sandbox) -> None:
    other = Sandbox("bwrap", workers=2)
    try:
        assert not set(other.uids) & set(bwrap_box.uids)
    finally:
        other.close()


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="edit-fidelity")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.handler(args)


def test_cli_run_prints_the_result_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prog, stdin = tmp_path / "up.py", tmp_path / "in.txt"
    prog.write_text("print(input().upper())\n")
    stdin.write_text("shout\n")
    code = _cli(["sandbox", "run", str(prog), "--stdin", str(stdin), "--timeout", "5", "--level", "bwrap"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "ok" and out["stdout"] == "SHOUT\n" and out["isolation"] == "bwrap"
    prog.write_text("while True: pass\n")
    code = _cli(["sandbox", "run", str(prog), "--timeout", "0.5", "--level", "bwrap"])
    assert code == 1 and json.loads(capsys.readouterr().out)["status"] == "timeout"


def test_cli_doctor_reports_levels_and_languages(capsys: pytest.CaptureFixture[str]) -> None:
    code = _cli(["sandbox", "doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    levels = {r["level"]: r for r in report["levels"]}
    assert code == 0 and report["chosen"] in ("docker", "bwrap")
    assert levels["bwrap"]["works"] and levels["none"]["works"]
    if not levels["docker"]["works"]:
        assert "docker" in levels["docker"]["reason"]
    assert {r["language"]: r["works"] for r in report["languages"]} == {
        "python": True,
        "javascript": True,
        "cpp": True,
        "java": True,
    }
    assert os.path.isabs(report["base_python"])


def test_util_linux_fallback_when_the_reaper_cannot_be_built(
    monkeypatch: pytest.MonkeyPatch, leftovers: Callable[[Sandbox], list[str]]
) -> None:
    monkeypatch.setattr(envs, "reaper_path", lambda: None)
    box = Sandbox("bwrap", workers=1)
    try:
        res = box.run({"u.py": "import os, resource\nprint(os.getuid(), resource.getrlimit(resource.RLIMIT_NPROC))"})
        uid, limits = res.stdout.split(" ", 1)
        assert res.status == "ok" and int(uid) in box.uids and limits.strip() == "(64, 64)"
        daemon = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint('left')\n"
        assert box.run({"d.py": daemon}).status == "ok"
        assert box.run({"l.py": "while True: pass"}, timeout_s=0.5).status == "timeout"
        assert leftovers(box) == []
    finally:
        box.close()


def test_reaper_never_sweeps_without_a_dedicated_uid(tmp_path: Path) -> None:
    """kill(-1) as root would reach every process: the helper must refuse. Checked inside a fresh pid
    namespace, so even a broken guard could only hit the namespace's own processes."""
    reaper = envs.reaper_path()
    if reaper is None or os.geteuid() != 0:
        pytest.skip("needs the reaper helper and root")
    script = "sleep 30 & echo $! > bg.pid; exit 0"
    check = f"{reaper} 2 --sweep -- /bin/sh -c '{script}'; kill -0 $(cat bg.pid) && echo survived"
    out = subprocess.run(
        ["unshare", "--pid", "--fork", "--kill-child", "/bin/sh", "-c", check],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert "survived" in out.stdout, out


def test_network_namespace_has_only_loopback(bwrap_box: Sandbox) -> None:
    code = "print(sorted(line.split(':')[0].strip() for line in open('/proc/net/dev').readlines()[2:]))"
    res = bwrap_box.run({"n.py": code})
    assert res.status == "ok" and res.stdout.strip() == "['lo']", res


def test_a_failing_sandbox_set_up_is_an_error_not_a_program_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.geteuid() != 0 or envs.reaper_path() is None:
        pytest.skip("needs root and the reaper helper")
    box = Sandbox("bwrap", workers=1)
    not_a_netns = tmp_path / "plain-file"
    not_a_netns.write_text("")
    monkeypatch.setattr(box.backend, "_slot_netns", lambda uid: str(not_a_netns))
    try:
        res = box.run({"p.py": "print('must not run')"})
        assert res.status == "error" and "setns" in res.error and "must not run" not in res.stdout
        fake = box.run({"f.py": "import sys\nprint('reaper: setns: boom', file=sys.stderr)\nsys.exit(126)"})
        assert fake.status == "error"  # still the bad netns: fails closed before the program runs
    finally:
        box.close()
    fresh = Sandbox("bwrap", workers=1)
    res = fresh.run({"f.py": "import sys\nprint('reaper: setns: x', file=sys.stderr)\nsys.exit(126)"})
    fresh.close()
    assert res.status == "failed" and res.exit_code == 126  # a program cannot fake a sandbox error


def test_multiprocessing_works_inside_the_sandbox(bwrap_box: Sandbox) -> None:
    code = (
        "import multiprocessing as mp\n\ndef sq(x):\n    return x * x\n\nif __name__ == '__main__':\n"
        "    with mp.Pool(2) as pool:\n        print(sum(pool.map(sq, range(10))))\n"
    )
    res = bwrap_box.run({"mp.py": code}, timeout_s=20)
    assert res.status == "ok" and res.stdout == "285\n", res.stderr[-1000:]


def test_a_new_lease_clears_run_dirs_left_by_a_dead_process() -> None:
    from sandbox import config
    from sandbox.uids import UidLease

    first = UidLease(1)
    (uid,) = first.uids
    slot = config.home() / "work" / f"u{uid}"
    slot.mkdir(parents=True, exist_ok=True)
    stale = slot / "run-left-by-a-killed-process"
    stale.mkdir()
    (stale / "big.bin").write_bytes(b"x" * 1024)
    first.release()  # as when the holder died: the lock goes, the files stay
    again = UidLease(1)  # the lowest free uid: this one, unless another process leased (and cleared) it first
    try:
        assert not stale.exists()
    finally:
        again.release()
