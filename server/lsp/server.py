"""The edit-fidelity language server object: state, settings, backends and shared helpers.

Handlers live in `server.lsp.handlers` (one module per LSP method or command) and are registered by
`create_server()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import sys
from collections import Counter
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from server.backends import BackendPool
from server.lsp.protocol import FidelityProtocol
from server.lsp.settings import SECTION, Settings, extract_section, parse_settings
from server.lsp.state import DocState, Store
from server.tasks import TaskSet

logger = logging.getLogger(__name__)
T = TypeVar("T")

SOURCE = "edit-fidelity"
VERSION = "0.1.0"


class EditFidelityServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            name="edit-fidelity",
            version=VERSION,
            protocol_cls=FidelityProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.store = Store()
        self.pool = BackendPool()
        self.settings = Settings()
        self.init_options: dict = {}
        self.config_problems: list[str] = []
        self._compute_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="fidelity")
        self._config_pending: asyncio.Event | None = None
        self.tasks = TaskSet()  # every background task the server starts; shutdown cancels what is left
        # how often the work that must not happen did happen (observation runs, cache rebuilds):
        # served by editFidelity.serverStats so tests assert facts, not timings
        self.counters: Counter[str] = Counter()

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str, cancel: bool = True) -> asyncio.Task[T]:
        """Start background work the server holds until it ends (the loop holds tasks only weakly)."""
        return self.tasks.spawn(coro, name=name, cancel=cancel)

    # -- off-loop computation ----------------------------------------------------------------------
    async def compute(self, fn: Callable[..., T], *args: Any) -> T:
        """Run pure CPU work (fidelity measurements) in a worker thread so the loop keeps serving."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._compute_pool, fn, *args)

    # -- documents -----------------------------------------------------------------------------------
    def open_document(self, uri: str) -> tuple[TextDocument, DocState] | None:
        key = unquote(uri)
        doc = self.workspace.text_documents.get(key)
        state = self.store.docs.get(key)
        if doc is None or state is None:
            return None
        return doc, state

    # -- settings ------------------------------------------------------------------------------------
    def apply_settings(self, raw: Any, *, announce: bool = True) -> None:
        settings, problems = parse_settings(raw)
        self.settings = settings
        self.pool.configure(settings.backends)
        self.config_problems = problems
        if settings.backends and "openai" not in sys.modules:
            # the openai client takes ~1 s to import: load it now, not on the first request's clock
            with contextlib.suppress(RuntimeError):
                asyncio.get_running_loop().run_in_executor(self._compute_pool, importlib.import_module, "openai")
        for doc in self.store.docs.values():
            doc.actions_cache = None
        if problems and announce:
            self.show("edit-fidelity settings: " + "; ".join(problems), types.MessageType.Warning)

    async def wait_for_configuration(self, timeout: float = 5.0) -> None:
        """Commands wait for a configuration pull in flight (right after `initialized`)."""
        pending = self._config_pending
        if pending is not None and not pending.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(pending.wait(), timeout)

    async def pull_configuration(self) -> None:
        """Settings from `workspace/configuration` over the initialization options (when supported)."""
        event = self._config_pending = asyncio.Event()
        try:
            await self._pull_configuration()
        finally:
            event.set()

    async def _pull_configuration(self) -> None:
        caps = self.client_capabilities
        supported = bool(caps and caps.workspace and caps.workspace.configuration)
        merged = dict(self.init_options)
        if supported:
            try:
                result = await asyncio.wait_for(
                    self.workspace_configuration_async(
                        types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                    ),
                    timeout=5.0,
                )
                if result and isinstance(result[0], dict) and result[0]:
                    merged.update(extract_section(result[0]))
            except Exception as exc:  # noqa: BLE001 - a client that fails this request must not stop the server
                logger.warning("workspace/configuration failed: %s", exc)
        self.apply_settings(merged)

    def report_server_error(self, error: Exception, source) -> None:
        """Errors outside a request (a notification about a document nobody opened, a message that is
        not JSON): logged for the user to find, no pop-up; the server carries on."""
        logger.warning("%s: %s", getattr(source, "__name__", source), error)
        try:
            self.log(
                f"edit-fidelity: ignored a bad message ({type(error).__name__}: {str(error)[:200]})",
                types.MessageType.Warning,
            )
        except Exception:
            logger.debug("could not log to the client", exc_info=True)

    # -- messages ------------------------------------------------------------------------------------
    def show(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    # -- publishing ----------------------------------------------------------------------------------
    def publish(self, uri: str) -> None:
        from server.lsp.views import diagnostics_for

        opened = self.open_document(uri)
        if opened is None:
            return
        doc, state = opened
        state.actions_cache = None
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=doc.uri, version=doc.version, diagnostics=diagnostics_for(self, state))
        )

    def refresh_code_lenses(self) -> None:
        caps = self.client_capabilities
        ws = caps.workspace if caps else None
        if ws and ws.code_lens and ws.code_lens.refresh_support:
            fut = self.protocol.send_request(types.WORKSPACE_CODE_LENS_REFRESH, None)
            fut.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)

    def shutdown_resources(self) -> None:
        self._compute_pool.shutdown(wait=False, cancel_futures=True)


def create_server() -> EditFidelityServer:
    from server.lsp import handlers

    ls = EditFidelityServer()
    handlers.register_all(ls)
    return ls
