"""Every `edit-fidelity` subcommand, found from the CLI's own parsers (so a new one is covered without
editing this file), each case in its own process running the console script's `main` (forked from the
test, which imported the modules once: a fresh interpreter per case would spend most of the time in
imports), with bad inputs: missing files, directories, garbage, unknown flags, bad numbers and choices.
None may print a traceback or reach the dispatcher's last-resort guard; a usage error exits 2 with one
line. The cases named in the issue run through the installed console script in test_check_cli.py and
tests/benchmark/test_recorded_errors.py; serve's port in use below."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import pytest

from server.cli import build_parser

EXE = Path(sys.executable).parent / "edit-fidelity"
CASE_TIMEOUT_S = 90  # a bad input is refused in seconds; one that runs on is a failure too


def walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, bool]]:
    """(command path, its parser, is a leaf) for every node under `parser`."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    yield path, parser, not subs
    for action in subs:
        for name, child in action.choices.items():
            yield from walk(child, (*path, name))


NODES = list(walk(build_parser()))
LEAVES = {path: parser for path, parser, leaf in NODES if leaf}

# Inputs that pass the parser, so each bad option below is judged on its own rather than hidden behind
# an error in a required argument. Placeholders: {a} {b} (valid Python files), {out} (a fresh path),
# {data} (an empty data directory), {dir} (an empty directory). A leaf not listed gets its required
# arguments filled with a garbage file.
BASES: dict[tuple[str, ...], list[str]] = {
    ("check",): ["{a}", "{b}"],
    ("serve",): [],
    ("bench", "run"): ["--suite", "canitedit", "--backend", "gold", "--out", "{out}", "--data", "{data}"],
    ("bench", "make-suite"): ["--from", "{dir}", "--out", "{out}"],
    ("sandbox", "run"): ["{a}"],
    # a valid name would download a model (a gigabyte): each bad option is judged beside an unknown name;
    # a download's own failures (resume, checksum, no source) are tested in tests/server/test_local_models.py
    ("model", "fetch"): ["no-such-model"],
}
# for options whose value is a spec rather than a path
EXTRA_VALUES: dict[str, list[str]] = {
    "--backend": ["recorded:{garbage}", "recorded:{missing}", "recorded:{dir}", "recorded:{json}", "recorded:"],
    "--suite-option": ["novalue", "=x"],
    "--target": ["9:1", "x"],
    "--conditions": [",", "nosuch"],
}


@dataclass
class Case:
    argv: list[str]
    usage: bool = False  # argparse must refuse it: exit 2
    notes: list[str] = field(default_factory=list)


def _value_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
        and a.nargs != 0
        and a.help != argparse.SUPPRESS
    ]


def _filled(action: argparse.Action, garbage: str) -> list[str]:
    if action.choices:
        return [str(next(iter(action.choices)))]
    if action.type in (int, float):
        return ["1"]
    return [garbage]


PATHS = ["{missing}", "{dir}", "{garbage}", "{json}"]
PATHLIKE = (
    "file",
    "dir",
    "data",
    "path",
    "out",
    "from",
    "gold",
    "html",
    "stdin",
    "wheels",
    "original",
    "edited",
    "paths",
    "suite",
)


def _takes_a_path(a: argparse.Action) -> bool:
    return a.type is Path or any(word in a.dest for word in PATHLIKE)


def cases(path: tuple[str, ...], parser: argparse.ArgumentParser) -> list[Case]:
    actions = _value_actions(parser)
    if path in BASES:
        base = BASES[path]
    else:  # the required arguments, each a garbage file (or a valid choice / number)
        base = []
        for a in actions:
            if a.option_strings and a.required:
                base += [a.option_strings[0], *_filled(a, "{garbage}")]
            elif not a.option_strings and a.nargs not in ("?", "*"):
                base += _filled(a, "{garbage}")
    out = [Case([*path, *base, "--no-such-flag"], usage=True)]
    if path not in BASES:
        out.append(Case([*path, *base]))
    positional_at = 0
    for a in actions:
        if not a.option_strings:  # a positional: replace the base's value in its place, or add one
            for v in [*PATHS, "{empty}", ""]:
                argv = list(base)
                if positional_at < len(argv) and not argv[positional_at].startswith("-"):
                    argv[positional_at] = v
                else:
                    argv.insert(0, v)
                out.append(Case([*path, *argv]))
            positional_at += 1
            continue
        flag = a.option_strings[0]
        rest = _without(base, flag)
        if a.choices:
            values, usage = ["no-such-choice"], True
        elif a.type in (int, float):
            out.append(Case([*path, *rest, flag, "not-a-number"], usage=True))
            values, usage = ["-1"], False
        elif a.type is not None and a.type is not str and not isinstance(a.type, type):  # a parsing function
            values, usage = ["x:y"], True
        else:
            values = (PATHS if _takes_a_path(a) else ["{garbage}"]) + EXTRA_VALUES.get(flag, [])
            usage = False
        out += [Case([*path, *rest, flag, v], usage=usage) for v in values]
    return out


