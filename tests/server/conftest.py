"""Fixtures: the scripted OpenAI-compatible backend (one per session) and the real server process
driven by pytest-lsp's client (one per test). Helpers live in lsp_helpers.py."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
import pytest_lsp
from lsp_helpers import SCRIPTS, SERVER_CMD, SERVER_ENV
from pytest_lsp import ClientServerConfig, LanguageClient

from tools.doubles.scripted import ScriptedServer


@pytest.fixture(scope="session")
def backend():
    with ScriptedServer({k: list(v) for k, v in SCRIPTS.items()}) as srv:
        yield srv


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_CMD, server_env=SERVER_ENV))
async def lsp(lsp_client: LanguageClient):
    yield
    with contextlib.suppress(Exception):  # a test that killed the server has nothing left to shut down
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)
