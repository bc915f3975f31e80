"""initialize / initialized / workspace/didChangeConfiguration / shutdown."""

from __future__ import annotations

import asyncio
import logging
import os

from lsprotocol import types

from server.fidelity.text import cache as fidelity_cache
from server.lsp.server import EditFidelityServer
from server.lsp.settings import SECTION, extract_section

logger = logging.getLogger(__name__)
CACHE_ENV = "EDIT_FIDELITY_CACHE_MB"  # the analysis caches' byte cap (estimated), default 128


def configure_caches(ls: EditFidelityServer) -> None:
    raw = os.environ.get(CACHE_ENV)
    if raw is None or not raw.strip():
        return
    try:
        mb = float(raw)
        if not 0 <= mb <= 1_000_000:
            raise ValueError
    except ValueError:
        ls.log(
            f"edit-fidelity: {CACHE_ENV}={raw!r} is not a size in MB (0 to 1000000): the default "
            f"{fidelity_cache.DEFAULT_MAX_BYTES >> 20} MB holds",
            types.MessageType.Warning,
        )
        return
    fidelity_cache.configure(int(mb * 1024 * 1024))


def register(ls: EditFidelityServer) -> None:
    @ls.feature(types.INITIALIZE)
    def initialize(ls: EditFidelityServer, params: types.InitializeParams) -> None:
        configure_caches(ls)
        ls.init_options = extract_section(params.initialization_options)
        ls.apply_settings(ls.init_options, announce=False)

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: EditFidelityServer, params: types.InitializedParams) -> None:
        await ls.pull_configuration()

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: EditFidelityServer, params: types.DidChangeConfigurationParams) -> None:
        caps = ls.client_capabilities
        if caps and caps.workspace and caps.workspace.configuration:
            await ls.pull_configuration()
            return
        settings = params.settings
        if isinstance(settings, dict) and (SECTION in settings or "backends" in settings):
            merged = dict(ls.init_options)
            merged.update(extract_section(settings))
            ls.apply_settings(merged)

    @ls.feature(types.SHUTDOWN)
    async def shutdown(ls: EditFidelityServer, params: object) -> None:
        ls.tasks.cancel()  # pending observations, carry-overs: nothing of them is wanted now
        try:
            await asyncio.wait_for(ls.pool.aclose(), timeout=2.0)
        except Exception:
            logger.debug("closing backends failed", exc_info=True)
        ls.shutdown_resources()
