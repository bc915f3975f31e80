"""Damaged recorded runs and damaged CanItEdit data through the real CLI: one line naming the file (and
member or line), exit status 2, never a traceback, also on `--resume`."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

EXE = Path(sys.executable).parent / "edit-fidelity"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "internal error" not in out, out
    assert done.returncode == 2, out
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def data(tmp_path: Path, canitedit_problems: list[dict]) -> Path:
    """A data directory with the first CanItEdit problem only."""
    root = tmp_path / "data"
    (root / "canitedit").mkdir(parents=True)
    (root / "canitedit" / "canitedit_test.jsonl").write_text(json.dumps(canitedit_problems[0]) + "\n")
    return root


def _archive(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return path


def _good_archive(path: Path, full_name: str) -> Path:
    # incompressible completions, so that cutting the file in half cuts a member's stream
    import random

    rng = random.Random(0)
    text = "".join(rng.choice("abcdefghij \n") for _ in range(200_000))
    body = gzip.compress(json.dumps({"completions": [text]}).encode())
    return _archive(path, {f"run/{full_name}_instruction_descriptive.json.gz": body})


def _bench(data: Path, tmp_path: Path, backend: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return cli(
        "bench",
        "run",
        "--suite",
        "canitedit",
        "--backend",
        backend,
        "--data",
        str(data),
        "--conditions",
        "descriptive",
        "--out",
        str(tmp_path / "run"),
        *extra,
        cwd=tmp_path,
    )


def test_not_an_archive_and_not_gzip(tmp_path: Path, data: Path):
    (tmp_path / "notes.txt").write_text("hello\n")
    one_line_error(_bench(data, tmp_path, "recorded:notes.txt"), "notes.txt", "expected a CanItEdit run .tar.gz")
    (tmp_path / "junk.tar.gz").write_text("this is not gzip\n")
    one_line_error(
        _bench(data, tmp_path, "recorded:junk.tar.gz"),
        "junk.tar.gz",
        "not a readable CanItEdit run archive",
        "not a gzip file",
    )
    (tmp_path / "empty.tgz").write_bytes(b"")
    one_line_error(_bench(data, tmp_path, "recorded:empty.tgz"), "empty.tgz", "not a readable")
    one_line_error(_bench(data, tmp_path, "recorded:missing.tar.gz"), "recorded run not found: missing.tar.gz")


def test_truncated_archive_also_on_resume(tmp_path: Path, data: Path, canitedit_problems: list[dict]):
    good = _good_archive(tmp_path / "good.tar.gz", canitedit_problems[0]["full_name"])
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    one_line_error(_bench(data, tmp_path, "recorded:cut.tar.gz"), "cut.tar.gz", "the file is cut short")
    # a run that exists, resumed with its archive now damaged
    first = _bench(data, tmp_path, "gold", "--quiet")
    assert first.returncode == 0, first.stderr
    one_line_error(_bench(data, tmp_path, "recorded:cut.tar.gz", "--resume"), "cut.tar.gz", "cut short")


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"not gzip at all", "Not a gzipped file"),
        (gzip.compress(b"{not json", mtime=0), "malformed"),
        (gzip.compress(b'{"x": 1}', mtime=0), "missing required field `completions`"),
        (gzip.compress(b'{"completions": "one"}', mtime=0), "Expected `array`"),
    ],
)
def test_damaged_member_is_named(tmp_path: Path, data: Path, body: bytes, needle: str):
    _archive(tmp_path / "bad.tar.gz", {"run/1_x_instruction_lazy.json.gz": body})
    one_line_error(
        _bench(data, tmp_path, "recorded:bad.tar.gz"), "bad.tar.gz (member run/1_x_instruction_lazy.json.gz)", needle
    )


def test_results_member_with_wrong_shape(tmp_path: Path, data: Path):
    _archive(
        tmp_path / "bad.tar.gz",
        {
            "run/1_x_instruction_lazy.json.gz": gzip.compress(b'{"completions": ["x"]}'),
            "run/1_x_instruction_lazy.results.json.gz": gzip.compress(b'{"results": [{"status": 3}]}'),
        },
    )
    one_line_error(
        _bench(data, tmp_path, "recorded:bad.tar.gz"), "1_x_instruction_lazy.results.json.gz", "Expected `str"
    )


def test_malformed_results_jsonl_file_and_run_dir(tmp_path: Path, data: Path):
    (tmp_path / "results.jsonl").write_text('{"task_id": "a"}\nnot json\n')
    one_line_error(_bench(data, tmp_path, "recorded:results.jsonl"), "results.jsonl:1: not a result record")
    rundir = tmp_path / "old"
    rundir.mkdir()
    (rundir / "results.jsonl").write_text("\x00garbage\n")
    one_line_error(_bench(data, tmp_path, "recorded:old"), "old/results.jsonl:1: not a result record")


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "not a CanItEdit problem (Expecting property name"),
        ('{"id": 7}', "not a CanItEdit problem (Object missing required field"),
        ('{"id": "seven", "name": 1}', "not a CanItEdit problem (Expected `int`"),
    ],
)
def test_malformed_canitedit_line_names_file_and_line(tmp_path: Path, data: Path, line: str, needle: str):
    path = data / "canitedit" / "canitedit_test.jsonl"
    path.write_text(path.read_text() + "\n" + line + "\n")  # line 3 (line 2 is blank)
    for done in (
        _bench(data, tmp_path, "gold"),
        cli(
            "bench",
            "make-suite",
            "--from",
            "canitedit",
            "--data",
            str(data),
            "--out",
            str(tmp_path / "s.jsonl"),
            cwd=tmp_path,
        ),
    ):
        one_line_error(done, f"{path}:3: ", needle, "bench download canitedit")
    assert not (tmp_path / "run").exists()  # refused before the run directory was made


def test_dataerror_is_not_systemexit():
    from benchmark.datadir import DataError
    from benchmark.run.recorded import RecordedError
    from server.errors import UserError

    assert not issubclass(DataError, SystemExit) and issubclass(DataError, Exception)
    assert issubclass(RecordedError, DataError) and issubclass(DataError, UserError)
