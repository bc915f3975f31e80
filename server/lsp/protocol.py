"""The LSP protocol class, adjusted in five places.

- `workspace/executeCommand` runs the command coroutine as the request's own task, so that
  `$/cancelRequest` cancels it (pygls' generator-based dispatcher would cancel only a wrapper
  future and leave the backend calls running).
- Position encoding is always UTF-16 (mandatory for every client; fidelity edits are UTF-16).
- A request whose params do not even deserialize gets an InvalidParams answer instead of silence.
- A notification's handler future leaves `_request_futures` when it is done (pygls 2 files it under a
  fresh uuid and never removes it: ~3 KB per didOpen/didChange/didClose, without bound).
- Documents count lines as LSP does (\n, \r\n, \r): pygls applies an incremental change over
  `str.splitlines`, which also ends lines at \f, \v, \x1c-\x1e, \x85, U+2028 and U+2029, so a
  change below a form feed would land elsewhere than in the editor's copy.
- `exit` ends the process at once (`EditFidelityServer.exit_now`), with status 0 after `shutdown` and
  1 without: pygls' `sys.exit` there was swallowed by its own IO loop (always 0) and then waited for
  every worker thread and the interpreter's teardown (1.3 s idle, 3.2 s on a busy machine).
"""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.workspace import TextDocument, Workspace

from server.fidelity.analysis import split_lines

if TYPE_CHECKING:
    from server.lsp.server import EditFidelityServer

logger = logging.getLogger(__name__)


class LspTextDocument(TextDocument):
    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(split_lines(self.source))


class LspWorkspace(Workspace):
    def _create_text_document(
        self, doc_uri: str, source: str | None = None, version: int | None = None, language_id: str | None = None
    ) -> TextDocument:
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


class FidelityProtocol(LanguageServerProtocol):
    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        if callback == self._check_handler_result:  # a notification: nobody answers it, so nobody pops it
            futures = self._request_futures

            def done(future, key=msg_id, inner=callback):
                # A cancelled one stays: shutdown cancels while it iterates over the dict (synchronous callbacks)
                if not future.cancelled() and futures.get(key) is future:
                    del futures[key]
                inner(future)

            callback = done
        return super()._execute_handler(msg_id, handler, callback, args, kwargs)

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> None:  # type: ignore[override]  # ends the process, yields to nobody
        cast("EditFidelityServer", self._server).exit_now(0 if self._shutdown else 1)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        general = params.capabilities.general
        if general is not None and general.position_encodings:
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        result = yield from super().lsp_initialize(params)
        ws = self._workspace  # made by pygls' initialize, before any document: the same, LSP-lined
        assert ws is not None
        self._workspace = LspWorkspace(ws.root_uri, ws._sync_kind, list(ws.folders.values()), ws.position_encoding)
        return result

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(  # type: ignore[override]  # pygls runs a coroutine handler too
        self,
        params: types.ExecuteCommandParams,
    ) -> Any:
        handler = self.fm.commands.get(params.command)
        if handler is None:
            raise JsonRpcInvalidParams(message=f"unknown command {params.command!r}")
        await cast("EditFidelityServer", self._server).wait_for_configuration()  # the server this protocol serves
        return await handler(params)

    def structure_message(self, data: dict[str, Any]):
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
