"""`edit-fidelity check`: the fidelity report of an edit, from files, a git revision or the example."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from server import example
from server.check_json import KEY_CASES, git_json, report_json
from server.fidelity import FidelityReport, measure
from server.fidelity.lang.table import LANGUAGES, PYTHON, Lang, detect
from server.protocol.checked import SEVERITY_ORDER
from server.report_text import render_report

if TYPE_CHECKING:
    from server.sarif import Checked


class CheckError(Exception):
    """A problem with the user's input, reported as one line."""


_NAMES = (PYTHON, *(lang.name for lang in LANGUAGES))


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
    parser.add_argument(
        "--format",
        choices=("text", "json", "sarif"),
        default="text",
        help="sarif: SARIF 2.1.0, one result per flagged unit, for code scanning (the edited files' lines)",
    )
    parser.add_argument(
        "--json-keys",
        choices=KEY_CASES,
        default="camel",
        help="--format json: the keys' case; camel (default) is the language server's, snake the one check "
        "printed before 0.2 (a transition, to be removed)",
    )
    parser.add_argument(
        "--fail-on",
        choices=SEVERITY_ORDER,
        metavar="LEVEL",
        help="exit status 1 when a flagged unit or statement is this loud or louder: "
        "hint (any), information, warning or error (default: exit status 0 whatever is flagged)",
    )
    parser.add_argument(
        "--language",
        metavar="ID",
        help="the language (python, javascript, typescript, tsx, java, c, cpp, go, rust); "
        "default: from the file extension, Python for a file without one",
    )
    parser.set_defaults(handler=run)


