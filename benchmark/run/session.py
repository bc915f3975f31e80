"""The language server as the benchmark sees it: a real `python -m server.lsp` subprocess driven by
pygls' LanguageClient, exactly as an editor drives it (didOpen, `editFidelity.requestEdit`, didClose).

Replies are decoded here, once, into the wire contract's Structs (`server.protocol`: a proposal is a
`ProposalRecord`, its report a `FidelityReport`); everything after reads attributes."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any, Self, TypeVar

import msgspec
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from server.protocol.commands import NecessityRecord, ProposalRecord, RequestEditResult
from server.protocol.names import Command

logger = logging.getLogger(__name__)
R = TypeVar("R")

# document names carry the extension of their language, as an editor's would
EXTENSIONS = {"python": ".py", "javascript": ".js", "cpp": ".cpp", "java": ".java"}


class ServerError(Exception):
    """The language server failed one request (it answered with an error, or an answer the benchmark cannot
    use): that sample's error record, never the end of the run. `kind` is the record's `error_kind`."""

    kind = "internal"


class ServerGone(ServerError):
    """The server process exited, stopped answering, or could not be reached: the session is restarted
    and the requests it lost are error records of their samples."""

    kind = "server_exited"


class ServerUnavailable(Exception):
    """No language server can be had at all (it does not start, or dies at once every time): what no
    sample can survive, so the run ends in one line."""


def plain(value: Any) -> Any:
    """LSPAny results as plain JSON values (pygls may hand back attribute objects)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: plain(v) for k, v in vars(value).items()}
    return value


