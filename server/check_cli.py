"""`edit-fidelity check`: the fidelity report of an edit, from files, a git revision or the example."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import msgspec

from server import example
from server.fidelity import FidelityReport, measure
from server.report_text import render_report


class CheckError(Exception):
    """A problem with the user's input, reported as one line."""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "check",
        help="report how faithful an edit is",
        description="Compare an edited file with its original (or the working tree with a git revision).",
    )
    parser.add_argument("original", nargs="?", help="the original file")
    parser.add_argument("edited", nargs="?", help="the edited file")
    parser.add_argument("--gold", help="the reference minimal edit, to report excess over it")
    parser.add_argument("--target", help="START:END, the 1-based original lines the edit was asked for")
    parser.add_argument("--git", metavar="REV", help="compare the working tree with revision REV")
    parser.add_argument("paths", nargs="*", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--example", action="store_true", help="run on the embedded example edit")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except CheckError as exc:
        print(f"edit-fidelity check: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    target = parse_target(args.target) if args.target else None
    if args.git:
        paths = [p for p in (args.original, args.edited, *args.paths) if p]
        if args.gold:
            raise CheckError("--gold cannot be combined with --git")
        return _check_git(args.git, paths, args.format, target)
    if args.paths:
        raise CheckError(f"unexpected arguments: {' '.join(args.paths)}")
    if args.example:
        if args.original or args.edited:
            raise CheckError("--example takes no files")
        report = measure(example.ORIGINAL, example.OVER_EDITED, gold=example.GOLD, target=target)
        _emit(report, args.format, title=f"example: {example.INSTRUCTION}")
        return 0
    if not args.original or not args.edited:
        raise CheckError("give ORIGINAL and EDITED files, or --git REV, or --example")
    original = read_text(args.original)
    edited = read_text(args.edited)
    gold = read_text(args.gold) if args.gold else None
    _emit(measure(original, edited, gold=gold, target=target), args.format, title=f"{args.original} -> {args.edited}")
    return 0


def parse_target(value: str) -> range:
    start, sep, end = value.partition(":")
    try:
        first, last = int(start), int(end)
    except ValueError:
        raise CheckError(f"--target must be START:END with 1-based line numbers, got {value!r}") from None
    if not sep or first < 1 or last < first:
        raise CheckError(f"--target must be START:END with 1 <= START <= END, got {value!r}")
    return range(first, last + 1)


def read_text(path: str) -> str:
    file = Path(path)
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise CheckError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CheckError(f"{path}: is a directory") from None
    except OSError as exc:
        raise CheckError(f"{path}: {exc.strerror or exc}") from None
    return decode(data, path)


def decode(data: bytes, name: str) -> str:
    if b"\0" in data[:8192]:
        raise CheckError(f"{name}: binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CheckError(f"{name}: not UTF-8 text (byte {exc.start})") from None


def _emit(report: FidelityReport, fmt: str, *, title: str) -> None:
    if fmt == "json":
        sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
    else:
        render_report(report, title=title)


def _git(args: list[str], cwd: Path | None = None) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise CheckError("git is not installed") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise CheckError(f"git {args[0]}: {message[-1] if message else 'failed'}")
    return done.stdout


def _check_git(rev: str, paths: list[str], fmt: str, target: range | None) -> int:
    top = Path(_git(["rev-parse", "--show-toplevel"]).decode().strip())
    _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"])
    listing = _git(["diff", "--name-status", "--no-renames", "-z", rev, "--", *paths], cwd=None)
    fields = listing.decode(errors="surrogateescape").split("\0")
    results: list[dict] = []
    for status, rel in zip(fields[0::2], fields[1::2]):
        if not rel:
            continue
        before = b"" if status == "A" else _git(["show", f"{rev}:{rel}"], cwd=top)
        path = top / rel
        after = b"" if status == "D" or not path.exists() else path.read_bytes()
        try:
            report = measure(decode(before, f"{rev}:{rel}"), decode(after, rel), target=target)
        except CheckError as exc:
            results.append({"path": rel, "status": status, "error": str(exc)})
            continue
        results.append({"path": rel, "status": status, "report": report})
    if fmt == "json":
        sys.stdout.write(msgspec.json.encode({"revision": rev, "files": results}).decode() + "\n")
        return 0
    if not results:
        print(f"no changes against {rev}")
    for item in results:
        if "error" in item:
            print(f"{item['path']}: skipped: {item['error']}")
        else:
            render_report(item["report"], title=f"{item['path']} ({rev} -> working tree)")
    return 0
