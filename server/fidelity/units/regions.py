"""What the change units are made from: line regions, consistent renames, signature changes, placeholders.

`atoms.py` cuts an edit into change units, `classifier.py` says what kind each one is; the facts both
need about the two texts are found here.
"""

from __future__ import annotations

import keyword
import re
from collections import Counter
from dataclasses import dataclass

from rapidfuzz.distance import Indel, Levenshtein

from server.fidelity.text.analysis import Analysis


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


def line_regions(
    a_lines: list[str], b_lines: list[str], *, indent_free: bool = False, a_keys: list[str] | None = None
) -> list[LineRegion]:
    """Regions of changed lines. With `indent_free` (languages where indentation is layout) lines are
    aligned on their text without the surrounding whitespace, and an aligned pair that differs in it
    is a one-line region of its own: a block wrapped in `try {` ... `}` re-indents every line, and
    aligned on whole lines its old lines would match new lines of other depths by chance."""
    if indent_free:
        keys_a = [ln.strip() for ln in (a_keys or a_lines)]
        keys_b = [ln.strip() for ln in b_lines]
        out: list[LineRegion] = []
        ai = bi = 0
        for r in line_regions(keys_a, keys_b):
            out += _differing_pairs(a_lines, b_lines, ai, bi, r.a_start - 1 - ai)
            out.append(r)
            ai, bi = r.a_end, r.b_end
        out += _differing_pairs(a_lines, b_lines, ai, bi, len(a_lines) - ai)
        return out  # (the closing-bracket heuristics ran on the stripped lines)
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
            current = LineRegion(
                head + op.src_start + 1, head + op.src_start, head + op.dest_start + 1, head + op.dest_start
            )
            regions.append(current)
        current.a_end = head + op.src_end
        current.b_end = head + op.dest_end
    return tidy_regions(regions, a_lines, b_lines)


def _differing_pairs(a_lines: list[str], b_lines: list[str], a0: int, b0: int, n: int) -> list[LineRegion]:
    """One-line regions for the aligned lines a0.., b0.. (0-based, n of them) whose texts differ."""
    return [
        LineRegion(a0 + k + 1, a0 + k + 1, b0 + k + 1, b0 + k + 1)
        for k in range(n)
        if a_lines[a0 + k] != b_lines[b0 + k]
    ]


def tidy_regions(regions: list[LineRegion], a_lines: list[str], b_lines: list[str]) -> list[LineRegion]:
    """Among line diffs of equal size, the one that keeps closing brackets with their own blocks
    (`_join_across_closers`, `_slide`); a no-op on code without lone closing-bracket lines."""
    regions = _join_across_closers(regions, a_lines)
    out: list[LineRegion] = []
    for i, r in enumerate(regions):
        out += _slide(r, a_lines, b_lines, regions[i + 1] if i + 1 < len(regions) else None)
    return out


_CLOSER = re.compile(r"\s*[}\])]+[;,]?\s*")
_BRACE_CLOSER = re.compile(r"\s*}[\])};,]*\s*")


def _join_across_closers(regions: list[LineRegion], a_lines: list[str]) -> list[LineRegion]:
    """Two regions with only lone `}` lines (and blank lines) unchanged between them are one: a block
    wrapped in a new one (`try {` ... `} catch`) re-indents every line but the closers, and a line
    diff then matches an old `}` to a new one of another block, cutting the wrapper in two."""
    out: list[LineRegion] = []
    for r in regions:
        prev = out[-1] if out else None
        between = a_lines[prev.a_end : r.a_start - 1] if prev is not None else []
        if (
            prev is not None
            and between
            and all(_BRACE_CLOSER.fullmatch(x) or not x.strip() for x in between)
            and any(x.strip() for x in between)
        ):
            out[-1] = LineRegion(prev.a_start, r.a_end, prev.b_start, r.b_end)
        else:
            out.append(LineRegion(r.a_start, r.a_end, r.b_start, r.b_end))
    return out


_OPENS, _CLOSES = str.maketrans("", "", "})]"), str.maketrans("", "", "{([")


def _balanced(lines: list[str]) -> bool:
    text = "".join(lines)
    return len(text.translate(_OPENS)) == len(text.translate(_CLOSES)) and bool(text.strip())


