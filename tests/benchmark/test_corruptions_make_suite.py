"""`bench make-suite` on a user's (solution, tests) pairs: kept tasks fail, gold patches pass, bad input
is reported per task, and the same seed gives byte-identical output in two processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest

from benchmark.build.corruptions import HELD_OUT, invert
from benchmark.run.testrun import run_tests
from benchmark.suites.overedit import Task
from sandbox import Sandbox, envs

REPO = Path(__file__).resolve().parents[2]

CLIP = textwrap.dedent('''
    def clip_gap(a, b, limit):
        """The absolute gap between a and b, at most limit."""
        gap = abs(a - b)
        if gap > limit:
            return limit
        return gap
''')
CLIP_TESTS = textwrap.dedent("""
    import unittest

    class TestCases(unittest.TestCase):
        def test_small(self):
            self.assertEqual(clip_gap(3, 5, 10), 2)
            self.assertEqual(clip_gap(5, 3, 10), 2)

        def test_clipped(self):
            self.assertEqual(clip_gap(0, 50, 10), 10)

        def test_at_limit(self):
            self.assertEqual(clip_gap(0, 10, 10), 10)
            self.assertEqual(clip_gap(0, 11, 10), 10)
""")
COUNT = textwrap.dedent("""
    def count_above(xs, t):
        n = 0
        for x in xs:
            if x > t:
                n += 1
        return n
""")
COUNT_TESTS = (
    "assert count_above([1, 5, 7], 4) == 2\nassert count_above([4, 4], 4) == 0\nassert count_above([], 0) == 0\n"
)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def base_env() -> str:
    envs.prepare("base", log=lambda m: None)
    return "base"


def _make(src: Path | str, out: Path, *extra: str, seed: int = 3, hashseed: str = "0") -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "benchmark.build.make_suite_cli",
        "make-suite",
        "--from",
        str(src),
        "--out",
        str(out),
        "--seed",
        str(seed),
        "--env",
        "base",
        "--workers",
        "2",
        "--memory",
        "1024",
        *extra,
    ]
    return subprocess.run(
        cmd,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={**os.environ, "PYTHONHASHSEED": hashseed},
    )


def _tasks(path: Path) -> list[Task]:
    return [msgspec.json.decode(line, type=Task) for line in path.read_bytes().splitlines()]


def test_bad_input_is_reported_per_task_and_the_run_goes_on(tmp_path: Path, base_env: str):
    src = _write(
        tmp_path / "src",
        {
            "clip/solution.py": CLIP,
            "clip/tests.py": CLIP_TESTS,
            "clip/prompt.txt": "Clip the gap.",
            "count.py": COUNT,
            "test_count.py": COUNT_TESTS,
            "broken/solution.py": "def f(:\n    return 1\n",
            "broken/tests.py": "assert True\n",
            "hangs/solution.py": CLIP,
            "hangs/tests.py": "while True:\n    pass\n",
            "plain/solution.py": "def ident(x):\n    return x\n",
            "plain/tests.py": "assert ident(2) == 2\n",
            "lonely.py": "def f():\n    return 1\n",
        },
    )
    out = tmp_path / "suite.jsonl"
    done = _make(src, out, "--families", "comparison_operators,abs_removal,arithmetic_operators", "--timeout", "3")
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "broken: skipped: the solution does not parse" in err
    assert "hangs: skipped: the solution does not pass its own tests (time limit of 3 s)" in err
    assert "plain: skipped: no corruption family applies to the first function (no target for:" in err
    assert "lonely: no tests (test_lonely.py) beside lonely.py" in err
    assert "make-suite: 2 tasks" in err
    tasks = _tasks(out)
    assert [t.task_id for t in tasks] == ["clip", "count"]
    clip, count = tasks
    assert clip.prompt == "Clip the gap." and clip.test_kind == "unittest" and count.test_kind == "script"
    assert all(
        c.family in {"mutate_comparison_operators", "mutate_abs_removal", "mutate_arithmetic_operators"}
        for t in tasks
        for c in t.corruptions
    )
    assert clip.mutation_types == [c.family for c in clip.corruptions]
    assert clip.gold_patch.startswith("--- corrupted.py\n+++ fixed.py\n")

    async def verdicts() -> list[tuple[bool, bool]]:
        box = Sandbox(workers=2)
        try:
            out = []
            for t in tasks:
                bad = await run_tests(box, t.corrupted_solution, t.test_code, kind=t.kind, env=base_env, timeout_s=10)
                fixed = invert(t.corrupted_solution, t.corruptions)
                good = await run_tests(box, fixed, t.test_code, kind=t.kind, env=base_env, timeout_s=10)
                out.append((bad.passed, good.passed))
            return out
        finally:
            box.close()

    assert asyncio.run(verdicts()) == [(False, True), (False, True)]  # kept tasks fail; their gold patches pass


def test_same_seed_gives_identical_bytes_in_two_processes(tmp_path: Path, base_env: str):
    src = _write(
        tmp_path / "src",
        {"clip/solution.py": CLIP, "clip/tests.py": CLIP_TESTS, "count.py": COUNT, "test_count.py": COUNT_TESTS},
    )
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    runs = [
        _make(src, a, "--families", "all", "--variants", "2", hashseed="1"),
        _make(src, b, "--families", "all", "--variants", "2", hashseed="2"),
        _make(src, c, "--families", "all", "--variants", "2", seed=4, hashseed="1"),
    ]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    assert a.read_bytes() == b.read_bytes()
    assert len(_tasks(a)) >= 3 and {t.task_id for t in _tasks(a)} >= {"clip#v0", "clip#v1"}
    assert a.read_bytes() != c.read_bytes()  # another seed, other corruptions


def test_unknown_source_and_family_are_usage_errors(tmp_path: Path):
    done = _make(tmp_path / "nowhere", tmp_path / "x.jsonl")
    assert done.returncode == 2 and "not a suite with solutions and tests" in done.stderr
    (tmp_path / "d").mkdir()
    done = _make(tmp_path / "d", tmp_path / "x.jsonl", "--families", "nope")
    assert done.returncode == 2 and "unknown corruption family 'nope'" in done.stderr


def test_from_the_bigcodebench_tasks(shared_data: Path, tmp_path: Path, base_env: str):
    rows = (shared_data / "overedit" / "corrupted_solutions_manual_easy_400.jsonl").read_text().splitlines()
    subset = tmp_path / "two.jsonl"  # stdlib-only tasks: they run in `base`
    subset.write_text("".join(r + "\n" for r in rows if any(f'"BigCodeBench/{n}"' in r for n in (1, 5))))
    out = tmp_path / "bcb.jsonl"
    done = _make(
        "overedit", out, "--data", str(subset), "--families", "ood", "--max-corruptions", "1", "--timeout", "20"
    )
    err = done.stderr
    assert done.returncode in (0, 1), err
    tasks = _tasks(out) if done.returncode == 0 else []
    reported = {line.split(":")[1].strip() for line in err.splitlines() if line.startswith("make-suite: BigCodeBench/")}
    # every source task is either kept or reported with its reason
    assert {t.task_id for t in tasks} | reported == {"BigCodeBench/1", "BigCodeBench/5"}
    for t in tasks:
        assert t.test_kind == "unittest" and t.env == "base" and len(t.corruptions) == 1
        assert t.corruptions[0].family in {f.name for f in HELD_OUT}
