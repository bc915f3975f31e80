"""initialize / initialized / workspace/didChangeConfiguration / shutdown."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types

logger = logging.getLogger(__name__)

from server.lsp.settings import SECTION, extract_section


def register(ls) -> None:
    @ls.feature(types.INITIALIZE)
    def initialize(ls, params: types.InitializeParams):
        ls.init_options = extract_section(params.initialization_options)
        ls.apply_settings(ls.init_options, announce=False)

    @ls.feature(types.INITIALIZED)
    async def initialized(ls, params: types.InitializedParams):
        await ls.pull_configuration()

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls, params: types.DidChangeConfigurationParams):
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
    async def shutdown(ls, params):
        for state in ls.store.docs.values():
            if state.observe_task is not None:
                state.observe_task.cancel()
        try:
            await asyncio.wait_for(ls.pool.aclose(), timeout=2.0)
        except Exception:
            logger.debug("closing backends failed", exc_info=True)
        ls.shutdown_resources()
