"""Command arguments: every command takes one JSON object, decoded against its protocol Struct.

Malformed input raises `InvalidArgs` (JSON-RPC InvalidParams, -32602) with a message naming the
command and the field (server.protocol.decode says which); document-level refusals use
ContentModified (-32801) or RequestFailed (-32803), as LSP defines them.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from server.lsp.state import DocState
from server.lsp.store import Store
from server.protocol.decode import DecodeError, convert, json_kind
from server.protocol.report import Range

CONTENT_MODIFIED = -32801
REQUEST_FAILED = -32803

T = TypeVar("T")


class InvalidArgs(JsonRpcInvalidParams):
    def __init__(self, command: str, message: str) -> None:
        super().__init__(message=f"{command}: {message}")


class ContentModified(JsonRpcException):
    CODE = CONTENT_MODIFIED


class RequestFailed(JsonRpcException):
    CODE = REQUEST_FAILED


def decode(command: str, arguments: object, typ: type[T]) -> T:
    """The command's one argument object as `typ`; a null field counts as absent."""
    obj = single_object(command, arguments)
    try:
        return convert({k: v for k, v in obj.items() if v is not None}, typ)
    except DecodeError as exc:
        raise InvalidArgs(command, str(exc)) from None


def single_object(command: str, arguments: object) -> dict[str, Any]:
    if arguments is None or (isinstance(arguments, (list, tuple)) and not arguments):
        raise InvalidArgs(command, "expects one JSON object argument, got none")
    if isinstance(arguments, dict):  # tolerated: some clients send the object itself
        return arguments
    if isinstance(arguments, (str, bytes)) or not isinstance(arguments, (list, tuple)):
        raise InvalidArgs(command, f"arguments must be an array holding one JSON object, got {json_kind(arguments)}")
    if len(arguments) != 1:
        raise InvalidArgs(command, f"expects exactly one JSON object argument, got {len(arguments)}")
    obj = arguments[0]
    if not isinstance(obj, dict):
        raise InvalidArgs(command, f"the argument must be a JSON object, got {json_kind(obj)}")
    return obj


def span(rng: Range | None) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """A decoded `Range` as ((line, character), (line, character))."""
    if rng is None:
        return None
    return (rng.start.line, rng.start.character), (rng.end.line, rng.end.character)


def named_document(store: Store, command: str, uri: str) -> DocState:
    """The open document the argument `uri` names; InvalidParams naming it otherwise."""
    state = store.document(uri)
    if state is None:
        raise InvalidArgs(command, f"unknown document {uri!r}")
    return state
