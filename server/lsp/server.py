"""The edit-fidelity language server object: state, settings, backends and shared helpers.

Handlers live in `server.lsp.handlers` (one module per LSP method or command) and take it typed as
`ls: EditFidelityServer`; `server.lsp.app.create_server()` registers them. Nothing here imports a
handler or a view, so every module of the package can name this class without an import circle.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
import os
import sys
from collections import Counter
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NoReturn, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from server.backends import BackendPool
from server.fidelity.text import cache as fidelity_cache
from server.lsp.analyses import Analyses
from server.lsp.connection import FidelityProtocol
from server.lsp.memory import release_unowned, trim_heap
from server.lsp.settings import SECTION, Settings, extract_section, parse_settings
from server.lsp.state import Owned
from server.lsp.store import Store
from server.tasks import TaskSet

logger = logging.getLogger(__name__)
T = TypeVar("T")

SOURCE = "edit-fidelity"
VERSION = "0.1.0"
TRIM_DELAY_S = 0.25  # after a didClose: at most one malloc_trim per this, the last close always followed by one


class EditFidelityServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            name="edit-fidelity",
            version=VERSION,
            protocol_cls=FidelityProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.store = Store()  # the documents and proposals
        self.analyses = Analyses()  # the necessity analyses
        self.pool = BackendPool()
        self.settings = Settings()
        self.init_options: dict[str, Any] = {}
        self.config_problems: list[str] = []
        self._compute_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="fidelity")
        self._config_pending: asyncio.Event | None = None
        self.tasks = TaskSet()  # every background task the server starts; shutdown cancels what is left
        # how often the work that must not happen did happen (observation runs, cache rebuilds):
        # served by editFidelity.serverStats so tests assert facts, not timings
        self.counters: Counter[str] = Counter()
        self.computing = 0  # computations running or queued in the pool (serverStats: computeRunning)
        self._trim_pending = False

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str, cancel: bool = True) -> asyncio.Task[T]:
        """Start background work the server holds until it ends (the loop holds tasks only weakly)."""
        return self.tasks.spawn(coro, name=name, cancel=cancel)

    # -- off-loop computation ----------------------------------------------------------------------
    async def compute(self, fn: Callable[..., T], *args: Any) -> T:
        """Run pure CPU work (fidelity measurements) in a worker thread so the loop keeps serving."""
        return await asyncio.wrap_future(self._submit(fn, *args))

    def _submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Into the pool, counted until it ends (its end reported on the loop, which must be running)."""
        loop = asyncio.get_running_loop()
        future = self._compute_pool.submit(fn, *args)
        self.computing += 1
        owner = fn.owner if isinstance(fn, Owned) else None

        def done(_: object) -> None:  # in the worker, also when the awaiting request was cancelled
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody counts any more
                loop.call_soon_threadsafe(self._computed, owner)

        future.add_done_callback(done)
        return future

    def _computed(self, owner: str | None) -> None:
        self.computing -= 1
        if owner is not None and owner not in self.store.docs:
            # it ended after its document closed: what it cached belongs to no open document
            fidelity_cache.release(owner)
            self.document_closed()

    def workspace_documents(self) -> int:
        """The documents pygls' own workspace holds: none, the store owns them (serverStats shows it, a
        leak check); before `initialize` there is no workspace."""
        try:
            return len(self.workspace.text_documents)
        except RuntimeError:
            return 0

    # -- settings ------------------------------------------------------------------------------------
    def apply_settings(self, raw: Any, *, announce: bool = True) -> None:
        settings, problems = parse_settings(raw)
        self.settings = settings
        self.pool.configure(settings.backends)
        self.config_problems = problems
        if settings.backends and "openai" not in sys.modules:
            # the openai client takes ~1 s to import: load it now, not on the first request's clock
            with contextlib.suppress(RuntimeError):  # no running loop: nothing to warm up for
                self._submit(importlib.import_module, "openai")
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

    def report_server_error(self, error: Exception, source: object) -> None:
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

    # -- publishing (the diagnostics: server.lsp.views.publish) -------------------------------------
    def refresh_code_lenses(self) -> None:
        caps = self.client_capabilities
        ws = caps.workspace if caps else None
        if ws and ws.code_lens and ws.code_lens.refresh_support:
            fut = self.protocol.send_request(types.WORKSPACE_CODE_LENS_REFRESH, None)
            fut.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)

    # -- memory --------------------------------------------------------------------------------------
    def document_closed(self) -> None:
        """After a didClose released the document: what the core's unowned memos kept of it goes, and
        the heap is trimmed soon after (once per burst of closes)."""
        release_unowned(len(self.store.docs))
        if not self._trim_pending:
            self._trim_pending = True
            asyncio.get_running_loop().call_later(TRIM_DELAY_S, self._trim)

    def _trim(self) -> None:
        self._trim_pending = False
        trim_heap()

    # -- the end -------------------------------------------------------------------------------------
    def shutdown_resources(self) -> None:
        self._compute_pool.shutdown(wait=False, cancel_futures=True)

    def exit_now(self, code: int) -> NoReturn:
        """`exit`: the process ends now (LSP: exit ends the server; 0 after shutdown, 1 without).

        `sys.exit` would wait: concurrent.futures joins the compute pool's threads at interpreter exit,
        so a measurement in flight (or the openai import `apply_settings` started) held the process for
        its whole length, and the interpreter's teardown of ~450 modules took ~0.6 s more. Nothing here
        is wanted after exit: the tasks and pending computations are cancelled, the processes the server
        started are killed (the embedded model's worker, the sandbox runs), the log is flushed."""
        steps: tuple[Callable[[], object], ...] = (
            self.tasks.cancel,
            functools.partial(self._compute_pool.shutdown, wait=False, cancel_futures=True),
            functools.partial(kill_children, self),
            logging.shutdown,  # flushes and closes the handlers (a --log-file)
            lambda: sys.stdout.flush(),  # looked up when run: either may have been replaced (or be None)
            lambda: sys.stderr.flush(),
        )
        for step in steps:
            with contextlib.suppress(BaseException):  # one failing step must not skip the others, or the exit
                step()
        os._exit(code)


def kill_children(ls: EditFidelityServer) -> None:
    """The processes the server started, killed without waiting (each would also notice its pipes close)."""
    for name in ls.pool.names():
        worker = getattr(ls.pool.get(name), "_worker", None)  # a LocalBackend's model worker, when started
        if worker is not None:
            worker.kill()  # SIGKILL to its process group
    ls.analyses.stop_all()
