"""Shipped code reaches CPython's AST converter only through the one process-wide lock.

CPython 3.11 shares the converter's recursion depth between threads (gh-106905); `server/fidelity/text/pyast.py`
and `sandbox/pyast.py` hold one lock around it. Checked on the source of every shipped module (with
`ast`): no `ast.parse` / `ast.literal_eval` (as calls or as values), no `compile()` with flags (the
converter runs for `PyCF_ONLY_AST`; `compile()` of source or of a tree to code was measured not to
touch the shared depth), no radon entry point that parses for itself outside `with pyast.held():`.
And at run time: every AST-only compile in the language server's compute pool, the benchmark's
worker threads and the judge happens with the lock held by the thread doing it.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("server", "benchmark", "sandbox")
OWNERS = {"server/fidelity/text/pyast.py", "sandbox/pyast.py"}
# the judged program's own harness: text the judge runs inside the sandbox (one program, its own
# process), never imported by the packages
NOT_IMPORTED = ("sandbox/judge/harness/",)
CONVERTER = {"parse", "literal_eval", "PyCF_ONLY_AST"}
RADON_PARSERS = {"from_code", "cc_visit", "h_visit", "mi_visit", "code2ast"}


def _held_lines(nodes: list[ast.AST]) -> set[int]:
    """Lines inside `with ...held():` blocks."""
    lines: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.With | ast.AsyncWith) and any(
            isinstance(item.context_expr, ast.Call)
            and getattr(item.context_expr.func, "attr", getattr(item.context_expr.func, "id", None)) == "held"
            for item in node.items
        ):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def converter_uses(source: str, filename: str = "<source>") -> list[str]:
    """`line: what` for each way the source reaches the converter without the lock."""
    nodes = list(ast.walk(ast.parse(source, filename)))
    imports = [n for n in nodes if isinstance(n, ast.Import)]
    ast_names = {a.asname or a.name for n in imports for a in n.names if a.name in ("ast", "_ast")}
    uses_radon = any(a.name.split(".")[0] == "radon" for n in imports for a in n.names) or any(
        isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "radon" for n in nodes
    )
    held = _held_lines(nodes) if uses_radon else set()
    found: list[str] = []
    for node in nodes:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom) and node.module in ("ast", "_ast"):
            found += [f"{line}: from {node.module} import {a.name}" for a in node.names if a.name in CONVERTER]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ast_names
            and node.attr in CONVERTER
        ):
            found.append(f"{line}: {node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name) and node.id == "PyCF_ONLY_AST":
            found.append(f"{line}: PyCF_ONLY_AST")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "compile":
            flags = (
                node.args[3] if len(node.args) > 3 else next((k.value for k in node.keywords if k.arg == "flags"), None)
            )
            if flags is not None and not (isinstance(flags, ast.Constant) and flags.value == 0):
                found.append(f"{line}: compile(..., flags={ast.unparse(flags)})")
        elif isinstance(node, ast.Call) and uses_radon and line not in held:
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            if name in RADON_PARSERS:
                found.append(f"{line}: radon {name}() outside pyast.held()")
    return sorted(found, key=lambda s: int(s.split(":")[0]))


def shipped_files() -> Iterator[tuple[str, Path]]:
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in OWNERS and not rel.startswith(NOT_IMPORTED):
                yield rel, path


def test_the_scan_finds_every_way_in():
    """The scanner can fail: each unlocked form is reported, the locked and converter-free ones are not."""
    source = """
import ast as A
import re
from ast import literal_eval, parse as p
from radon.visitors import ComplexityVisitor
from server.fidelity.text import pyast

A.parse(x)
handlers = (json.loads, A.literal_eval)
compile(x, "f", "exec", flags=1024)
compile(x, "f", "exec", A.PyCF_ONLY_AST)
ComplexityVisitor.from_code(x)

pyast.parse(x)
pyast.literal_eval(x)
compile(x, "f", "exec")
compile(tree, "f", "exec", dont_inherit=True)
compile(x, "f", "exec", flags=0)
re.compile("x")
with pyast.held():
    ComplexityVisitor.from_code(x)