def _without(argv: list[str], flag: str) -> list[str]:
    if flag not in argv:
        return list(argv)
    i = argv.index(flag)
    return argv[:i] + argv[i + 2 :]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bad-inputs")
    (root / "a.py").write_text("def f(x):\n    return x + 1\n")
    (root / "b.py").write_text("def f(x):\n    return x + 2\n")
    (root / "garbage.bin").write_bytes(bytes(range(256)) * 8)
    (root / "empty.txt").write_bytes(b"")
    (root / "malformed.json").write_text('{"suite": "canitedit", not json\n')
    (root / "cache").mkdir()
    return root


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


# what the handlers import when they run: imported once here, so each forked case costs its own work only
PREIMPORT = (
    "benchmark.run.engine",
    "benchmark.run.answer_sources",
    "benchmark.report.summary",
    "benchmark.run.store",
    "benchmark.suites",
    "benchmark.build.make_suite",
    "benchmark.report.html",
    "benchmark.run.session",
    "sandbox",
    "sandbox.core",
    "sandbox.doctor",
    "sandbox.envs",
    "server.lsp",
)


def _child(argv: list[str], own: Path, cache: Path, out: Path, err: Path) -> NoReturn:
    """The CLI's `main` in a forked process with its own stdin (/dev/null), stdout, stderr and logging, as
    the console script runs it; anything escaping `main` is printed as Python would print it."""
    code = 99
    try:
        os.setpgid(0, 0)  # its own group, so a case that runs on is killed with what it started
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own streams, open until it exits
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        logging.root.handlers.clear()  # pytest's capture handlers: a real process has none
        os.chdir(own)
        os.environ.pop("EDIT_FIDELITY_DEBUG", None)
        os.environ.update(
            {
                "EDIT_FIDELITY_DATA": str(own / "data"),
                "XDG_CACHE_HOME": str(cache),
                "HF_HUB_OFFLINE": "1",
                "NO_COLOR": "1",
            }
        )
        sys.argv = ["edit-fidelity", *argv]
        from server.cli import main

        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (print(exc.code, file=sys.stderr) or 1)
    except BaseException:  # noqa: BLE001 - what the interpreter would print
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a stream the case closed or broke
                stream.flush()
        os._exit(code if isinstance(code, int) else 1)


def run_all(cases_: list[Case], root: Path, parallel: int) -> list[Done | None]:
    """Each case in a process forked from this one (a fresh interpreter per case would cost most of the
    time in imports), `parallel` at a time; None for a case killed after CASE_TIMEOUT_S."""
    for name in PREIMPORT:
        importlib.import_module(name)
    # tests/sandbox (no __init__.py) must not stand in for the package when tests/ leads sys.path
    assert getattr(sys.modules["sandbox"], "__file__", None), "the sandbox package resolved to tests/sandbox"
    results: list[Done | None] = [None] * len(cases_)
    running: dict[int, tuple[int, float]] = {}  # pid -> (case index, start)
    queue = list(enumerate(cases_))
    case_dirs: dict[int, str] = {}
    while queue or running:
        while queue and len(running) < parallel:
            n, case = queue.pop(0)
            argv, own = _expand(case.argv, root)
            case.argv = argv
            pid = os.fork()
            if pid == 0:
                _child(argv, own, root / "cache", own / "stdout", own / "stderr")
            running[pid] = (n, time.monotonic())
            case_dirs[n] = str(own)
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            for p, (_n, t0) in list(running.items()):
                if time.monotonic() - t0 > CASE_TIMEOUT_S:
                    os.killpg(p, signal.SIGKILL)
            time.sleep(0.01)
            continue
        if pid not in running:
            continue
        n, _ = running.pop(pid)
        code = os.waitstatus_to_exitcode(status)
        if code == -signal.SIGKILL:
            continue  # timed out: stays None
        own = Path(case_dirs[n])
        results[n] = Done(
            code, (own / "stdout").read_text(errors="replace"), (own / "stderr").read_text(errors="replace")
        )
    return results


FIXTURES = {
    "{a}": "a.py",
    "{b}": "b.py",
    "{garbage}": "garbage.bin",
    "{empty}": "empty.txt",
    "{json}": "malformed.json",
}


