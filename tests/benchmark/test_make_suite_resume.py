"""`bench make-suite` writes tasks as they are kept: a run killed (SIGKILL) part-way keeps its work,
`--resume` finishes it to the bytes of an uninterrupted run, and a plain progress line reaches a log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox import envs

EXE = Path(sys.executable).parent / "edit-fidelity"
N = 8


def _sources(root: Path) -> Path:
    for i in range(1, N + 1):
        (root / f"t{i}").mkdir(parents=True)
        (root / f"t{i}" / "solution.py").write_text(
            f"def clip_gap(a, b, limit):\n    gap = abs(a - b)\n    if gap > limit + {i}:\n"
            f"        return limit + {i}\n    return gap\n"
        )
        # the sleep makes each test run last, so the kill lands while sources are still left
        (root / f"t{i}" / "tests.py").write_text(
            f"import time\ntime.sleep(0.4)\nassert clip_gap(3, 5, 10) == 2\nassert clip_gap(0, 50, 10) == 10 + {i}\n"
            f"assert clip_gap(0, 10 + {i}, 10) == 10 + {i}\nassert clip_gap(0, 9, 10) == 9\n"
        )
    return root


def _cmd(src: Path, out: Path, *extra: str) -> list[str]:
    return [
        str(EXE),
        "bench",
        "make-suite",
        "--from",
        str(src),
        "--out",
        str(out),
        "--env",
        "base",
        "--workers",
        "1",
        "--seed",
        "5",
        "--memory",
        "1024",
        *extra,
    ]


def _run(src: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_cmd(src, out, *extra), capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def base_env() -> None:
    envs.prepare("base", log=lambda m: None)


def test_killed_run_resumes_to_the_same_bytes(tmp_path: Path, base_env: None):
    src = _sources(tmp_path / "src")
    full = tmp_path / "full.jsonl"
    whole = _run(src, full)
    assert whole.returncode == 0, whole.stderr
    assert not Path(f"{full}.progress").exists()  # a finished suite is the file alone
    # not a terminal: plain progress lines, the last one complete
    progress = [line for line in whole.stderr.splitlines() if " source tasks, " in line]
    assert progress and progress[-1].startswith(f"make-suite: {N}/{N} source tasks, ") and "\r" not in whole.stderr
    kept = full.read_bytes().count(b"\n")
    assert kept >= 4

    out = tmp_path / "part.jsonl"
    state = Path(f"{out}.progress")
    proc = subprocess.Popen(_cmd(src, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if state.exists() and state.read_bytes().count(b"\n") >= 3:  # the header and two sources done
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert state.exists()
    saved = out.read_bytes()
    assert saved and full.read_bytes().startswith(saved)  # the work so far, in order, survived the kill

    again = _run(src, out)  # without --resume: refused, the work kept
    assert again.returncode == 2 and "pass --resume" in again.stderr and out.read_bytes() == saved
    other = _run(src, out, "--resume", "--seed", "6")  # other settings: refused
    assert other.returncode == 2 and "seed" in other.stderr and "Traceback" not in other.stderr

    resumed = _run(src, out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "make-suite: resuming" in resumed.stderr
    assert out.read_bytes() == full.read_bytes()
    assert not state.exists()
    done = _run(src, out, "--resume")
    assert done.returncode == 0 and "nothing to resume" in done.stderr


def test_a_torn_write_is_cut_on_resume(tmp_path: Path, base_env: None):
    """Killed after a source's tasks but before its progress line, mid-way through a line of each file:
    the torn lines are cut and that source is made again."""
    import msgspec

    from benchmark.build.corruptions import select
    from benchmark.build.make_suite import _identity, sources
    from benchmark.build.suite_writer import Header
    from server.cli import build_parser

    src = _sources(tmp_path / "src")
    full = tmp_path / "full.jsonl"
    assert _run(src, full, "--limit", "3").returncode == 0
    lines = full.read_bytes().splitlines(keepends=True)
    assert len(lines) == 3
    out = tmp_path / "part.jsonl"
    args = build_parser().parse_args(_cmd(src, out, "--limit", "3")[1:])
    srcs, _ = sources(args.source, args.data, env=args.env, limit=args.limit)
    header = msgspec.json.encode(Header(identity=_identity(args, select(args.families), srcs)))
    out.write_bytes(lines[0] + lines[1] + lines[2][:20])  # t2's task written, its progress line not
    Path(f"{out}.progress").write_bytes(header + b'\n{"source":"t1","kept":["t1"],"notes":[]}\n{"source":"t2","ke')
    resumed = _run(src, out, "--limit", "3", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "1 of 3 source tasks already done" in resumed.stderr
    assert out.read_bytes() == full.read_bytes()