def language_of(path: str, given: str | None = None) -> str:
    """The language to measure `path` as: `given` (checked), else by extension; a file without an
    extension is Python (the paper's language, the tool's default), an unknown extension is
    unsupported (token distance only), never Python."""
    if given is not None:
        found = detect(given)
        if found is None:
            raise CheckError(f"--language {given}: not a supported language; use one of {', '.join(_NAMES)}")
        return found.name if isinstance(found, Lang) else PYTHON
    name = Path(path).name
    if "." not in name.lstrip("."):
        return PYTHON
    found = detect(None, name)
    if found is None:
        return name.rsplit(".", 1)[1].lower()  # measure() reports it as unsupported:<ext>
    return found.name if isinstance(found, Lang) else PYTHON


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except CheckError as exc:
        print(f"edit-fidelity check: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    target = parse_target(args.target) if args.target else None
    if args.language is not None:
        language_of("", args.language)  # a bad --language is one line before anything is read
    if args.git:
        paths = [p for p in (args.original, args.edited, *args.paths) if p]
        if args.gold:
            raise CheckError("--gold cannot be combined with --git")
        return _check_git(args.git, paths, args.format, target, args.language, args.fail_on, keys=args.json_keys)
    if args.paths:
        raise CheckError(f"unexpected arguments: {' '.join(args.paths)}")
    if args.example:
        if args.original or args.edited:
            raise CheckError("--example takes no files")
        if args.format == "sarif":
            raise CheckError("--format sarif locates its results in files: give ORIGINAL EDITED, or --git REV")
        report = measure(example.ORIGINAL, example.OVER_EDITED, gold=example.GOLD, target=target)
        _emit(report, args.format, title=f"example: {example.INSTRUCTION}", keys=args.json_keys)
        judged = [_judged("example.py", report, example.ORIGINAL, example.OVER_EDITED)] if args.fail_on else []
        return exit_status(args.fail_on, judged)
    if not args.original or not args.edited:
        raise CheckError("give ORIGINAL and EDITED files, or --git REV, or --example")
    original = read_text(args.original)
    edited = read_text(args.edited)
    gold = read_text(args.gold) if args.gold else None
    language = language_of(args.edited, args.language)
    report = measure(original, edited, gold=gold, target=target, language=language)
    judged = [_judged(args.edited, report, original, edited)] if args.format == "sarif" or args.fail_on else []
    if args.format == "sarif":
        _write_sarif(judged, Path.cwd())
    else:
        _emit(report, args.format, title=f"{args.original} -> {args.edited}" + _as(language), keys=args.json_keys)
    return exit_status(args.fail_on, judged)


def _as(language: str) -> str:
    """The title's note of the language (none for Python, the default)."""
    if language == PYTHON:
        return ""
    if language.startswith("unsupported:") or detect(language) is None:
        return f" (unsupported:{language.removeprefix('unsupported:')}: token distance only)"
    return f" ({language})"  # parentheses: the renderer reads [...] as markup


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


def _emit(report: FidelityReport, fmt: str, *, title: str, keys: str = "camel") -> None:
    if fmt == "json":
        sys.stdout.write(report_json(report, keys).decode() + "\n")
    else:
        render_report(report, title=title)


def _git(args: list[str], cwd: Path | None = None, *, what: str | None = None, fix: str = "") -> bytes:
    """git's output; on failure a CheckError with what git said (its last stderr line) and `fix`."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
        )
    except FileNotFoundError:
        raise CheckError("git is not installed (--git needs it); install git or compare two files instead") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        said = message[-1] if message else f"exit status {done.returncode}, no message"
        raise CheckError(f"{what or 'git ' + args[0]}: git said: {said}" + (f"; {fix}" if fix else ""))
    return done.stdout


class Change(msgspec.Struct, frozen=True, kw_only=True):
    """One file that differs between the revision and the working tree."""

    status: str  # git's letter: A(dded, untracked included), M, D, R(enamed), T(ype changed)
    path: str  # relative to the top of the work tree; for a rename the new path
    old_path: str | None = None  # a rename's path in the revision
    similarity: int | None = None  # a rename's, in percent


class GitFile(msgspec.Struct, frozen=True, kw_only=True):
    """A changed file's text in the revision and in the working tree ("" for an added or deleted file),
    or why they could not be read."""

    change: Change
    before: str = ""
    after: str = ""
    error: str | None = None


def git_files(
    rev: str, paths: list[str], cwd: Path | None = None, *, most: int | None = None
) -> tuple[Path, list[GitFile]]:
    """The top of the work tree (of `cwd`, default the current directory) and every file that differs
    between `rev` and the working tree (`paths`: only these, relative to `cwd`), with both texts; more
    than `most` files is a CheckError before any is read."""
    top = Path(
        _git(
            ["rev-parse", "--show-toplevel"],
            cwd,
            what="--git",
            fix="run it inside a git work tree, or compare two files",
        )
        .decode()
        .strip()
    )
    against = rev
    if rev == "HEAD" and _unborn(cwd):  # the first commit (a pre-commit hook runs before it): all is new
        against = _git(["hash-object", "-t", "tree", os.devnull], cwd).decode().strip()  # the empty tree
    else:
        _git(
            ["rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}"],
            cwd,
            what=f"--git {rev}: no such commit",
            fix="name a commit, branch or tag of this repository (e.g. HEAD)",
        )
    changes = git_changes(against, paths, top, cwd)
    if most is not None and len(changes) > most:
        raise CheckError(f"{len(changes)} files changed against {rev}; at most {most} at a time: name some paths")
    out: list[GitFile] = []
    for ch in changes:
        try:
            before = b"" if ch.status == "A" else _git(["show", f"{rev}:{ch.old_path or ch.path}"], cwd=top)
            after = b"" if ch.status == "D" else _read_worktree(top / ch.path, ch.path)
            out.append(
                GitFile(
                    change=ch, before=decode(before, f"{rev}:{ch.old_path or ch.path}"), after=decode(after, ch.path)
                )
            )
        except CheckError as exc:
            out.append(GitFile(change=ch, error=str(exc)))
    return top, out


def _unborn(cwd: Path | None) -> bool:
    """HEAD names a branch that has no commit yet (a repository before its first commit)."""
    try:
        _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], cwd)
    except CheckError:
        try:
            _git(["symbolic-ref", "--quiet", "HEAD"], cwd)
        except CheckError:
            return False
        return True
    return False


def _check_git(
    rev: str,
    paths: list[str],
    fmt: str,
    target: range | None,
    language: str | None = None,
    fail_on: str | None = None,
    *,
    keys: str = "camel",
) -> int:
    top, files = git_files(rev, paths)
    results: list[dict] = []
    judged: list[Checked] = []
    for f in files:
        ch = f.change
        entry: dict = {"path": ch.path, "status": ch.status}
        if ch.old_path is not None:
            entry |= {"old_path": ch.old_path, "similarity": ch.similarity}
        if f.error is None:
            entry["report"] = measure(f.before, f.after, target=target, language=language_of(ch.path, language))
        else:
            entry["error"] = f.error
        results.append(entry)
        if fmt == "sarif" or fail_on:
            judged.append(_judged_git(f, entry.get("report")))
    if fmt == "sarif":
        _write_sarif(judged, top)
        return exit_status(fail_on, judged)
    if fmt == "json":
        sys.stdout.write(git_json(rev, results, keys).decode() + "\n")
        return exit_status(fail_on, judged)
    if not results:
        print(f"no changes against {rev} (untracked files included, ignored ones not)")
    for item in results:
        renamed = f"renamed from {item['old_path']}; " if "old_path" in item else ""
        if "error" in item:
            print(f"{item['path']}: skipped: {renamed}{item['error']}")
        else:
            render_report(
                item["report"], title=f"{item['path']} ({renamed}{rev} -> working tree)" + _as(item["report"].language)
            )
    return exit_status(fail_on, judged)


# -- --format sarif and --fail-on: the units judged as the editor shows them (server.edit_check, which
# loads the language server's views: imported only when asked for) ---------------------------------------
def _judged(path: str, report: FidelityReport, original: str, edited: str) -> Checked:
    from server.edit_check import judge
    from server.sarif import Checked

    return Checked(path, judge(report, original, edited))


def _judged_git(f: GitFile, report: FidelityReport | None) -> Checked:
    """A deleted file is not judged: removing a whole file is a decision of its own, not an edit of it."""
    from server.sarif import Checked

    if report is None or f.error is not None:
        return Checked(f.change.path, None, f.error)
    if f.change.status == "D":
        return Checked(f.change.path, None, "deleted (a removed file is not judged)")
    return _judged(f.change.path, report, f.before, f.after)


def _write_sarif(judged: list[Checked], root: Path) -> None:
    from server.sarif import write

    write(judged, root)


def exit_status(fail_on: str | None, judged: list[Checked]) -> int:
    """1 when `fail_on` is given and a flagged unit or statement is at least that loud (one line on stderr
    says how many and where the first is), else 0."""
    if not fail_on:
        return 0
    from server.edit_check import at_least

    loud = [
        (f.path, lines.start, message)
        for f in judged
        if f.result is not None
        for severity, lines, message in [
            *((u.severity, u.lines, u.message) for u in f.result.units if u.flagged),
            *((s.severity, s.lines, s.message) for s in f.result.statements),
        ]
        if at_least(severity, fail_on)
    ]
    if not loud:
        return 0
    path, line, message = loud[0]
    more = f" (and {len(loud) - 1} more)" if len(loud) > 1 else ""
    print(
        f"edit-fidelity check: {len(loud)} flagged change{'s' if len(loud) != 1 else ''} at --fail-on {fail_on} "
        f"or louder; first: {path}:{max(line, 1)}: {message}{more}",
        file=sys.stderr,
    )
    return 1


def _read_worktree(path: Path, rel: str) -> bytes:
    if not path.exists() and not path.is_symlink():
        return b""
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise CheckError(f"{rel}: is a directory (a submodule?)") from None
    except OSError as exc:
        raise CheckError(f"{rel}: {exc.strerror or exc}") from None


def git_changes(rev: str, paths: list[str], top: Path, cwd: Path | None = None) -> list[Change]:
    """Tracked changes (renames found by git, `-M`) and untracked files (`.gitignore` respected), an
    untracked file that is mostly a deleted one's content paired with it as a rename: a plain `mv`
    is as much a rename as `git mv`, and the user's index is never touched (no `git add -N`)."""
    listing = _git(["diff", "--name-status", "-M", "-z", rev, "--", *paths], cwd)
    changes = _parse_name_status(listing.decode(errors="surrogateescape"))
    others = _git(["ls-files", "--others", "--exclude-standard", "--full-name", "-z", "--", *(paths or [":/"])], cwd)
    untracked = [p for p in others.decode(errors="surrogateescape").split("\0") if p]
    # a file untracked since REV (`git rm --cached`) is still in the working tree: a change, not a deletion
    changes = [Change(status="M", path=c.path) if c.status == "D" and c.path in untracked else c for c in changes]
    known = {c.path for c in changes}
    added = [Change(status="A", path=p) for p in untracked if p not in known]
    changes, added = _pair_renames(rev, top, changes, added)
    return sorted([*changes, *added], key=lambda c: c.path)


def _parse_name_status(text: str) -> list[Change]:
    fields = text.split("\0")
    out: list[Change] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        letter = status[0]
        if letter in "RC":  # a score, then the old and the new path
            old, new = fields[i + 1], fields[i + 2]
            out.append(Change(status=letter, path=new, old_path=old, similarity=int(status[1:] or 0)))
            i += 3
        else:
            out.append(Change(status=letter, path=fields[i + 1]))
            i += 2
    return out


RENAME_SIMILARITY = 0.5  # git's default for -M
_PAIRING_LIMIT = 10_000  # deleted x untracked comparisons; beyond that, none (they stay delete + add)
_PAIRING_BYTES = 1 << 20


def _pair_renames(rev: str, top: Path, changes: list[Change], added: list[Change]) -> tuple[list[Change], list[Change]]:
    deleted = [c for c in changes if c.status == "D"]
    if not deleted or not added or len(deleted) * len(added) > _PAIRING_LIMIT:
        return changes, added
    import difflib

    def lines(data: bytes | None) -> list[bytes] | None:
        return data.splitlines(keepends=True) if data is not None and len(data) <= _PAIRING_BYTES else None

    def old(c: Change) -> bytes | None:
        try:
            return _git(["show", f"{rev}:{c.path}"], cwd=top)
        except CheckError:
            return None

    def new(c: Change) -> bytes | None:
        try:
            return _read_worktree(top / c.path, c.path)
        except CheckError:
            return None

    olds = {c.path: lines(old(c)) for c in deleted}
    news = {c.path: lines(new(c)) for c in added}
    scored: list[tuple[float, str, str]] = []
    for d, a in ((d, a) for d in olds for a in news):
        x, y = olds[d], news[a]
        if x is None or y is None or (not x and not y):
            continue
        m = difflib.SequenceMatcher(None, x, y, autojunk=False)
        if m.real_quick_ratio() >= RENAME_SIMILARITY and m.quick_ratio() >= RENAME_SIMILARITY:
            ratio = 1.0 if x == y else m.ratio()
            if ratio >= RENAME_SIMILARITY:
                scored.append((-ratio, d, a))
    renamed: dict[str, tuple[str, int]] = {}  # new path -> (old path, percent)
    used: set[str] = set()
    for neg, d, a in sorted(scored):  # best pairs first, then by path: the same tree gives the same pairs
        if d not in used and a not in renamed:
            used.add(d)
            renamed[a] = (d, int(-neg * 100))
    kept = [c for c in changes if c.path not in used or c.status != "D"]
    return kept, [
        Change(status="R", path=c.path, old_path=renamed[c.path][0], similarity=renamed[c.path][1])
        if c.path in renamed
        else c
        for c in added
    ]
