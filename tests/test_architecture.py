"""The shape of the house (SPEC section 2, ARCHITECTURE.md), checked on the source.

Every module of the shipped packages is parsed with `ast` and every import it makes is collected:
module level, inside functions (deferred), under `if TYPE_CHECKING`, relative ones resolved, and
`importlib.import_module("...")` with a literal name. The rules are asserted on those names; the
serve path's start-up imports are checked in a fresh interpreter.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("server", "benchmark", "sandbox")  # what pyproject ships
# I/O and editor-protocol modules the pure core must not reach for (COMMON standards, SPEC 2)
IMPURE = (
    "pygls",
    "lsprotocol",
    "subprocess",
    "socket",
    "http",
    "urllib",
    "httpx",
    "openai",
    "docker",
    "requests",
    "os",
    "pathlib",
    "shutil",
    "tempfile",
    "sandbox",
    "benchmark",
)
# what `benchmark` may take from `server`: the pure core, the dependency-free wire contract, and the
# one error type the console script reports (everything else goes over LSP)
BENCHMARK_MAY_USE = ("server.fidelity", "server.protocol", "server.errors")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@cache
def imports_of(name: str) -> frozenset[str]:
    """Every module `name` imports, anywhere in its file (a `from m import x` gives m when x is a name
    of m's, and m.x when x is a module)."""
    path = modules()[name]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            submodules = {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules()}
            found.update(submodules)
            if len(submodules) < len(node.names):  # `from pkg import mod` is `import pkg.mod` (pkg's names unused)
                found.add(target)
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in ("import_module", "__import__")
        ):
            found.add(node.args[0].value)
    return frozenset(found)


def _violations(source_prefix: str, forbidden) -> list[str]:
    out = []
    for name in modules():
        if _within(name, source_prefix):
            out += [f"{name} imports {t}" for t in sorted(imports_of(name)) if forbidden(t)]
    return out


def test_the_scan_sees_deferred_relative_and_typing_imports():
    """The collector can fail: it finds what a real module imports inside a function, under
    TYPE_CHECKING and through a relative import."""
    assert "sandbox" in imports_of("server.lsp.necessity.environment")  # `if TYPE_CHECKING:`
    assert "sandbox" in imports_of("server.lsp.necessity.analysis")  # inside a function
    relative = [
        n
        for n in modules()
        if any(isinstance(x, ast.ImportFrom) and x.level for x in ast.walk(ast.parse(modules()[n].read_text())))
    ]
    for name in relative:  # resolved to absolute names (none starts with a dot or is empty)
        assert all(t and not t.startswith(".") for t in imports_of(name)), name
    assert len(modules()) > 100


def test_server_imports_nothing_from_benchmark():
    assert _violations("server", lambda t: _within(t, "benchmark")) == []


def test_sandbox_imports_nothing_from_server_or_benchmark():
    assert _violations("sandbox", lambda t: _within(t, "server") or _within(t, "benchmark")) == []


def test_the_fidelity_core_is_pure():
    """server/fidelity: nothing from the LSP layer, the backends, benchmark or sandbox, and no I/O or
    editor-protocol library; of the wire contract only the report's Structs, which the core fills in."""
    assert (
        _violations(
            "server.fidelity",
            lambda t: (
                (_within(t, "server") and not any(_within(t, m) for m in ("server.fidelity", "server.protocol.report")))
                or any(_within(t, m) for m in IMPURE)
            ),
        )
        == []
    )


def test_the_wire_contract_depends_on_nothing_of_ours():
    """server/protocol: msgspec and the standard library only, so the core, the server, the benchmark and
    the generator of the extension's types all take it (and no import of it can close a cycle)."""
    assert _violations("server.protocol", lambda t: _within(t, "server") and not _within(t, "server.protocol")) == []
    assert (
        _violations("server.protocol", lambda t: any(_within(t, m) for m in IMPURE if m not in ("os", "pathlib"))) == []
    )


def test_benchmark_drives_the_server_over_lsp():
    """benchmark takes from server only the pure core, the wire contract and the error type."""
    assert (
        _violations("benchmark", lambda t: _within(t, "server") and not any(_within(t, ok) for ok in BENCHMARK_MAY_USE))
        == []
    )


def test_nothing_shipped_imports_the_tools():
    """tools/ (test doubles, speed scripts) is not shipped: no product module may need it."""
    assert _violations_in(list(modules()), lambda t: _within(t, "tools")) == []
    # the same scan over the same modules does see what they import (it once scanned nothing at all)
    assert len(_violations_in(list(modules()), lambda t: _within(t, "msgspec"))) > 20


def test_no_import_cycle_between_packages():
    edges: dict[str, set[str]] = {pkg: set() for pkg in PACKAGES}
    for name in modules():
        source = name.split(".")[0]
        edges[source] |= {t.split(".")[0] for t in imports_of(name)} & set(PACKAGES) - {source}

    def reaches(start: str, goal: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges[start])

    assert [pkg for pkg in PACKAGES if reaches(pkg, pkg)] == []