def _slide(r: LineRegion, a_lines: list[str], b_lines: list[str], after: LineRegion | None) -> list[LineRegion]:
    """Among diffs of equal size, the one that keeps a closing bracket with its own block.

    A region followed by an unchanged lone closer (`}`) whose new lines hold that closer too, with a
    bracket-balanced block after it (`}` + a new function, before the old `}`), is the same diff with
    the old closer matched to the first copy: the region up to that copy, then the balanced block
    inserted after it. So a helper appended after the last function is not inside that function."""
    nxt = r.a_end  # 0-based index of the unchanged line after the region, in both texts
    if (
        r.b_end >= len(b_lines)
        or nxt >= len(a_lines)
        or not _CLOSER.fullmatch(b_lines[r.b_end])
        or b_lines[r.b_end] != a_lines[nxt]
        or (after is not None and after.a_start <= nxt + 1)
    ):
        return [r]
    block = b_lines[r.b_start - 1 : r.b_end]
    for k, line in enumerate(block):
        if line == b_lines[r.b_end] and _balanced(block[k + 1 :] + [line]):
            head = LineRegion(r.a_start, r.a_end, r.b_start, r.b_start + k - 1)
            tail = LineRegion(nxt + 2, nxt + 1, r.b_start + k + 1, r.b_end + 1)
            return ([head] if head.a_end >= head.a_start or head.b_end >= head.b_start else []) + [tail]
    return [r]


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
        # `//` and `/* */`: the other languages' comments (no Python line starts so)
        commented = (
            "#" in stripped or "..." in stripped or "…" in stripped or stripped.startswith(("'", '"', "//", "/*"))
        )
        if bare_marker or (commented and _PLACEHOLDER.search(stripped)):
            found.append(stripped)
    return found


def _in_ranges(row: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start <= row <= end for start, end in ranges)


def _is_name(token: str) -> bool:
    return token.isidentifier() and not keyword.iskeyword(token)


def rename_map(
    original: Analysis, edited: Analysis, regions: list[LineRegion], scopes: dict[str, tuple[int, int]] | None = None
) -> dict[str, str]:
    """Consistent identifier renames: a bound name that vanished, replaced by one new bound name.

    Candidates come from the token alignment; a candidate is accepted when renaming it in the original
    removes at least half of its occurrences from the edit distance (a real rename turns every
    occurrence into a match; a chance alignment of two unrelated names does not). A name still used
    elsewhere is renamed in one function when it vanished from that function (a parameter `n` renamed
    in one method while another keeps its own `n`); `scopes` receives that function's original lines.
    """
    old_tokens: list[str] = []
    new_tokens: list[str] = []
    old_rows: list[int] = []
    rows = original.token_rows[0]
    for region in regions:
        lo, hi = original.token_span(region.a_start, region.a_end)
        old_tokens += original.lexed.strings[lo:hi] if hi > lo else []
        old_rows += rows[lo:hi] if hi > lo else []
        new_tokens += edited.tokens_in(region.b_start, region.b_end)
    pairs: Counter[tuple[str, str]] = Counter()
    first_row: dict[tuple[str, str], int] = {}
    for op in Levenshtein.opcodes(old_tokens, new_tokens):
        if op.tag == "replace":
            for i, b in zip(range(op.src_start, op.src_end), new_tokens[op.dest_start : op.dest_end]):
                a = old_tokens[i]
                if a != b and _is_name(a) and _is_name(b):
                    pairs[a, b] += 1
                    first_row.setdefault((a, b), old_rows[i])
    if not pairs:
        return {}
    # attribute names and call keywords do not count (`csv.writer` stays when a local `writer` is renamed)
    old_names, new_names = _plain_names(original), _plain_names(edited)
    renames: dict[str, str] = {}
    base = Levenshtein.distance(old_tokens, new_tokens)
    skip_region = not_variables(old_tokens)
    attribute = [i in skip_region for i in range(len(old_tokens))]
    strings = original.lexed.strings
    skip = not_variables(strings)
    new_strings = edited.lexed.strings

    def attempt(old: str, new: str) -> tuple[int, int, list[str], tuple[int, int] | None] | None:
        """(distance saved, count, renamed tokens, scope), or None when the pair cannot be a rename."""
        if (
            old in renames
            or new in renames.values()
            or old not in original.bound_names
            or new not in edited.bound_names
        ):
            return None
        scope: tuple[int, int] | None = None
        if old in new_names or new in old_names:
            scope = _function_scope(original, edited, first_row[old, new], old, new) if scopes is not None else None
            if scope is None:
                return None
        inside = [scope is None or scope[0] <= r <= scope[1] for r in old_rows]
        trial = [
            t if attribute[i] or not inside[i] else renames.get(t, new if t == old else t)
            for i, t in enumerate(old_tokens)
        ]
        count = sum(
            1
            for i, t in enumerate(strings)
            if t == old and i not in skip and (scope is None or scope[0] <= rows[i] <= scope[1])
        )
        return base - Levenshtein.distance(trial, new_tokens), count, trial, scope

    # the likeliest candidates first: most often aligned, then one whose new name lives in code the
    # original has (a name of an added function lines up with an old name by chance as often)
    candidates = pairs.most_common(32)
    known = {f.qualname for f in original.structure.functions}
    added = [(f.start, f.end) for f in edited.structure.functions if f.qualname not in known]
    new_rows = edited.token_rows[0]

    def in_added_code(name: str) -> bool:
        at = [new_rows[i] for i, t in enumerate(new_strings) if t == name]
        return bool(added) and bool(at) and all(any(a <= r <= b for a, b in added) for r in at)

    ranked = [(-aligned, in_added_code(new), n) for n, ((old, new), aligned) in enumerate(candidates)]
    for *_, n in sorted(ranked):
        old, new = candidates[n][0]
        got = attempt(old, new)
        if got is None:
            continue
        saved, count, trial, scope = got
        if saved >= max(1, count / 2):
            renames[old] = new
            base -= saved
            old_tokens = trial
            if scope is not None and scopes is not None:
                scopes[old] = scope
    return renames


