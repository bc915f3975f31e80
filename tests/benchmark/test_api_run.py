"""`benchmark.api.run`, the library entry point the CLI makes one call to: a real run (server, sandbox)
in this process, its result the summary it wrote; bad input one `UserError` before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from benchmark import suites
from benchmark.api import RunResult, run
from benchmark.report.summary import RunSummary, run_summary
from benchmark.run.store import RESULTS, read_config, read_records
from benchmark.suite import SuiteSummary
from server.errors import UserError


def test_a_run_returns_what_it_wrote(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "run"
    got = run(suites.get("canitedit"), "gold", out, limit=2, data=str(shared_data), workers=2)
    assert isinstance(got, RunResult) and got.out == out
    assert got.summary == json.loads((out / "summary.json").read_text())
    assert got.summary["suite"] == "canitedit" and got.summary["backend"] == "gold"
    assert list(got.summary["conditions"]) == ["descriptive", "lazy"]  # the suite's default conditions
    records = read_records(out / RESULTS)
    assert got.written == got.records == len(records) == 4  # 2 problems x 2 conditions x 1 sample
    assert all(r.passed for r in records) and got.complete  # the gold passes its own tests
    assert got.timings["sandbox_s"] > 0
    # summaries are Structs: the suite's figures a SuiteSummary, the file a RunSummary encoded
    typed = run_summary(read_config(out), records)
    assert isinstance(typed, RunSummary) and typed.complete and typed.n_verdicts == 4
    assert msgspec.json.format(msgspec.json.encode(typed)) + b"\n" == (out / "summary.json").read_bytes()
    body = suites.get("canitedit").reporter.summarise(read_config(out), records)
    assert isinstance(body, SuiteSummary) and body.conditions == typed.conditions

    again = run("canitedit", "gold", out, limit=2, data=str(shared_data), workers=2, resume=True)
    assert (again.written, again.records) == (0, 4)  # resumed: nothing left to do
    assert again.summary == got.summary


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"conditions": ["nosuch"]}, "unknown condition(s) nosuch for suite canitedit; known: descriptive, lazy"),
        ({"options": {"x": "1"}}, "suite canitedit takes no options (got x)"),
        ({"limit": 0}, "--limit and --samples must be >= 1"),
        ({"backend": None}, "--backend SPEC (or --serve-vllm MODEL) is required"),
        ({"backend": "nosuch"}, "nosuch"),
    ],
)
def test_bad_input_is_a_user_error_before_anything_is_written(tmp_path: Path, kwargs: dict, says: str) -> None:
    backend = kwargs.pop("backend", "gold")
    with pytest.raises(UserError) as err:
        run("canitedit", backend, tmp_path / "run", **kwargs)
    assert says in str(err.value)
    assert not (tmp_path / "run").exists()
