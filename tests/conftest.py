"""Shared fixtures: where the benchmark data lives (EDIT_FIDELITY_DATA, else ../shared/data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from data_paths import data_dir


@pytest.fixture(scope="session")
def shared_data() -> Path:
    found = data_dir()
    if found is None:
        pytest.skip("benchmark data not found: set EDIT_FIDELITY_DATA to the shared data directory")
    return found


@pytest.fixture(scope="session")
def overedit_tasks(shared_data: Path) -> list[dict]:
    path = shared_data / "overedit" / "corrupted_solutions_manual_easy_400.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def canitedit_problems(shared_data: Path) -> list[dict]:
    path = shared_data / "canitedit" / "canitedit_test.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def canaicode_root(shared_data: Path) -> Path:
    path = shared_data / "canaicode"
    if not path.is_dir():
        pytest.skip("no can-ai-code data")
    return path
