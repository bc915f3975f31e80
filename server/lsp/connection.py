"""The connection to the client: pygls' LanguageServerProtocol, adjusted in six places.

- `workspace/executeCommand` runs the command coroutine as the request's own task, so that
  `$/cancelRequest` cancels it (pygls' generator-based dispatcher would cancel only a wrapper
  future and leave the backend calls running).
- Position encoding is always UTF-16 (mandatory for every client; fidelity edits are UTF-16).
- A request whose params do not even deserialize gets an InvalidParams answer instead of silence.
- A notification's handler future leaves `_request_futures` when it is done (pygls 2 files it under a
  fresh uuid and never removes it: ~3 KB per didOpen/didChange/didClose, without bound).
- didOpen / didChange / didClose go to the handlers only: the server's `Store` owns the documents
  (and counts lines as LSP does), so pygls' workspace keeps no second copy of each buffer.
- `exit` ends the process at once (`EditFidelityServer.exit_now`), with status 0 after `shutdown` and
  1 without: pygls' `sys.exit` there was swallowed by its own IO loop (always 0) and then waited for
  every worker thread and the interpreter's teardown (1.3 s idle, 3.2 s on a busy machine).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any, NoReturn, Protocol, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import MsgId
from pygls.protocol.language_server import lsp_method

logger = logging.getLogger(__name__)

Handled = Generator[Any, Any, None]  # pygls' built-in handlers: they yield the user's handler to run


class Host(Protocol):
    """What the connection asks of the server it serves (`EditFidelityServer`)."""

    def exit_now(self, code: int) -> NoReturn: ...

    async def wait_for_configuration(self, timeout: float = 5.0) -> None: ...


class FidelityProtocol(LanguageServerProtocol):
    @property
    def host(self) -> Host:
        return cast(Host, self._server)

    def _execute_handler(
        self,
        msg_id: MsgId,
        handler: Callable[..., Any],
        callback: Callable[[Future[Any]], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        if callback == self._check_handler_result:  # a notification: nobody answers it, so nobody pops it
            futures = self._request_futures

            def done(future: Future[Any], key: MsgId = msg_id, inner: Callable[[Future[Any]], None] = callback) -> None:
                # A cancelled one stays: shutdown cancels while it iterates over the dict (synchronous callbacks)
                if not future.cancelled() and futures.get(key) is future:
                    del futures[key]
                inner(future)

            callback = done
        return super()._execute_handler(msg_id, handler, callback, args, kwargs)

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> None:  # type: ignore[override]  # ends the process, yields to nobody
        self.host.exit_now(0 if self._shutdown else 1)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        return (yield from super().lsp_initialize(params))

    def _to_handler(self, method: str, params: Any) -> Handled:
        if (user_handler := self.fm.features.get(method)) is not None:
            yield user_handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Handled:
        yield from self._to_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Handled:
        yield from self._to_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Handled:
        yield from self._to_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(  # type: ignore[override]  # pygls runs a coroutine handler too
        self,
        params: types.ExecuteCommandParams,
    ) -> Any:
        handler = self.fm.commands.get(params.command)
        if handler is None:
            raise JsonRpcInvalidParams(message=f"unknown command {params.command!r}")
        await self.host.wait_for_configuration()
        return await handler(params)

    def structure_message(self, data: dict[str, Any]) -> Any:
        if isinstance(data, dict) and data.get("method") == types.WORKSPACE_EXECUTE_COMMAND and "id" in data:
            params = data.get("params")
            if not isinstance(params, dict):
                params = {}
            args = params.get("arguments")
            if isinstance(args, dict):  # the object itself instead of a one-element array: accept it
                params["arguments"] = [args]
            elif args is not None and not isinstance(args, list):
                self._send_response(
                    data["id"],
                    error=types.ResponseError(
                        code=JsonRpcInvalidParams.CODE,
                        message=f"{params.get('command')}: `arguments` must be an array holding one JSON object",
                    ),
                )
                return SimpleNamespace(jsonrpc="rejected")
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                cause = exc.__cause__
                detail = str(cause).splitlines()[0] if cause else "malformed parameters"
                self._send_response(
                    data["id"],
                    error=types.ResponseError(
                        code=JsonRpcInvalidParams.CODE,
                        message=f"invalid params for {data.get('method')!r}: {detail}"[:500],
                    ),
                )
                logger.warning("rejected malformed %s request", data.get("method"))
                return SimpleNamespace(jsonrpc="rejected")
            raise