def _function_scope(original: Analysis, edited: Analysis, row: int, old: str, new: str) -> tuple[int, int] | None:
    """The original lines of the innermost function around `row` if the rename holds there: `old` gone
    from the same function in the edited text and `new` absent from it in the original."""
    inner = None
    for f in original.structure.functions:
        if f.start <= row <= f.end and (inner is None or f.start >= inner.start):
            inner = f
    if inner is None:
        return None
    other = next((f for f in edited.structure.functions if f.qualname == inner.qualname), None)
    if other is None:
        return None
    if old in _names_in(edited, other.start, other.end) or new in _names_in(original, inner.start, inner.end):
        return None
    return inner.start, inner.end


def _names_in(a: Analysis, first: int, last: int) -> set[str]:
    lo, hi = a.token_span(first, last)
    strings = a.lexed.strings
    skip = not_variables(strings[lo:hi])
    return {t for i, t in enumerate(strings[lo:hi]) if t.isidentifier() and i not in skip}


def not_variables(strings: list[str]) -> set[int]:
    """Indices of names that are no variable: attributes (`x.name`) and keywords of a call (`f(name=1)`)."""
    out: set[int] = set()
    stack: list[bool] = []  # per open bracket: is it a call's parentheses
    for i, t in enumerate(strings):
        if t in ("(", "[", "{"):
            call = (
                t == "("
                and i > 0
                and (strings[i - 1].isidentifier() or strings[i - 1] in (")", "]"))
                and not (i > 1 and strings[i - 2] in ("def", "class"))
                and not keyword.iskeyword(strings[i - 1])
            )
            stack.append(call)
        elif t in (")", "]", "}"):
            if stack:
                stack.pop()
        elif (
            i > 0
            and strings[i - 1] == "."
            and t.isidentifier()
            or (
                stack
                and stack[-1]
                and t.isidentifier()
                and i + 1 < len(strings)
                and strings[i + 1] == "="
                and strings[i - 1] in ("(", ",")
            )
        ):
            out.add(i)
    return out


def _plain_names(a: Analysis) -> set[str]:
    """Names used as variables (not attributes nor call keywords)."""
    strings = a.lexed.strings
    skip = not_variables(strings)
    return {t for i, t in enumerate(strings) if t.isidentifier() and i not in skip}


def _signature_changes(
    original: Analysis, edited: Analysis
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], set[str]]:
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
