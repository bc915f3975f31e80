"""Line regions of an edit read after its consistent renames: a renamed line is aligned as it reads
renamed, so it is no anchor for another line."""

from __future__ import annotations

import functools
import re

from rapidfuzz.distance import Indel

from server.fidelity.units.regions import LineRegion, common_affix, tidy_regions


def _renamed_lines(lines: list[str], renames: dict[str, str], scopes: dict[str, tuple[int, int]]) -> list[str]:
    words = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, renames)) + r")\b")

    def swap(m: re.Match[str], row: int) -> str:  # a name renamed in its scope only
        name = m.group(1)
        return renames[name] if name not in scopes or scopes[name][0] <= row <= scopes[name][1] else name

    out = []
    for n, line in enumerate(lines, start=1):
        if words.search(line):
            line = words.sub(functools.partial(swap, row=n), line)
        out.append(line)
    return out


def _regions_after_renames(lines: list[str], mapped: list[str], new: list[str]) -> list[tuple[int, int, int, int]]:
    """Line regions of the edit aligned on the renamed original, plus each renamed line it pairs."""
    head, tail = common_affix(lines, new)
    out: list[tuple[int, int, int, int]] = []
    current: list[int] | None = None
    for op in Indel.opcodes(mapped[head : len(mapped) - tail], new[head : len(new) - tail]):
        if op.tag != "equal":
            if current is None:
                current = [head + op.src_start + 1, head + op.src_start, head + op.dest_start + 1, head + op.dest_start]
                out.append(current)  # type: ignore[arg-type]
            current[1], current[3] = head + op.src_end, head + op.dest_end
            continue
        current = None
        for k in range(op.src_end - op.src_start):
            a, b = head + op.src_start + k, head + op.dest_start + k
            if lines[a] != new[b]:
                out.append([a + 1, a + 1, b + 1, b + 1])  # type: ignore[arg-type]
    return [(r.a_start, r.a_end, r.b_start, r.b_end) for r in tidy_regions([LineRegion(*r) for r in out], mapped, new)]