@functools.cache
def _pdeathsig_prefix() -> tuple[str, ...]:
    """`setpriv --pdeathsig KILL --`: the server dies with the benchmark even after kill -9 (pygls does
    not watch its client's process); empty where util-linux' setpriv lacks the option."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return ()
    try:
        helptext = subprocess.run([setpriv, "--help"], capture_output=True, text=True, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return (setpriv, "--pdeathsig", "KILL", "--") if "--pdeathsig" in helptext else ()


class ServerSession:
    def __init__(
        self,
        backends: list[dict],
        *,
        log_file: Path | None = None,
        command: list[str] | None = None,
        request_timeout_s: float = 900.0,
        start_timeout_s: float = 60.0,
        settings: dict[str, Any] | None = None,
        workspace_folders: Sequence[Path] = (),
    ) -> None:
        self.request_timeout_s = request_timeout_s
        self.start_timeout_s = start_timeout_s
        # `settings`: more editFidelity settings (a test command for analyzeNecessity); `workspace_folders`:
        # the folders the documents opened with a `path` live in (the necessity runs copy them)
        self.options = {"editFidelity": {"backends": backends, "observeChanges": False, **(settings or {})}}
        self.workspace_folders = list(workspace_folders)
        self.log_file = log_file
        self.command = command or [sys.executable, "-m", "server.lsp"]
        self.client = LanguageClient("edit-fidelity-bench", "1")
        self._seq = 0

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(params: Any) -> None:
            pass

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def _message(params: Any) -> None:
            pass

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def _log(params: Any) -> None:
            pass

        @self.client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
        def _lens(params: Any) -> None:
            return None

    async def __aenter__(self) -> Self:
        args = [*_pdeathsig_prefix(), *self.command]
        # stdout is the protocol and pygls never drains stderr: the log goes to a file
        args += ["--log-file", str(self.log_file or os.devnull), "--log-level", "WARNING"]
        await self.client.start_io(*args, env={**os.environ})
        try:
            await self._answer(
                self.client.initialize_async(
                    types.InitializeParams(
                        capabilities=types.ClientCapabilities(
                            workspace=types.WorkspaceClientCapabilities(apply_edit=True),
                            window=types.WindowClientCapabilities(work_done_progress=False),
                        ),
                        initialization_options=self.options,
                        workspace_folders=[
                            types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in self.workspace_folders
                        ]
                        or None,
                    )
                ),
                self.start_timeout_s,
                "initialize",
            )
        except BaseException:
            await self.client.stop()
            raise
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, *exc: object) -> None:
        proc = getattr(self.client, "_server", None)
        try:
            if self.alive:
                await asyncio.wait_for(self.client.shutdown_async(None), 10)
                self.client.exit(None)
                if proc is not None:
                    await asyncio.wait_for(proc.wait(), 10)
        except Exception as err:  # noqa: BLE001  # gone, hung or slow to go: killed below either way
            logger.debug("server shutdown: %s", err)
        finally:
            if proc is not None and proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()  # pygls' stop() waits for the process, which a hung server never ends
            await self.client.stop()

    async def _answer(self, request: Awaitable[Any], timeout_s: float, what: str) -> Any:
        """The request's answer, or ServerError when the server exits or stays silent past the timeout."""
        task = asyncio.ensure_future(request)
        proc = getattr(self.client, "_server", None)
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.5)
            if done:
                try:
                    return task.result()
                except (RuntimeError, ConnectionError, BrokenPipeError) as exc:  # pygls: "Server process N exited..."
                    raise ServerGone(f"{what}: {exc}") from exc
            if proc is not None and proc.returncode is not None:
                task.cancel()
                raise ServerGone(f"{what}: the language server exited with status {proc.returncode}")
            if asyncio.get_running_loop().time() > deadline:
                task.cancel()
                raise ServerGone(f"{what}: no answer from the language server in {timeout_s:.0f} s")

    @property
    def alive(self) -> bool:
        proc = getattr(self.client, "_server", None)
        return proc is not None and proc.returncode is None and not self.client.stopped

    def _gone(self, what: str, exc: BaseException) -> ServerGone:
        """The error for a request the client could not even send: say why when the server exited."""
        proc = getattr(self.client, "_server", None)
        if proc is not None and proc.returncode is not None:
            return ServerGone(f"{what}: the language server exited with status {proc.returncode}")
        return ServerGone(f"{what} failed: {exc}")

    async def execute(self, command: str, args: dict, *, what: str | None = None) -> Any:
        """`workspace/executeCommand` with one JSON object; the result as plain JSON values."""
        what = what or command
        try:
            request = self.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=command, arguments=[args])
            )
        except Exception as exc:  # pygls: "Client has been stopped."
            raise self._gone(what, exc) from exc
        try:
            return plain(await self._answer(request, self.request_timeout_s, what))
        except ServerError:
            raise
        except Exception as exc:
            raise ServerError(f"{what} failed: {exc}") from exc

    def open(self, text: str, *, name: str, language: str = "python", path: Path | None = None) -> str:
        """Open `text` as a fresh document (at `path`, a file of a workspace folder, when given); its uri."""
        self._seq += 1
        uri = (
            path.as_uri()
            if path
            else f"file:///edit-fidelity-bench/{self._seq}/{name}{EXTENSIONS.get(language, '.txt')}"
        )
        try:
            self.client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
                )
            )
        except Exception as exc:  # the server is gone
            raise self._gone("didOpen", exc) from exc
        return uri

    def close(self, uri: str) -> None:
        try:
            self.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
        except Exception as err:  # noqa: BLE001  # the server is gone; the request's error says so
            logger.debug("didClose: %s", err)

    async def request_edit(
        self,
        text: str,
        instruction: str,
        backend: str,
        *,
        name: str,
        gold: str | None = None,
        style: str | None = None,
        language: str = "python",
        uri: str | None = None,
    ) -> ProposalRecord:
        """Open `text` as a fresh document, send requestEdit to one backend, close it; the proposal.

        `gold` is the benchmark-only reference edit: the server then reports excess over it. With `uri` (a
        document the caller opened with `open`) the document stays open: the proposal stays pending.
        """
        return (
            await self.request_edits(
                text, instruction, backend, name=name, gold=gold, style=style, language=language, uri=uri
            )
        )[0]

    async def request_edits(
        self,
        text: str,
        instruction: str,
        backend: str,
        *,
        name: str,
        n: int = 1,
        gold: str | None = None,
        style: str | None = None,
        language: str = "python",
        answer_language: str | None = None,
        uri: str | None = None,
    ) -> list[ProposalRecord]:
        """`n` samples from one backend in one request (the endpoint's `n`): n proposals, or one error proposal."""
        owned = uri is None
        uri = uri or self.open(text, name=name, language=language)
        args: dict[str, Any] = {
            "uri": uri,
            "version": 1,
            "instruction": instruction,
            "backends": [backend],
            "gold": gold,
        }
        if style is not None:
            args["style"] = style
        if n > 1:
            args["n"] = n
        if answer_language is not None:
            args["answerLanguage"] = answer_language
        try:
            result = await self.execute(Command.REQUEST_EDIT.value, args, what="requestEdit")
        finally:
            if owned:
                self.close(uri)
        proposals = decoded(result or {"proposals": []}, RequestEditResult, "requestEdit").proposals
        if not (len(proposals) == n or len(proposals) == 1 and proposals[0].status != "ok"):
            raise ServerError(f"requestEdit returned {len(proposals)} proposals, expected {n}")
        return proposals

    async def analyze_necessity(self, proposal_id: str) -> NecessityRecord:
        """`editFidelity.analyzeNecessity` of a pending proposal: which of its units the tests need."""
        result = await self.execute(Command.ANALYZE_NECESSITY.value, {"id": proposal_id}, what="analyzeNecessity")
        return decoded(result, NecessityRecord, "analyzeNecessity")


def decoded(value: Any, typ: type[R], what: str) -> R:
    """A reply as the contract's Struct; a reply that does not fit it is the server's failure of that request."""
    try:
        return msgspec.convert(value, typ)
    except msgspec.ValidationError as exc:
        raise ServerError(f"{what}: the server's answer does not fit the protocol: {exc}") from exc