def _expand(argv: list[str], root: Path) -> tuple[list[str], Path]:
    """The case's own copies of the input files and fresh {out} / {missing} paths: a command may write
    to what it is given (`--out garbage.bin`), and the cases run side by side."""
    (root / "cases").mkdir(exist_ok=True)
    own = Path(tempfile.mkdtemp(dir=root / "cases"))
    fixed = {
        "{data}": own / "data",
        "{dir}": own / "empty-dir",
        "{out}": own / "out",
        "{missing}": own / "nowhere" / "m.py",
    }
    (own / "data").mkdir()
    (own / "empty-dir").mkdir()
    for key, name in FIXTURES.items():
        shutil.copyfile(root / name, own / name)
        fixed[key] = own / name
    for key, value in fixed.items():
        argv = [arg.replace(key, str(value)) for arg in argv]
    return argv, own


def _problem(case: Case, done: Done | None) -> str | None:
    if done is None:
        return f"still running after {CASE_TIMEOUT_S} s"
    both = done.stdout + done.stderr
    if "Traceback (most recent call last)" in both:
        return "a traceback"
    if "internal error" in done.stderr:
        return "reached the last-resort guard (an unexpected exception)"
    if done.returncode < 0 or done.returncode > 3 and done.returncode != 130:
        return f"exit status {done.returncode}"
    errors = done.stderr.strip().splitlines()
    if case.usage and done.returncode != 2:
        return f"a usage error gave exit status {done.returncode}, not 2"
    if done.returncode == 2 and not 1 <= len(errors) <= 3:
        return f"exit status 2 with {len(errors)} lines on stderr, not one line"
    return None


def test_the_walk_finds_every_subcommand():
    names = {" ".join(p) for p in LEAVES}
    assert {
        "check",
        "serve",
        "bench run",
        "bench report",
        "bench compare",
        "bench download",
        "bench make-suite",
        "sandbox run",
        "sandbox prepare",
        "sandbox doctor",
    } <= names


def test_every_subcommand_survives_bad_input(inputs: Path):
    todo: list[Case] = []
    for path, parser in LEAVES.items():
        todo += cases(path, parser)
    for path, _, leaf in NODES:
        if not leaf:
            todo.append(Case([*path, "no-such-command"], usage=True))
    todo.append(Case([], usage=True))  # no command at all
    results = run_all(todo, inputs, parallel=max(4, (os.cpu_count() or 2) * 2))
    failures = []
    for case, done in zip(todo, results, strict=True):
        problem = _problem(case, done)
        if problem:
            tail = "" if done is None else (done.stderr or done.stdout).strip()[-600:]
            failures.append(f"edit-fidelity {' '.join(case.argv)}: {problem}\n    {tail}")
    assert len(todo) > 100
    assert not failures, f"{len(failures)} of {len(todo)} bad inputs mishandled:\n" + "\n".join(failures)


def test_the_harness_sees_a_traceback_and_a_guarded_crash(inputs: Path, monkeypatch):
    """The sweep can fail: a logged traceback and an exception that reaches the guard are both caught
    (the forked cases inherit this process's patched module)."""
    from server import check_cli

    def logs_a_traceback(path: str) -> str:
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("edit_fidelity").exception("reading %s", path)
        raise check_cli.CheckError("refused")

    def crashes(path: str) -> str:
        raise RuntimeError("boom")

    found = []
    for patch in (logs_a_traceback, crashes):
        monkeypatch.setattr(check_cli, "read_text", patch)
        case = Case(["check", "{a}", "{b}"])
        (done,) = run_all([case], inputs, parallel=1)
        found.append(_problem(case, done))
    assert found == ["a traceback", "reached the last-resort guard (an unexpected exception)"]


def test_serve_on_a_port_in_use_is_one_line(tmp_path: Path):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = subprocess.run(
            [str(EXE), "serve", "--tcp", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        f"edit-fidelity serve: error: cannot listen on 127.0.0.1:{port}: the address is "
        "already in use; choose another port or stop the process holding it"
    )


def test_the_last_resort_guard_is_one_line_and_debug_shows_the_traceback(tmp_path: Path, monkeypatch, capsys):
    """An exception no handler expected (here: a file that vanishes as it is read) is one line, exit 1,
    and EDIT_FIDELITY_DEBUG=1 gives the traceback instead."""
    from server import check_cli, cli

    def vanishing(path: str) -> str:
        raise RuntimeError(f"{path} vanished")

    monkeypatch.setattr(check_cli, "read_text", vanishing)
    monkeypatch.delenv("EDIT_FIDELITY_DEBUG", raising=False)
    assert cli.main(["check", "a.py", "b.py"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "edit-fidelity check: internal error: RuntimeError: a.py vanished (please report it; "
        "EDIT_FIDELITY_DEBUG=1 shows the traceback)\n"
    )
    monkeypatch.setenv("EDIT_FIDELITY_DEBUG", "1")
    with pytest.raises(RuntimeError, match="vanished"):
        cli.main(["check", "a.py", "b.py"])
