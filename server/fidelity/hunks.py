"""Changed regions between two texts and what kind of change each one is.

Regions come from a line-level LCS diff (so whitespace-only and comment-only changes are found too);
inside each region the token edit operations say what changed, and each changed token is explained
by the first matching kind: rename, docstring, import, signature, defensive check, placeholder. Tokens
nothing explains are `logic`.
"""

from __future__ import annotations

import keyword
import re
from collections import Counter
from dataclasses import dataclass

from rapidfuzz.distance import Indel, Levenshtein

from server.fidelity.analysis import Analysis
from server.fidelity.report import UNREQUESTED_KINDS, Hunk
from server.fidelity.structure import FunctionInfo, Structure


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
    vanished = {n for n, _ in pairs if n not in edited.identifiers and n in original.bound_names}
    appeared = {n for _, n in pairs if n not in original.identifiers and n in edited.bound_names}
    renames: dict[str, str] = {}
    base = Levenshtein.distance(old_tokens, new_tokens)
    for (old, new), _ in pairs.most_common(32):
        if old not in vanished or new not in appeared or old in renames or new in renames.values():
            continue
        trial = [renames.get(t, new if t == old else t) for t in old_tokens]
        distance = Levenshtein.distance(trial, new_tokens)
        if base - distance >= max(1, original.name_counts[old] / 2):
            renames[old] = new
            base = distance
    return renames


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


