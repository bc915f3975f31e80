"""The labelled over-edit corpus's format: one `Candidate` per line, the gold edit of a task with known
unrequested `Change`s on top (their character spans in the candidate), as `make.py` and `lang_make.py` write it
and the studies (`benchmark.studies.overedits`) read it."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import msgspec

from server.fidelity.text.analysis import split_lines
from server.protocol.report import Position, TextEdit


class Change(msgspec.Struct, frozen=True):
    family: str
    kinds: list[str]
    spans: list[tuple[int, int]]  # character intervals in the candidate


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    task_id: str
    source: str
    original: str
    gold: str
    candidate: str
    tests: str
    test_kind: str
    env: str | None
    target: tuple[int, int]  # 1-based original lines [start, stop) of the function the fix is in
    entry: str  # that function's name
    fix_spans: list[tuple[int, int]]  # the gold fix's token changes: intervals in the candidate
    changes: list[Change]
    tests_passed: bool | None = None  # None: not run
    instruction: str | None = None  # what the task asked for (the judge's scope); None in older corpora
    language: str = "python"  # the candidate's language (`lang_make.py` writes the others)


def load_corpus(path: Path) -> list[Candidate] | None:
    """The candidates of a corpus file, or None after one line on stderr saying why it cannot be read."""
    try:
        return [msgspec.json.decode(line, type=Candidate) for line in path.read_bytes().splitlines() if line.strip()]
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        print(
            f"error: {path}: not a corpus written by `python -m benchmark.build.overedits make`: {exc}", file=sys.stderr
        )
        return None


def new_spans(original: str, all_edits: Sequence[TextEdit], unit_edits: Sequence[TextEdit]) -> list[tuple[int, int]]:
    """Where the given edits' new text lands in the edited text (all edits applied)."""
    lines = split_lines(original)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def off(pos: Position) -> int:
        if pos.line >= len(lines):
            return len(original)
        return starts[pos.line] + len(lines[pos.line].encode("utf-16-le")[: 2 * pos.character].decode("utf-16-le"))

    # stable on ties: inserts at one point land in the order of the edits (LSP's rule)
    spans = sorted(
        ((off(e.range.start), off(e.range.end), e.new_text, id(e)) for e in all_edits), key=lambda x: (x[0], x[1])
    )
    wanted = {id(e) for e in unit_edits}
    out, delta = [], 0
    for s, e, text, key in spans:
        if key in wanted:
            out.append((s + delta, s + delta + len(text)))
        delta += len(text) - (e - s)
    return out
