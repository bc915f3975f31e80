"""What the change units are made from: line regions, consistent renames, signature changes, placeholders.

`units.py` cuts an edit into change units, `classifier.py` says what kind each one is; the facts both
need about the two texts are found here.
"""

from __future__ import annotations

import keyword
import re
from collections import Counter
from dataclasses import dataclass

from rapidfuzz.distance import Indel, Levenshtein

from server.fidelity.analysis import Analysis


@dataclass(slots=True)
class LineRegion:
    """Lines a_start..a_end of the original replaced by b_start..b_end of the edited text (1-based)."""

    a_start: int
    a_end: int
    b_start: int
    b_end: int


def common_affix(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many leading and trailing items the two lists share (the tail never overlaps the head)."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def line_regions(a_lines: list[str], b_lines: list[str]) -> list[LineRegion]:
    # Strip the common head and tail first: an editor's edit touches a few lines of a long file.
    head, tail = common_affix(a_lines, b_lines)
    a_mid = a_lines[head : len(a_lines) - tail]
    b_mid = b_lines[head : len(b_lines) - tail]
    if not a_mid and not b_mid:
        return []
    regions: list[LineRegion] = []
    current: LineRegion | None = None
    for op in Indel.opcodes(a_mid, b_mid):
        if op.tag == "equal":
            current = None
            continue
        if current is None:
            current = LineRegion(head + op.src_start + 1, head + op.src_start, head + op.dest_start + 1, head + op.dest_start)
            regions.append(current)
        current.a_end = head + op.src_end
        current.b_end = head + op.dest_end
    return regions


# An omission marker: "... existing code ...", "# rest of the function unchanged", "// same as before".
_PLACEHOLDER = re.compile(
    r"(?:\.\.\.|…)\s*(?:existing|rest|remaining|unchanged|same|previous|other|original|omitted|more)\b"
    r"|\b(?:rest|remainder) of (?:the )?(?:code|file|function|class|method|implementation|body|logic)\b"
    r"|\b(?:existing|remaining|previous|original|other) (?:code|implementation|logic|methods?|functions?|lines)\b"
    r"|\b(?:unchanged|same as (?:before|above|original)|omitted for brevity|as before)\b",
    re.IGNORECASE,
)


def _placeholder_lines(lines: list[str]) -> list[str]:
    found = []
    for line in lines:
        stripped = line.strip()
        bare_marker = stripped in ("...", "…", "# ...", "// ...", "pass  # ...")
        commented = "#" in stripped or "..." in stripped or "…" in stripped or stripped.startswith(("'", '"'))
        if bare_marker or (commented and _PLACEHOLDER.search(stripped)):
            found.append(stripped)
    return found


def _in_ranges(row: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= row <= end for start, end in ranges)


def _is_name(token: str) -> bool:
    return token.isidentifier() and not keyword.iskeyword(token)


def rename_map(original: Analysis, edited: Analysis, regions: list[LineRegion]) -> dict[str, str]:
    """Consistent identifier renames: a bound name that vanished, replaced by one new bound name.

    Candidates come from the token alignment; a candidate is accepted when renaming it in the original
    removes at least half of its occurrences from the edit distance (a real rename turns every
    occurrence into a match; a chance alignment of two unrelated names does not).
    """
    old_tokens: list[str] = []
    new_tokens: list[str] = []
    for region in regions:
        old_tokens += original.tokens_in(region.a_start, region.a_end)
        new_tokens += edited.tokens_in(region.b_start, region.b_end)
    pairs: Counter[tuple[str, str]] = Counter()
    for op in Levenshtein.opcodes(old_tokens, new_tokens):
        if op.tag == "replace":
            for a, b in zip(old_tokens[op.src_start : op.src_end], new_tokens[op.dest_start : op.dest_end]):
                if a != b and _is_name(a) and _is_name(b):
                    pairs[a, b] += 1
    if not pairs:
        return {}
    # attribute names do not count (`csv.writer` stays when a local `writer` is renamed)
    old_names, new_names = _plain_names(original), _plain_names(edited)
    vanished = {n for n, _ in pairs if n not in new_names and n in original.bound_names}
    appeared = {n for _, n in pairs if n not in old_names and n in edited.bound_names}
    renames: dict[str, str] = {}
    base = Levenshtein.distance(old_tokens, new_tokens)
    skip_region = not_variables(old_tokens)
    attribute = [i in skip_region for i in range(len(old_tokens))]
    strings = original.lexed.strings
    skip = not_variables(strings)
    plain_counts = Counter(t for i, t in enumerate(strings) if t in vanished and i not in skip)
    for (old, new), _ in pairs.most_common(32):
        if old not in vanished or new not in appeared or old in renames or new in renames.values():
            continue
        trial = [t if attribute[i] else renames.get(t, new if t == old else t) for i, t in enumerate(old_tokens)]
        distance = Levenshtein.distance(trial, new_tokens)
        if base - distance >= max(1, plain_counts[old] / 2):
            renames[old] = new
            base = distance
    return renames


def not_variables(strings: list[str]) -> set[int]:
    """Indices of names that are no variable: attributes (`x.name`) and keywords of a call (`f(name=1)`)."""
    out: set[int] = set()
    stack: list[bool] = []  # per open bracket: is it a call's parentheses
    for i, t in enumerate(strings):
        if t in ("(", "[", "{"):
            call = t == "(" and i > 0 and (strings[i - 1].isidentifier() or strings[i - 1] in (")", "]")) \
                and not (i > 1 and strings[i - 2] in ("def", "class")) and not keyword.iskeyword(strings[i - 1])
            stack.append(call)
        elif t in (")", "]", "}"):
            if stack:
                stack.pop()
        elif i > 0 and strings[i - 1] == "." and t.isidentifier():
            out.add(i)
        elif (stack and stack[-1] and t.isidentifier() and i + 1 < len(strings) and strings[i + 1] == "="
              and strings[i - 1] in ("(", ",")):
            out.add(i)
    return out


def _plain_names(a: Analysis) -> set[str]:
    """Names used as variables (not attributes nor call keywords)."""
    strings = a.lexed.strings
    skip = not_variables(strings)
    return {t for i, t in enumerate(strings) if t.isidentifier() and i not in skip}


def _signature_changes(original: Analysis, edited: Analysis) -> tuple[list[tuple[int, int]], list[tuple[int, int]], set[str]]:
    """Signature line ranges (per side) of the functions on both sides whose signature differs."""
    new = {f.qualname: f for f in edited.structure.functions}
    old_ranges: list[tuple[int, int]] = []
    new_ranges: list[tuple[int, int]] = []
    changed: set[str] = set()
    for info in original.structure.functions:
        other = new.get(info.qualname)
        if other is not None and other.signature != info.signature:
            old_ranges.append((info.start, info.signature_end))
            new_ranges.append((other.start, other.signature_end))
            changed.add(info.qualname)
    return old_ranges, new_ranges, changed


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"

