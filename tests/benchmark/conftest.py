"""Fixtures of the benchmark tests: runs that more than one module reads, made once a session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmark.cli_runs import CebRun, ceb_run


@pytest.fixture(scope="session")
def ceb_runs(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, CebRun]:
    """CodeEditorBench's gold and identity runs (`--limit 1`: one task of each kind), through the real CLI,
    server and sandbox; read by test_codeeditorbench (their verdicts, Win Rate) and test_report_html_suites
    (their HTML pages). Nothing reads them but those tests, and none writes into them but page.html."""
    if not (shared_data / "codeeditorbench").is_dir():
        pytest.skip("no CodeEditorBench data")
    root = tmp_path_factory.mktemp("codeeditorbench")
    return {backend: ceb_run(root / backend, shared_data, backend) for backend in ("gold", "identity")}
