"""`server.fidelity.text.pyast`: `ast.parse` and `ast.literal_eval` as they were, one thread at a time."""

from __future__ import annotations

import ast
import gc
import threading
import warnings

import pytest

from server.fidelity.text import pyast

SOURCE = "def f(a, *, b=1):\n    '''doc'''\n    return [x async for x in a] if b else {1: (2,)}\n"


def test_parse_gives_the_tree_ast_parse_gives():
    assert ast.dump(pyast.parse(SOURCE), include_attributes=True) == ast.dump(
        vars(ast)["_edit_fidelity_unlocked_parse"](SOURCE), include_attributes=True
    )
    assert isinstance(pyast.parse("x + 1", mode="eval"), ast.Expression)
    with pytest.raises(SyntaxError) as caught:
        pyast.parse("def f(:\n", "<unit>")
    assert caught.value.filename == "<unit>"


@pytest.mark.parametrize("text", ["  [1, (2, 'x'), {3: None}]", "-1.5e3", "b'\\x00'", "'a' 'b'", "True"])
def test_literal_eval_is_ast_literal_eval(text):
    assert pyast.literal_eval(text) == ast.literal_eval(text)


@pytest.mark.parametrize(("text", "error"), [("f(1)", ValueError), ("[1,", SyntaxError), ("\t 1", None)])
def test_literal_eval_fails_as_ast_literal_eval_does(text, error):
    if error is None:
        assert pyast.literal_eval(text) == ast.literal_eval(text) == 1
        return
    with pytest.raises(error):
        ast.literal_eval(text)
    with pytest.raises(error):
        pyast.literal_eval(text)


def test_the_lock_and_collection_are_given_back_on_every_path():
    assert gc.isenabled()
    with pytest.raises(SyntaxError):
        pyast.parse("(")
    assert gc.isenabled() and not pyast.LOCK._is_owned()  # type: ignore[attr-defined]
    with pyast.held():
        assert not gc.isenabled()
        with pyast.held():  # reentrant: radon's own `ast.parse` inside `held()` takes it again
            ast.parse("x")
        assert not gc.isenabled()  # the outermost block turns collection back on, not an inner one
    assert gc.isenabled()
    gc.disable()
    try:
        pyast.parse("x")
        assert not gc.isenabled()  # collection off before stays off
    finally:
        gc.enable()


def test_another_thread_waits_while_the_lock_is_held():
    done = threading.Event()
    worker = threading.Thread(target=lambda: (pyast.parse("x"), done.set()))
    with pyast.held():
        worker.start()
        assert not done.wait(0.2)
    assert done.wait(10)
    worker.join()


def test_quiet_keeps_the_parsers_warnings_and_the_filters_as_they_were():
    filters = list(warnings.filters)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pyast.parse("s = '\\d'\n", quiet=True)
        assert seen == []
        pyast.parse("s = '\\d'\n")
        assert [w.category for w in seen] == [DeprecationWarning]
    assert warnings.filters == filters


def test_ast_parse_itself_is_locked_for_the_callers_we_do_not_own(monkeypatch):
    """traceback (3.11 parses caret lines), inspect, radon: they call `ast.parse` by attribute."""
    assert ast.parse is vars(ast)["_edit_fidelity_locked_parse"]
    seen = []
    real = vars(ast)["_edit_fidelity_unlocked_parse"]

    def spy(*args, **kwargs):
        seen.append(pyast.LOCK._is_owned())  # type: ignore[attr-defined]
        return real(*args, **kwargs)

    # the wrapper the first of the two pyast modules installed calls its own module's name
    monkeypatch.setitem(ast.parse.__globals__, "_unlocked_parse", spy)
    ast.parse("x", type_comments=True)
    ast.literal_eval("1")
    assert seen == [True, True]
