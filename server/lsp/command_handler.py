"""One protocol for every `workspace/executeCommand` handler, dispatched by the wire contract's table.

A handler is a `name` (a `Command`) and `run(ls, args, work_done) -> result`: `args` already decoded
as `server.protocol.COMMANDS` says for that name, the result the Struct the table names, encoded here
(`msgspec.to_builtins`, the wire's camelCase). `register_commands` reads the table, checks that each
handler's `run` is annotated with exactly the table's types (a server whose handlers disagree with the
contract does not start), and registers one executor per command with pygls, so `initialize` lists
them. Malformed arguments are refused before a handler runs (`server.lsp.args.decode`: InvalidParams).
"""

from __future__ import annotations

import typing
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

import msgspec
from lsprotocol import types

from server.lsp.args import decode
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.protocol.commands import COMMANDS, NoArgs
from server.protocol.names import Command

ArgsT = TypeVar("ArgsT", contravariant=True)
ResultT = TypeVar("ResultT", covariant=True)


class CommandHandler(Protocol[ArgsT, ResultT]):
    """One command: its name, and what it does with its decoded arguments (`work_done`: the client's
    progress token, for the long ones)."""

    @property
    def name(self) -> Command: ...

    async def run(self, ls: EditFidelityServer, args: ArgsT, work_done: WorkDoneToken) -> ResultT: ...


Executor = Callable[[EditFidelityServer, types.ExecuteCommandParams], Awaitable[Any]]


def register_commands(ls: EditFidelityServer, handlers: Sequence[CommandHandler[Any, Any]]) -> None:
    """Each handler under its name, in the order given (the order `initialize` lists the commands): one
    for every command of the table, and no other."""
    names = [h.name for h in handlers]
    if sorted(names) != sorted(COMMANDS) or len(set(names)) != len(names):
        raise TypeError(f"one handler per command of server.protocol.COMMANDS, not {[str(n) for n in names]}")
    for handler in handlers:
        args_type, result_type = COMMANDS[handler.name]
        _check_contract(handler, args_type, result_type)
        ls.command(handler.name.value)(_executor(handler, args_type))


def _check_contract(handler: CommandHandler[Any, Any], args_type: type, result_type: type) -> None:
    hints = typing.get_type_hints(handler.run)
    if hints.get("args") is not args_type or hints.get("return") is not result_type:
        raise TypeError(
            f"{type(handler).__name__}.run for {handler.name.value} must take {args_type.__name__} and return "
            f"{result_type.__name__} (server.protocol.COMMANDS), not {hints.get('args')} -> {hints.get('return')}"
        )


def _executor(handler: CommandHandler[Any, Any], args_type: type) -> Executor:
    name = handler.name.value

    async def execute(ls: EditFidelityServer, params: types.ExecuteCommandParams) -> Any:
        # listBackends and serverStats take nothing: whatever a client sends them is not read
        args = NoArgs() if args_type is NoArgs else decode(name, params.arguments, args_type)
        return msgspec.to_builtins(await handler.run(ls, args, params.work_done_token))

    return execute
