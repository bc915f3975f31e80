"""The language benchmark script runs, and refuses bad input in one line with exit status 2."""

from __future__ import annotations

import pytest

from tools.bench import bench_lang


def test_bench_lang_runs_on_a_small_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_lang.main(["--lines", "60", "--rounds", "1", "--languages", "go,java"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["language", "lines", "tokens"]
    assert [line.split()[0] for line in out[1:]] == ["go", "java"]
    for line in out[1:]:  # every column a number of its own, whatever the machine's load (no timings asserted)
        cells = line.split()
        assert len(cells) == 10, line
        lines, tokens = int(cells[1]), int(cells[2])
        assert 40 <= lines <= 70 and tokens > 100
        assert all(float(c.replace(",", "")) >= 0 for c in cells[3:9])


@pytest.mark.parametrize("argv", [["--languages", "cobol"], ["--languages", ","], ["--lines", "0"], ["--rounds", "0"]])
def test_bench_lang_bad_input(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_lang.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bench_lang: ")


@pytest.mark.parametrize("lang", sorted(bench_lang.UNITS))
def test_generated_files_parse_cleanly(lang: str) -> None:
    import server.fidelity.lang as L

    src = L.parse(bench_lang.make_text(lang, 100), L.by_name(lang))
    assert not src.errors
    assert len(L.functions(src)) >= 5
