"""Change units as text edits the server sends: accepting some units of a proposal, reverting some
units of an observed change, and where a unit lies on either side.

A report's units each carry their own minimal edits against the original side (`Hunk.edits`); the
edits of all units never overlap, so any subset applies on its own. Reverting a unit of an observed
change (original = the baseline, edited = the buffer) is the inverse of its edits, placed on the
buffer: the text each edit inserted goes back to what it replaced, and nothing else is touched (a fix
on the same line as a reverted rename stays).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence

from server.fidelity import FidelityReport, TextEdit, apply_text_edits
from server.lsp.lines import split_lines, utf16_len
from server.protocol.report import Position


class _Text:
    """Offsets <-> LSP positions (0-based lines, UTF-16 columns) of one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = split_lines(text)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, pos: Position) -> int:
        if pos.line >= len(self.lines):
            return len(self.text)
        line = self.lines[pos.line]
        col = units = 0
        if line.isascii():
            col = pos.character
        else:
            while col < len(line) and units < pos.character:
                units += 2 if ord(line[col]) > 0xFFFF else 1
                col += 1
        return self.starts[pos.line] + min(col, len(line.rstrip("\r\n")))

    def position(self, offset: int) -> dict:
        line = max(0, bisect_right(self.starts, offset) - 1)
        if line >= len(self.lines):  # the end of the text
            if self.lines and not self.lines[-1].endswith(("\n", "\r")):
                return {"line": len(self.lines) - 1, "character": utf16_len(self.lines[-1])}
            return {"line": len(self.lines), "character": 0}
        return {"line": line, "character": utf16_len(self.text[self.starts[line] : offset])}


def offsets_of(text: str, edits: Sequence[TextEdit]) -> list[tuple[int, int]]:
    """Each edit's (start, end) offsets in `text` (the text the edits are against)."""
    t = _Text(text)
    return [(t.offset(e.range.start), t.offset(e.range.end)) for e in edits]


def unit_edits(report: FidelityReport, units: Iterable[int]) -> list[TextEdit]:
    """The edits that accept exactly `units` of the report (against its original side)."""
    return [e for i in sorted(set(units)) for e in report.hunks[i].edits]


def _edited_spans(original: str, report: FidelityReport) -> list[list[tuple[int, int, int, int]]] | None:
    """Per unit, per edit: (original start, original end, edited start, edited end) offsets; None when
    the edits do not give the edited side (then only whole-text reverts are safe)."""
    flat = [(u, e) for u, h in enumerate(report.hunks) for e in h.edits]
    base = _Text(original)
    spans = sorted(
        ((base.offset(e.range.start), base.offset(e.range.end), k) for k, (_, e) in enumerate(flat)),
        key=lambda s: (s[0], s[1]),
    )  # the order apply_text_edits applies them in
    out: list[list[tuple[int, int, int, int]]] = [[] for _ in report.hunks]
    shift, cursor = 0, 0
    for begin, end, k in spans:
        if begin < cursor:
            return None
        unit, edit = flat[k]
        start = begin + shift
        out[unit].append((begin, end, start, start + len(edit.new_text)))
        shift += len(edit.new_text) - (end - begin)
        cursor = end
    return out


class UnitGeometry:
    """Where each unit of a report lies on both sides, and the edits that revert any of them."""

    def __init__(self, original: str, edited: str, report: FidelityReport) -> None:
        self.original, self.edited, self.report = original, edited, report
        spans = _edited_spans(original, report) if all(h.edits for h in report.hunks) else None
        if spans is not None and apply_text_edits(original, report.edits) != edited:
            spans = None
        self.spans = spans
        self._edited = _Text(edited)

    def edited_range(self, unit: int) -> tuple[dict, dict] | None:
        """The unit's extent on the edited side (first edit's start to last edit's end), LSP positions."""
        if self.spans is None or not self.spans[unit]:
            return None
        s = self.spans[unit]
        return self._edited.position(min(x[2] for x in s)), self._edited.position(max(x[3] for x in s))

    def revert(self, units: Iterable[int]) -> list[dict]:
        """LSP TextEdits against the edited text that restore the original of `units` only."""
        chosen = sorted(set(units))
        if self.spans is not None:
            return [
                {
                    "range": {"start": self._edited.position(es), "end": self._edited.position(ee)},
                    "newText": self.original[ob:oe],
                }
                for u in chosen
                for ob, oe, es, ee in self.spans[u]
            ]
        # no usable unit edits: the text with every other unit applied, as one edit over the difference
        keep = [i for i in range(len(self.report.hunks)) if i not in set(chosen)]
        target = (
            apply_text_edits(self.original, unit_edits(self.report, keep))
            if all(self.report.hunks[i].edits for i in keep)
            else self.original
        )
        return [_diff_edit(self._edited, target)]


def _diff_edit(current: _Text, target: str) -> dict:
    """One edit turning `current` into `target`: the span between their common prefix and suffix."""
    a, b = current.text, target
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    return {
        "range": {"start": current.position(head), "end": current.position(len(a) - tail)},
        "newText": b[head : len(b) - tail],
    }


def original_range(report: FidelityReport, unit: int) -> tuple[dict, dict] | None:
    """The unit's extent on the original side, from its edits (LSP positions), or None without edits."""
    edits = report.hunks[unit].edits
    if not edits:
        return None
    start = min((e.range.start for e in edits), key=lambda p: (p.line, p.character))
    end = max((e.range.end for e in edits), key=lambda p: (p.line, p.character))
    return {"line": start.line, "character": start.character}, {"line": end.line, "character": end.character}
