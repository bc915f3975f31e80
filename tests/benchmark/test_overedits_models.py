"""`python -m benchmark.studies.overedits.models`: recorded CanItEdit runs through the real language server, the
unrequested units per model and instruction kind.

A crafted archive (the MultiPL-E format of the recorded runs) is judged by the command and replayed by
`bench run --backend recorded:ARCHIVE` (the engine's own path: its server, its records); the command's
figures must be what the records of the samples with a recorded OK verdict give, whatever the judgment
says of each completion (the classifier is being changed). Bad input is one line and status 2."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import msgspec
import pytest

from benchmark.datadir import run_script
from benchmark.report.metrics import mean
from benchmark.run.store import RESULTS, read_records
from benchmark.studies.overedits.models import NO_SANDBOX, ModelsReport, main
from benchmark.suites import canitedit
from sandbox import envs
from tests.benchmark.cli_runs import quiet_run

ROOT = Path(__file__).resolve().parents[2]
DOC = '        """Computes the sample mean of the data"""\n'


def _variants(problems: dict[str, canitedit.Problem]) -> dict[str, str]:
    cov, hello = problems["2_cov_corr"].after, problems["3_hello_world"].after
    return {
        # a removed docstring and a renamed local beside the requested change
        "cov_over": cov.replace(DOC, "").replace("std_y = var_y", "sd_y = var_y").replace("* std_y", "* sd_y"),
        # a value computed and never read, beside the fix
        "hello_dead": hello.replace("    return f", "    shout = name.upper()\n    return f"),
        "hello_renamed": hello.replace("name", "who"),
    }


def _member(tar: tarfile.TarFile, name: str, doc: dict) -> None:
    raw = gzip.compress(json.dumps(doc).encode())
    info = tarfile.TarInfo(name)
    info.size = len(raw)
    tar.addfile(info, io.BytesIO(raw))


def _archive(path: Path, samples: dict[tuple[str, str], list[tuple[str, str]]]) -> Path:
    """A recorded run: per (problem, kind) its completions with their recorded statuses."""
    with tarfile.open(path, "w:gz") as tar:
        for (problem, kind), got in samples.items():
            stem = f"run/{problem}_instruction_{kind}"
            _member(tar, f"{stem}.json.gz", {"completions": [text for text, _ in got]})
            _member(tar, f"{stem}.results.json.gz", {"results": [{"status": status} for _, status in got]})
    return path


@pytest.fixture(scope="module")
def problems(shared_data: Path) -> dict[str, canitedit.Problem]:
    if not (shared_data / canitedit.FILE).exists():
        pytest.skip(f"no CanItEdit data at {shared_data}")
    return {p.task_id: p for p in canitedit.load(shared_data, 3)}


@pytest.fixture(scope="module")
def samples(problems: dict[str, canitedit.Problem]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    v = _variants(problems)
    gold = {k: p.after for k, p in problems.items()}
    return {
        ("1_cipher", "descriptive"): [
            (gold["1_cipher"], "OK"),
            (gold["1_cipher"], "OK"),
            (problems["1_cipher"].before, "Exception"),
        ],
        ("1_cipher", "lazy"): [(gold["1_cipher"], "OK"), ("def broken(:\n", "SyntaxError"), (gold["1_cipher"], "OK")],
        # the same over-edit passing once and failing once: only the passing sample counts
        ("2_cov_corr", "descriptive"): [
            (v["cov_over"], "OK"),
            (gold["2_cov_corr"], "OK"),
            (v["cov_over"], "Exception"),
        ],
        ("2_cov_corr", "lazy"): [(gold["2_cov_corr"], "OK")] * 3,
        ("3_hello_world", "descriptive"): [
            (v["hello_dead"], "OK"),
            (v["hello_dead"], "OK"),
            (gold["3_hello_world"], "OK"),
        ],
        ("3_hello_world", "lazy"): [
            (v["hello_renamed"], "Timeout"),
            (gold["3_hello_world"], "OK"),
            (v["hello_dead"], "OK"),
        ],
    }


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, ModelsReport]:
    rc = main([*argv, "--format", "json", "--concurrency", "3", "--servers", "2", "--quiet"])
    return rc, msgspec.json.decode(capsys.readouterr().out, type=ModelsReport)


@pytest.mark.skipif(not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox")
def test_the_figures_are_the_replays_records_of_the_recorded_passes(shared_data, problems, samples, tmp_path, capsys):
    alpha = _archive(tmp_path / "alpha-canitedit-2026-01-01.tar.gz", samples)
    # a second run: alpha's descriptive completions of two problems, so the same figures on those problems
    beta = _archive(
        tmp_path / "beta-canitedit-2026-01-02.tar.gz",
        {k: got for k, got in samples.items() if k[1] == "descriptive" and k[0] != "1_cipher"},
    )
    rc, r = _run(capsys, str(alpha), str(beta), "--data", str(shared_data), "--against", "alpha")
    assert rc == 0 and r.note == NO_SANDBOX and r.against == "alpha"
    rows = {(row.run, row.kind): row for row in r.rows}
    assert set(rows) == {("alpha", "descriptive"), ("alpha", "lazy"), ("beta", "descriptive"), ("beta", "lazy")}
    assert list(r.kinds) == sorted(r.kinds) and all(list(row.by_kind) == r.kinds for row in r.rows)

    # the engine's replay of the same archive: its records of the samples the run recorded as passing
    quiet_run(tmp_path / "replay", "canitedit", f"recorded:{alpha}", shared_data, "--limit", "3")
    records = [rec for rec in read_records(tmp_path / "replay" / RESULTS) if rec.recorded_pass]
    for kind in ("descriptive", "lazy"):
        mine = [rec for rec in records if rec.condition == kind]
        row = rows[("alpha", kind)]
        ok = [(p, t) for (p, k), got in samples.items() if k == kind for t, s in got if s == "OK"]
        assert row.passing == len(mine) == len(ok) and row.distinct == len(set(ok)) and row.failed == 0
        assert row.warned == pytest.approx(mean([float(bool(rec.flagged_warning)) for rec in mine]))
        assert row.units == pytest.approx(mean([float(rec.flagged_warning or 0) for rec in mine]))
        for k in r.kinds:
            assert row.by_kind[k] == pytest.approx(
                mean([float((rec.flagged_warning_kinds or {}).get(k, 0)) for rec in mine])
            )
        # against alpha, per problem both pass, each problem weighing the same
        [m] = [m for m in r.matched if m.kind == kind]
        assert m.run == "beta" and m.problems == (2 if kind == "descriptive" else 0)
        if kind == "descriptive":
            per = [
                mean([float(bool(rec.flagged_warning)) for rec in mine if rec.task_id == p])
                for p in ("2_cov_corr", "3_hello_world")
            ]
            assert m.run_warned == m.base_warned == pytest.approx(mean(per))
            assert m.warned_diff_low == m.warned_diff_high == 0.0  # the same completions: no difference at all
        else:
            assert m.run_warned is m.base_warned is None
    # the dead store is an unrequested statement inside the fix's unit, counted under its kind
    assert rows[("alpha", "descriptive")].by_kind.get("added_code", 0) > 0
    assert rows[("beta", "lazy")].passing == 0 and rows[("beta", "lazy")].warned is None

    # the text and the markdown say where the verdicts come from
    assert main([str(alpha), "--data", str(shared_data), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert NO_SANDBOX in text and "alpha" in text and "warned" in text
    assert main([str(alpha), "--data", str(shared_data), "--quiet", "--format", "markdown"]) == 0
    table = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| alpha")]
    assert len(table) == 2 and table[0].split("|")[2].strip() == "descriptive"


def test_bad_input_is_one_line_and_status_2(shared_data, tmp_path, capsys):
    junk = tmp_path / "junk-canitedit.tar.gz"
    junk.write_text("not an archive\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    for argv, says in (
        ([str(tmp_path / "missing.tar.gz"), "--data", str(shared_data)], "no such archive"),
        ([str(junk), "--data", str(shared_data)], "not a readable CanItEdit run archive"),
        (["--data", str(tmp_path / "nowhere")], "no such data directory"),
        (["--data", str(empty)], "no recorded CanItEdit runs"),
        ([str(junk), "--data", str(shared_data), "--against", "other"], "--against other: no such run"),
    ):
        assert run_script(lambda argv=argv: main(argv)) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0], err
    p = subprocess.run(
        [sys.executable, "-m", "benchmark.studies.overedits.models", str(tmp_path / "missing.tar.gz")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