class HunkClassifier:
    def __init__(self, original: Analysis, edited: Analysis, regions: list[LineRegion], target: range | None) -> None:
        self.original = original
        self.edited = edited
        self.target = target
        both_parse = original.parses and edited.parses
        self.renames = rename_map(original, edited, regions) if both_parse else {}
        self.sig_old, self.sig_new, self.sig_changed = (
            _signature_changes(original, edited) if both_parse else ([], [], set())
        )

    def classify(self, region: LineRegion) -> Hunk:
        original, edited = self.original, self.edited
        a_lo, a_hi = original.token_span(region.a_start, region.a_end)
        b_lo, b_hi = edited.token_span(region.b_start, region.b_end)
        old = _same_newlines(original.lexed.strings[a_lo:a_hi] if a_hi > a_lo else [])
        new = _same_newlines(edited.lexed.strings[b_lo:b_hi] if b_hi > b_lo else [])
        old_comments = original.comments_in(region.a_start, region.a_end)
        new_comments = edited.comments_in(region.b_start, region.b_end)
        kinds: list[str] = []
        details: list[str] = []
        used_renames: dict[str, str] = {}
        changed = 0

        if old != new:
            changed = Levenshtein.distance(old, new)
            explained = self._explain(region, old, new, a_lo, b_lo, used_renames, details)
            kinds.extend(k for k in explained if k not in kinds)

        removed = Counter(old_comments) - Counter(new_comments)
        added = Counter(new_comments) - Counter(old_comments)
        if removed.total() > added.total():
            kinds.append("comment_removed")
            details.append(f"removes {_plural(removed.total() - added.total(), 'comment')}")
        elif (removed or added) and old == new:
            kinds.append("comment_only")
            details.append("changes comments only")
        if not kinds:
            kinds.append("formatting_only")
            details.append("reformats code (same tokens)")

        if self.target is not None and not _inside(region, self.target):
            kinds.append("outside_target")
            details.append(f"outside the target lines {self.target.start}-{self.target.stop - 1}")

        unrequested = any(k in UNREQUESTED_KINDS for k in kinds)
        message = "; ".join(details)
        if unrequested:
            message += " (not requested)"
        return Hunk(
            start_line=region.a_start,
            end_line=region.a_end,
            new_start_line=region.b_start,
            new_end_line=region.b_end,
            kinds=kinds,
            tokens_changed=changed,
            unrequested=unrequested,
            message=message,
            renames=used_renames,
        )

    def _explain(
        self,
        region: LineRegion,
        old: list[str],
        new: list[str],
        a_lo: int,
        b_lo: int,
        used_renames: dict[str, str],
        details: list[str],
    ) -> list[str]:
        original, edited = self.original, self.edited
        a_rows, b_rows = original.token_rows[0], edited.token_rows[0]
        a_struct, b_struct = original.structure, edited.structure
        new_lines = edited.lines[region.b_start - 1 : region.b_end]
        old_lines = original.lines[region.a_start - 1 : region.a_end]

        placeholders = [p for p in _placeholder_lines(new_lines) if p not in _placeholder_lines(old_lines)]
        old_guards = [g for g in a_struct.guards if region.a_start <= g[0] <= region.a_end]
        new_guards = [g for g in b_struct.guards if region.b_start <= g[0] <= region.b_end]
        added_guards = new_guards[len(old_guards) :] if len(new_guards) > len(old_guards) else []
        guard_ranges = [(g[0], g[1]) for g in added_guards]

        # Code removed with only whitespace, comments or nothing in its place.
        is_deletion = any(_is_code_token(t) for t in old) and not any(_is_code_token(t) for t in new)
        removal = "lazy_placeholder" if placeholders else "deletion" if is_deletion else "logic"
        found: list[str] = []

        def note(kind: str, detail: str) -> None:
            if kind not in found:
                found.append(kind)
                details.append(detail)

        def explain(row: int, structure: Structure, signatures: list[tuple[int, int]]) -> str | None:
            """The kind that explains a changed token on this line of one side, if a shared rule does."""
            if _in_ranges(row, structure.docstrings):
                return "docstring"
            if _in_ranges(row, structure.imports):
                return "import_change"
            if _in_ranges(row, signatures):
                return "signature_change"
            return None

        def explain_old(index: int) -> str:
            return explain(a_rows[a_lo + index], a_struct, self.sig_old) or removal

        def explain_new(index: int) -> str:
            row = b_rows[b_lo + index]
            kind = explain(row, b_struct, self.sig_new)
            if kind:
                return kind
            if _in_ranges(row, guard_ranges):
                return "defensive"
            if placeholders and edited.lines[row - 1].strip() in placeholders:
                return "lazy_placeholder"
            return "logic"

        kinds_seen: list[str] = []
        for op in Levenshtein.opcodes(old, new):
            if op.tag == "equal":
                continue
            if op.tag == "replace" and op.src_end - op.src_start == op.dest_end - op.dest_start:
                pairs = list(zip(range(op.src_start, op.src_end), range(op.dest_start, op.dest_end)))
                rest_old, rest_new = [], []
                for i, j in pairs:
                    if self.renames.get(old[i]) == new[j]:
                        used_renames[old[i]] = new[j]
                        if _in_ranges(a_rows[a_lo + i], self.sig_old):
                            kinds_seen.append("signature_change")  # a renamed parameter breaks keyword callers
                    else:
                        rest_old.append(i)
                        rest_new.append(j)
            else:
                rest_old = list(range(op.src_start, op.src_end))
                rest_new = list(range(op.dest_start, op.dest_end))
            for i in rest_old:
                kinds_seen.append(explain_old(i))
            for j in rest_new:
                kinds_seen.append(explain_new(j))

        if used_renames:
            pairs_text = ", ".join(f"`{a}` to `{b}`" for a, b in used_renames.items())
            note("rename", f"renamed {pairs_text}")
        counts = Counter(kinds_seen)
        if counts["docstring"]:
            note("docstring", "edits a docstring")
        if counts["import_change"]:
            note("import_change", "changes imports")
        if counts["signature_change"]:
            names = list(dict.fromkeys(n for n, _ in self._functions_at(region) if n in self.sig_changed))
            what = ", ".join(f"`{n}`" for n in names) or "a function"
            note("signature_change", f"changes the signature of {what}")
        if counts["defensive"]:
            note("defensive", "adds " + ", ".join(sorted({g[2] for g in added_guards})) + " (input validation)")
        if counts["lazy_placeholder"]:
            note("lazy_placeholder", f"replaces code with a placeholder ({placeholders[0]!r})")
        if counts["deletion"]:
            note("deletion", f"deletes {_plural(len(old_lines), 'line')} of code with nothing in their place")
        if counts["logic"]:
            note("logic", "changes logic")
        return found

    def _functions_at(self, region: LineRegion) -> list[tuple[str, FunctionInfo]]:
        return [
            (f.qualname, f)
            for f in self.original.structure.functions
            if f.start <= region.a_end and f.signature_end >= region.a_start
        ] + [
            (f.qualname, f)
            for f in self.edited.structure.functions
            if f.start <= region.b_end and f.signature_end >= region.b_start
        ]


def _same_newlines(tokens: list[str]) -> list[str]:
    """NEWLINE tokens keep the file's line ending; a \r\n to \n change is formatting, not code."""
    return ["\n" if t == "\r\n" else t for t in tokens] if "\r\n" in tokens else tokens


def _is_code_token(token: str) -> bool:
    return token not in ("\n", "")


def _inside(region: LineRegion, target: range) -> bool:
    if region.a_end < region.a_start:  # insertion before a_start: allowed from the target's start to its end + 1
        return target.start <= region.a_start <= target.stop
    return target.start <= region.a_start and region.a_end < target.stop


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
