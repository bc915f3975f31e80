"""The sandbox's door to CPython's AST converter: the same process-wide lock as `server.fidelity.text.pyast`.

CPython 3.11 keeps the converter's recursion depth in state all threads share (gh-106905): two threads
converting at once make one raise `SystemError: AST constructor recursion depth mismatch`. The judge
parses answers (`scan`, `assemble`) and reads values (`checkers`) on the benchmark's event loop while
its worker threads measure with the fidelity core, so both must take one lock. sandbox may not import
server, and the core may not import sandbox: the lock lives on the `ast` module under one key, made by
whichever of the two modules is imported first (`dict.setdefault` is atomic). The reasons and what was
verified to need no lock are in server/fidelity/text/pyast.py; keep the two modules' mechanics identical
(tests/test_pyast_rule.py checks they share the lock and the wrapped `ast.parse`).
"""

from __future__ import annotations

import ast
import gc
import threading
from collections.abc import Callable
from functools import wraps
from types import TracebackType
from typing import Any, Literal, overload

_SHARED = vars(ast)
LOCK: threading.RLock = _SHARED.setdefault("_edit_fidelity_lock", threading.RLock())
_unlocked_parse: Callable[..., ast.AST] = _SHARED.setdefault("_edit_fidelity_unlocked_parse", ast.parse)


class _Held:
    """The lock, and no garbage collection until the block ends (its finalizers would be Python code)."""

    __slots__ = ("_collecting",)

    def __enter__(self) -> None:
        LOCK.acquire()
        self._collecting = gc.isenabled()
        if self._collecting:
            gc.disable()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._collecting:
            gc.enable()
        LOCK.release()


@overload
def parse(source: str | bytes, filename: str = ..., mode: Literal["exec"] = ...) -> ast.Module: ...
@overload
def parse(source: str | bytes, filename: str = ..., *, mode: Literal["eval"]) -> ast.Expression: ...
def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """`ast.parse`, one thread at a time."""
    with _Held():
        return _unlocked_parse(source, filename, mode)


def literal_eval(text: str) -> Any:
    """`ast.literal_eval` of a string: the parse locked, the evaluation (pure Python) not."""
    return ast.literal_eval(parse(text.lstrip(" \t"), mode="eval"))


def _locked(*args: Any, **kwargs: Any) -> ast.AST:
    with _Held():
        return _unlocked_parse(*args, **kwargs)


ast.parse = _SHARED.setdefault("_edit_fidelity_locked_parse", wraps(_unlocked_parse)(_locked))