def test_views_import_no_handler():
    """Handlers use the views; a view reaching back into a handler makes a cycle between them."""
    views = [
        n
        for n in modules()
        if _within(n, "server.lsp")
        and not _within(n, "server.lsp.handlers")
        and n not in ("server.lsp", "server.lsp.app")
    ]  # create_server() registers the handlers: the one way in
    assert _violations_in(views, lambda t: _within(t, "server.lsp.handlers")) == []


def _violations_in(names, forbidden) -> list[str]:
    return [f"{n} imports {t}" for n in names for t in sorted(imports_of(n)) if forbidden(t)]


@pytest.mark.parametrize("entry", ["console script", "python -m server.lsp"])
def test_serve_starts_without_benchmark_or_the_sandbox_cli(entry: str):
    """What `edit-fidelity serve` loads before its first message: parse `serve` the way the console
    script (or `python -m server.lsp`) does, build the server, and list `sys.modules`."""
    parse = (
        "from server.cli import build_parser; build_parser(['serve']).parse_args(['serve'])"
        if entry == "console script"
        else "import argparse; from server import serve_cli; p = argparse.ArgumentParser(); "
        "serve_cli.register(p.add_subparsers()); p.parse_args(['serve'])"
    )
    code = (
        f"import json, sys; {parse}; from server.lsp import create_server; create_server(); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout)
    assert "server.lsp.server" in loaded and "server.serve_cli" in loaded  # it did build the server
    assert [m for m in loaded if _within(m, "benchmark") or _within(m, "sandbox.cli") or _within(m, "tools")] == []


def _wing(*names: str):
    return lambda t: any(_within(t, f"benchmark.{n}") for n in names)


def test_the_benchmark_wings_import_one_way():
    """benchmark/ in wings (ARCHITECTURE.md): the run imports no build, study or report module (the engine
    imports no study script), the report no build or study module, and nothing imports the `bench` command
    line (its argument types live in `benchmark.arg_types`)."""
    assert _violations("benchmark.run", _wing("build", "studies", "report")) == []
    assert _violations("benchmark.report", _wing("build", "studies")) == []
    importers = [n for n in modules() if n != "benchmark.cli"]
    assert _violations_in(importers, lambda t: _within(t, "benchmark.cli")) == []
    assert "benchmark.run.reference_free" in imports_of("benchmark.run.engine")  # the scan sees the engine's


MAX_LINES = 600
OVER_LIMIT_REASON = "# over 600 lines because"  # in a module's first 30 lines, followed by the reason


def test_no_module_over_600_lines_unless_it_says_why():
    """One module, one job: a module over 600 lines says why near its top, or is split."""
    tools = {f"tools/{p.relative_to(ROOT / 'tools')}": p for p in (ROOT / "tools").rglob("*.py")}
    files = {**modules(), **tools}
    long = {n: len(p.read_text(encoding="utf-8").splitlines()) for n, p in files.items()}
    assert len(long) > 100 and max(long.values()) > 300  # it read the real files
    unexplained = [
        f"{n}: {k} lines"
        for n, k in sorted(long.items())
        if k > MAX_LINES and OVER_LIMIT_REASON not in "\n".join(files[n].read_text(encoding="utf-8").splitlines()[:30])
    ]
    assert unexplained == []


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The circles of a graph: Tarjan's strongly connected components of more than one node, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = [stack.pop()]
            while component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(edges):
        if name not in index:
            visit(name)
    return found


def test_the_circle_finder_finds_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert _circles(graph) == [["d", "e"], ["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


# Import circles allowed to stand, each with why (issue 29: at most 3); none stands today.
CIRCLES_ALLOWED: dict[frozenset[str], str] = {}


def test_no_import_circle_outside_the_allow_list():
    """No circle of imports among the shipped modules (module level, deferred and TYPE_CHECKING alike; a
    package `__init__` that re-exports imports what it names) outside CIRCLES_ALLOWED, and no entry there
    that is no longer a circle. Gone: all of server/lsp, server/fidelity by stage, cli -> engine -> necessity
    study -> cli, recorded <-> CanItEdit's archive, the Ray judge <-> sessions, make-suite <-> its CLI, each
    suite package <-> its suite module, CanItEdit's download <-> problems, CodeEditorBench's prompts <-> tasks."""
    names = list(modules())
    edges = {n: {t for t in imports_of(n) if t in names and t != n} for n in names}
    circles = {frozenset(c) for c in _circles(edges)}
    assert sorted(sorted(c) for c in circles - set(CIRCLES_ALLOWED)) == []
    assert sorted(sorted(c) for c in set(CIRCLES_ALLOWED) - circles) == []
    assert len(CIRCLES_ALLOWED) <= 3
    # the scan sees deferred imports, a package's re-exports and TYPE_CHECKING imports as edges
    assert "benchmark.build.make_suite" in edges["benchmark.build.make_suite_cli"]
    assert "server.fidelity.measure" in edges["server.fidelity"]
    assert "benchmark.suites.canitedit.suite" in edges["benchmark.suites.canitedit"]
    assert "server.backends.local_backend" in edges["server.backends.pool"]  # imported under TYPE_CHECKING
