"""Validation of command arguments: every command takes one JSON object.

Malformed input raises `InvalidArgs` (JSON-RPC InvalidParams, -32602) with a message naming the
command and the field; document-level refusals use ContentModified (-32801) or RequestFailed
(-32803), as LSP defines them.
"""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

CONTENT_MODIFIED = -32801
REQUEST_FAILED = -32803


class InvalidArgs(JsonRpcInvalidParams):
    def __init__(self, command: str, message: str):
        super().__init__(message=f"{command}: {message}")


class ContentModified(JsonRpcException):
    CODE = CONTENT_MODIFIED


class RequestFailed(JsonRpcException):
    CODE = REQUEST_FAILED


def single_object(command: str, arguments: Any) -> dict:
    if arguments is None or (isinstance(arguments, (list, tuple)) and not arguments):
        raise InvalidArgs(command, "expects one JSON object argument, got none")
    if isinstance(arguments, dict):  # tolerated: some clients send the object itself
        return arguments
    if isinstance(arguments, (str, bytes)) or not isinstance(arguments, (list, tuple)):
        raise InvalidArgs(command, f"arguments must be an array holding one JSON object, got {_kind(arguments)}")
    if len(arguments) != 1:
        raise InvalidArgs(command, f"expects exactly one JSON object argument, got {len(arguments)}")
    obj = arguments[0]
    if not isinstance(obj, dict):
        raise InvalidArgs(command, f"the argument must be a JSON object, got {_kind(obj)}")
    return obj


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "an object"}.get(type(v), type(v).__name__)


def get_str(command: str, obj: dict, key: str, *, required: bool = True, nonempty: bool = True,
            max_len: int = 1_000_000) -> str | None:
    if key not in obj or obj[key] is None:
        if required:
            raise InvalidArgs(command, f"missing `{key}`")
        return None
    v = obj[key]
    if not isinstance(v, str):
        raise InvalidArgs(command, f"`{key}` must be a string, got {_kind(v)}")
    if nonempty and not v.strip():
        raise InvalidArgs(command, f"`{key}` must not be empty")
    if len(v) > max_len:
        raise InvalidArgs(command, f"`{key}` is too long ({len(v):,} characters, at most {max_len:,})")
    return v


def get_int(command: str, obj: dict, key: str, *, required: bool = True, lo: int = 0,
            hi: int = 2**31 - 1) -> int | None:
    if key not in obj or obj[key] is None:
        if required:
            raise InvalidArgs(command, f"missing `{key}`")
        return None
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
        raise InvalidArgs(command, f"`{key}` must be an integer, got {_kind(v)} {v!r}"[:200])
    v = int(v)
    if not lo <= v <= hi:
        raise InvalidArgs(command, f"`{key}` must be between {lo} and {hi}, got {v}")
    return v


def get_str_list(command: str, obj: dict, key: str) -> list[str] | None:
    if key not in obj or obj[key] is None:
        return None
    v = obj[key]
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        raise InvalidArgs(command, f"`{key}` must be an array of strings")
    if not v:
        raise InvalidArgs(command, f"`{key}` must not be empty (omit it to use every backend)")
    return list(dict.fromkeys(v))


def get_int_list(command: str, obj: dict, key: str) -> list[int] | None:
    if key not in obj or obj[key] is None:
        return None
    v = obj[key]
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise InvalidArgs(command, f"`{key}` must be an array of integers")
    if len(set(v)) != len(v):
        raise InvalidArgs(command, f"`{key}` has duplicates")
    return list(v)


def _position(command: str, v: Any, where: str) -> tuple[int, int]:
    if not isinstance(v, dict):
        raise InvalidArgs(command, f"`{where}` must be a position object {{line, character}}")
    out = []
    for k in ("line", "character"):
        x = v.get(k)
        if isinstance(x, bool) or not isinstance(x, int) or x < 0 or x > 2**31 - 1:
            raise InvalidArgs(command, f"`{where}.{k}` must be a non-negative integer, got {x!r}"[:200])
        out.append(x)
    return out[0], out[1]


def get_range(command: str, obj: dict, key: str = "range") -> tuple[tuple[int, int], tuple[int, int]] | None:
    if key not in obj or obj[key] is None:
        return None
    v = obj[key]
    if not isinstance(v, dict):
        raise InvalidArgs(command, f"`{key}` must be a range object {{start, end}}")
    start = _position(command, v.get("start"), f"{key}.start")
    end = _position(command, v.get("end"), f"{key}.end")
    if end < start:
        raise InvalidArgs(command, f"`{key}` ends before it starts")
    return start, end
