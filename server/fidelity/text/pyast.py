"""The one door to CPython's AST converter: every parse in server/ and benchmark/ goes through here.

CPython 3.11 keeps the converter's recursion depth (C tree to `ast` objects: `ast.parse`, hence
`ast.literal_eval` and radon's `from_code`) in state the whole interpreter shares (python/cpython
gh-106905). The converter runs no Python code of its own, so it keeps the GIL, except when an
allocation starts a garbage collection whose finalizers or weakref callbacks are Python code: another
thread may parse there, reset the shared depth, and one of the two raises `SystemError: AST
constructor recursion depth mismatch`. The trees are built right; only that check fails (or the depth
limit: a RecursionError, which callers take for "does not parse", so a wrong report). Seen here on
3.11.7 (not on 3.10, 3.12.1, 3.13.0, where the lock is merely harmless: no parse releases the GIL).

So one process-wide RLock is held exactly around each conversion, with garbage collection held off
inside it: the holder then runs no Python code, so no unlocked parse elsewhere can interleave with it,
and no finalizer can make it wait for another lock while other threads wait for this one. The lock
lives on the `ast` module (the owner of the state it guards), so `sandbox.pyast`, which may not import
server, takes the same one; `ast.parse` itself is wrapped the same way, for the callers we do not own
(on 3.11 `traceback` parses every caret line it formats, `inspect.signature` parses builtins' text
signatures). tests/test_pyast_rule.py keeps shipped code from calling the converter directly.

Verified not to touch the shared depth, so not locked: `compile()` of source or of an `ast` tree to
code (the compiler's depth counters are per call; reading a tree back uses the thread's own recursion
counter), `ast.unparse` (pure Python), tree-sitter, complexipy (Rust), radon's `from_ast` and `radon.raw`.
"""

from __future__ import annotations

import ast
import gc
import threading
import warnings
from collections.abc import Callable
from functools import wraps
from types import TracebackType
from typing import Any, Literal, overload

_SHARED = vars(ast)  # dict.setdefault is atomic: the first importer's objects win, in every package
LOCK: threading.RLock = _SHARED.setdefault("_edit_fidelity_lock", threading.RLock())
_unlocked_parse: Callable[..., ast.AST] = _SHARED.setdefault("_edit_fidelity_unlocked_parse", ast.parse)


class _Held:
    """`with held():` the lock, and no garbage collection until the block ends (reentrant)."""

    __slots__ = ("_collecting",)

    def __enter__(self) -> None:
        LOCK.acquire()
        self._collecting = gc.isenabled()  # False in a nested block: only the outermost turns it back on
        if self._collecting:
            gc.disable()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._collecting:
            gc.enable()
        LOCK.release()


def held() -> _Held:
    """Around third-party code that parses with the converter (radon's `from_code`, `mi_visit`)."""
    return _Held()


@overload
def parse(
    source: str | bytes, filename: str = ..., mode: Literal["exec"] = ..., *, quiet: bool = ...
) -> ast.Module: ...
@overload
def parse(source: str | bytes, filename: str = ..., *, mode: Literal["eval"], quiet: bool = ...) -> ast.Expression: ...
def parse(source: str | bytes, filename: str = "<unknown>", mode: str = "exec", *, quiet: bool = False) -> ast.AST:
    """`ast.parse`, one thread at a time. `quiet`: the parser's warnings about user code (invalid
    escapes) are not ours to show; `catch_warnings` swaps process-wide filters, so it runs under the lock."""
    with _Held():
        if not quiet:
            return _unlocked_parse(source, filename, mode)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _unlocked_parse(source, filename, mode)


def literal_eval(text: str) -> Any:
    """`ast.literal_eval` of a string: the parse locked, the evaluation (pure Python) not."""
    return ast.literal_eval(parse(text.lstrip(" \t"), mode="eval"))


def _locked(*args: Any, **kwargs: Any) -> ast.AST:
    with _Held():
        return _unlocked_parse(*args, **kwargs)


ast.parse = _SHARED.setdefault("_edit_fidelity_locked_parse", wraps(_unlocked_parse)(_locked))