"""
    assert converter_uses(source) == [
        "4: from ast import literal_eval",
        "4: from ast import parse",
        "8: A.parse",
        "9: A.literal_eval",
        "10: compile(..., flags=1024)",
        "11: compile(..., flags=A.PyCF_ONLY_AST)",
        "11: A.PyCF_ONLY_AST",
        "12: radon from_code() outside pyast.held()",
    ]


def test_shipped_code_reaches_the_converter_only_through_the_lock():
    found = [f"{rel}:{use}" for rel, path in shipped_files() for use in converter_uses(path.read_text(), rel)]
    assert found == [], "use server.fidelity.text.pyast (sandbox: sandbox.pyast) instead:\n" + "\n".join(found)
    assert sum(1 for _ in shipped_files()) > 100


def test_one_lock_for_every_package_whichever_is_imported_first():
    """sandbox first, in a fresh interpreter: the core's module takes the lock and the wrapped `ast.parse`
    the sandbox's made (here, both are already imported)."""
    code = (
        "import ast, sandbox.pyast as s; wrapped = ast.parse; import server.fidelity.text.pyast as f; "
        "print(s.LOCK is f.LOCK, ast.parse is wrapped, ast.parse is not f._unlocked_parse, "
        "f._unlocked_parse is s._unlocked_parse, ast.parse.__wrapped__ is f._unlocked_parse)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["True"] * 5, done.stderr
    from sandbox import pyast as sandbox_pyast
    from server.fidelity.text import pyast

    assert sandbox_pyast.LOCK is pyast.LOCK
    assert ast.parse is vars(ast)["_edit_fidelity_locked_parse"]


@pytest.fixture
def unlocked_compiles(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[int]]:
    """AST-only compiles made without the lock held by their thread (`ast.parse` looks up `compile` in
    builtins at each call, so the spy sees every parse), and the count of all of them."""
    from server.fidelity.text import pyast

    real = builtins.compile
    bad: list[str] = []
    seen = [0]

    def spy(source: Any, filename: Any, mode: str, flags: int = 0, *args: Any, **kwargs: Any) -> Any:
        if flags & ast.PyCF_ONLY_AST:
            seen[0] += 1
            if not pyast.LOCK._is_owned():  # type: ignore[attr-defined]
                bad.append(f"{threading.current_thread().name}: {filename}")
        return real(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", spy)
    return bad, seen


def test_the_spy_sees_an_unlocked_parse(unlocked_compiles):
    bad, seen = unlocked_compiles
    thread = threading.Thread(target=compile, args=("x = 1", "<direct>", "exec", ast.PyCF_ONLY_AST), name="direct")
    thread.start()
    thread.join()
    assert bad == ["direct: <direct>"] and seen == [1]


def test_server_pool_benchmark_threads_and_judge_parse_under_the_lock(
    unlocked_compiles, canitedit_problems, overedit_tasks
):
    """The compute pool (`ls.compute`), the engine's `asyncio.to_thread` work (a suite's completion
    metrics) and the judge's scans and value reads on the loop, all at once."""
    from benchmark.suites.overedit.fidelity import normalised_flags
    from benchmark.suites.overedit.tasks import Task
    from sandbox.judge import describe, read_value
    from sandbox.judge.model import Program
    from server.backends.extract import extract_code
    from server.fidelity import measure
    from server.fidelity.text import chunks
    from server.fidelity.text.analysis import ANALYSIS_CACHE
    from server.lsp import create_server

    bad, seen = unlocked_compiles
    ANALYSIS_CACHE.clear()
    chunks.clear_cache()
    problems = canitedit_problems[:6]
    tasks = [msgspec.convert(t, Task) for t in overedit_tasks[:6]]

    async def drive() -> None:
        ls = create_server()
        try:
            pool = [ls.compute(measure, p["before"], p["after"]) for p in problems]
            threads = [asyncio.to_thread(normalised_flags, t, "explicit", t.after) for t in tasks]
            pending = asyncio.gather(*pool, *threads)
            for t in tasks:  # the judge's work on the loop thread meanwhile
                describe(Program(source=t.after, language="python"))
                read_value("[1, 'two', (3,)]")
                extract_code(f"```python\n{t.after}\n```")
                await asyncio.sleep(0)
            await pending
        finally:
            ls.shutdown_resources()

    asyncio.run(drive())
    assert seen[0] > 50  # the spy watched real parses
    assert bad == []
