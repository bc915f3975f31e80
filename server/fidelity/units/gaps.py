"""One differing gap between two aligned items, split into atoms: leading whitespace, code and
comments apart, unrelated statements as a deletion and an insertion, whole-line insertions at their
statement boundaries (an import and the function after it), and an f-string whose fields hold both a
rename and a fix as the rename's occurrences and the rest.
"""

from __future__ import annotations

import re

from rapidfuzz.distance import Indel

from server.fidelity.lang.analysis import LangAnalysis
from server.fidelity.units.items import (
    _CLOSE,
    _FSTRING,
    _NEWLINES,
    _OPEN,
    CODE,
    COMMENT,
    RENAME,
    SPACE,
    Atom,
    Item,
    Side,
    _bracket_balance,
    _is_line_start,
    _starts_logical_line,
)
from server.fidelity.units.regions import _placeholder_lines


def _gap_atoms(
    old: Side,
    new: Side,
    a0: int,
    a1: int,
    b0: int,
    b1: int,
    old_items: list[Item],
    new_items: list[Item],
    following: Item | None,
) -> list[Atom]:
    """Split one differing gap into a leading-whitespace atom, then code and comment atoms."""
    out: list[Atom] = []
    nothing_old = a0 == a1 and all(it.start == it.end for it in old_items)  # (a missing final line break)
    if nothing_old and (k := _line_end_cut(new, new_items, b0, b1)):
        # the end of a line (a fix's `)`) and whole lines after it (a function appended): two changes
        cut = new_items[k].start
        return _gap_atoms(old, new, a0, a1, b0, cut, [], new_items[:k], following) + _gap_atoms(
            old, new, a0, a1, cut, b1, [], new_items[k:], following
        )
    if not old_items and (cuts := _statement_cuts(new, new_items, b0, b1)):
        # whole lines inserted: an import and the function after it are two changes
        bounds = [b0, *(new.line_start(new.line_of(new_items[i].start)) for i in cuts), b1]
        items = [0, *cuts, len(new_items)]
        for k in range(len(bounds) - 1):
            out.extend(
                _gap_atoms(
                    old, new, a0, a1, bounds[k], bounds[k + 1], [], new_items[items[k] : items[k + 1]], following
                )
            )
        return out
    la = old_items[0].start if old_items else a1
    lb = new_items[0].start if new_items else b1
    lead_a, lead_b = old.text[a0:la], new.text[b0:lb]
    if not old_items and not new_items:  # whitespace only: a changed indentation cannot stand alone
        nxt = following
        indent = (
            nxt is not None
            and nxt.token >= 0
            and _starts_logical_line(old, nxt)
            and lead_a.rsplit("\n", 1)[-1] != lead_b.rsplit("\n", 1)[-1]
        )
        return [Atom(a0, a1, b0, b1, SPACE, indent=indent)]
    if ("\n" in lead_a or "\n" in lead_b or _is_line_start(old.text, a0)) and old_items and new_items:
        if lead_a != lead_b:
            nxt = old_items[0] if old_items else following
            indent = (
                nxt is not None
                and nxt.token >= 0
                and _starts_logical_line(old, nxt)
                and lead_a.rsplit("\n", 1)[-1] != lead_b.rsplit("\n", 1)[-1]
            )
            out.append(Atom(a0, la, b0, lb, SPACE, indent=indent))
        a0, b0 = la, lb
    if old.text[a0:a1] == new.text[b0:b1]:
        return out
    cats = {it.token >= 0 for it in old_items} | {it.token >= 0 for it in new_items}
    if len(cats) < 2:
        cat = SPACE if not cats else CODE if True in cats else COMMENT
        if cat == CODE and _bracket_only_side(old_items, new_items):
            # `+ 1` gone and a `)` added in one gap: the bracket pairs with its partner, the rest stands alone
            out.append(Atom(a0, a1, b0, b0, CODE, old_items, []))
            out.append(Atom(a1, a1, b0, b1, CODE, [], new_items))
        elif cat == CODE and _unrelated_statements(old, new, old_items, new_items):
            # whole statements replaced by unrelated ones (a docstring by a guard): delete, then insert
            out.append(Atom(a0, a1, b0, b0, CODE, old_items, []))
            out.append(Atom(a1, a1, b0, b1, CODE, [], new_items))
        else:
            out.append(Atom(a0, a1, b0, b1, cat, old_items, new_items))
        return out
    if _placeholder_for_code(old_items, new_items):  # "# ... existing code ..." in place of code: one change
        out.append(Atom(a0, a1, b0, b1, CODE, old_items, new_items))
        return out
    runs_a, runs_b = _runs(old_items), _runs(new_items)
    order = _merged_order(runs_a, runs_b)
    if order is None:
        out.append(Atom(a0, a1, b0, b1, CODE, old_items, new_items))
        return out
    first_is_code = order[0]
    cut_a = _cut(old.text, old_items, a0, a1, first_is_code)
    cut_b = _cut(new.text, new_items, b0, b1, first_is_code)
    left_a = [it for it in old_items if it.start < cut_a]
    left_b = [it for it in new_items if it.start < cut_b]
    right_a = [it for it in old_items if it.start >= cut_a]
    right_b = [it for it in new_items if it.start >= cut_b]
    for lo_a, hi_a, lo_b, hi_b, ia, ib, is_code in (
        (a0, cut_a, b0, cut_b, left_a, left_b, first_is_code),
        (cut_a, a1, cut_b, b1, right_a, right_b, not first_is_code),
    ):
        if old.text[lo_a:hi_a] != new.text[lo_b:hi_b]:
            out.append(Atom(lo_a, hi_a, lo_b, hi_b, CODE if is_code else COMMENT, ia, ib))
    return out


_IMPORT_WORDS = frozenset({"import", "from", "#include", "include", "use", "using"})


def _statement_cuts(side: Side, items: list[Item], lo: int, hi: int) -> list[int]:
    """Where an insertion of whole lines changes from import statements to other code or back, and
    around an omission marker on a line of its own ("# ... rest unchanged" never belongs with the code
    beside it): the indexes of the items that start a new run (a comment on the lines before a statement
    goes with it). Empty when the insertion is one run, or not whole lines."""
    text = side.text
    if not items or not _is_line_start(text, lo) or (hi < len(text) and not _is_line_start(text, hi)):
        return []
    lang = isinstance(side.a, LangAnalysis)
    cuts: list[int] = []
    kind: str | None = None
    prev: Item | None = None  # the previous code item
    first_comment: int | None = None  # the first comment since it, on a line of its own

    def start_run(n: int, new_kind: str) -> None:
        nonlocal kind
        if kind is not None and new_kind != kind and n > 0 and (not cuts or cuts[-1] != n):
            cuts.append(n)
        kind = new_kind

    for n, it in enumerate(items):
        if it.token < 0:
            own_line = prev is None or side.line_of(it.start) > side.line_of(prev.end)
            if own_line and _placeholder_lines([it.key[1:]]):
                start_run(n, "placeholder")
                first_comment = None
            elif first_comment is None and own_line:
                first_comment = n
            continue
        starts = (
            prev is None
            or prev.key in _NEWLINES
            or kind == "placeholder"
            or (
                lang
                and side.line_of(it.start) > side.line_of(prev.end)
                and (prev.key in (";", "}") or _directive(text, side, prev))
            )
        )
        if starts and it.key not in _NEWLINES:
            is_import = it.key in _IMPORT_WORDS or it.key.startswith("#include")
            start_run(first_comment if first_comment is not None else n, "import" if is_import else "code")
        prev, first_comment = it, None
    return cuts


def _line_end_cut(side: Side, items: list[Item], lo: int, hi: int) -> int:
    """An insertion that starts inside a line and goes on with whole lines: the index of the line
    break that ends the first line (0: none such), when code comes before it and after it."""
    text = side.text
    if _is_line_start(text, lo) or (hi < len(text) and not _is_line_start(text, hi)):
        return 0
    for n, it in enumerate(items):
        if it.token >= 0 and it.key in _NEWLINES and it.key:
            before = any(x.token >= 0 and x.key not in _NEWLINES for x in items[:n])
            after = any(x.token >= 0 and x.key not in _NEWLINES for x in items[n + 1 :])
            return n if before and after else 0
    return 0


def _directive(text: str, side: Side, item: Item) -> bool:
    """The item is on a preprocessor line (`#include <x>` ends with no `;`)."""
    line = side.line_of(item.start)
    return text[side.line_start(line) : item.start].lstrip().startswith("#") or item.key.startswith("#")


def _placeholder_for_code(old_items: list[Item], new_items: list[Item]) -> bool:
    new_code = [i for i in new_items if i.token >= 0 and i.key not in _NEWLINES]
    gone = [i for i in old_items if i.token >= 0 and i.key not in _NEWLINES]
    notes = [i.key[1:] for i in new_items if i.token < 0]
    return bool(gone) and not new_code and bool(_placeholder_lines(notes))


def _bracket_only_side(old_items: list[Item], new_items: list[Item]) -> bool:
    """One side only brackets that do not balance, the other balanced code."""

    def brackets(items: list[Item]) -> bool:
        return all(i.key in _OPEN or i.key in _CLOSE for i in items if i.token >= 0) and _bracket_balance(items) != 0

    if not old_items or not new_items:
        return False
    return (brackets(new_items) and _bracket_balance(old_items) == 0) or (
        brackets(old_items) and _bracket_balance(new_items) == 0
    )


def _whole_lines(side: Side, items: list[Item]) -> bool:
    if not items or items[-1].key not in _NEWLINES:
        return False
    first = items[0]
    return first.token >= 0 and _starts_logical_line(side, first)


def _unrelated_statements(old: Side, new: Side, old_items: list[Item], new_items: list[Item]) -> bool:
    if not (_whole_lines(old, old_items) and _whole_lines(new, new_items)):
        return False
    if {i.key for i in new_items if i.key not in _NEWLINES} <= {"...", "pass"}:
        return False  # a placeholder in place of the code: one change
    return Indel.normalized_similarity([i.key for i in old_items], [i.key for i in new_items]) < 0.3


def _runs(items: list[Item]) -> list[bool]:
    runs: list[bool] = []
    for it in items:
        code = it.token >= 0
        if not runs or runs[-1] != code:
            runs.append(code)
    return runs


def _merged_order(a: list[bool], b: list[bool]) -> list[bool] | None:
    """The common [first, second] category order of both sides, or None when they interleave."""
    if len(a) == 1 and len(b) == 1 and a != b:
        return [a[0], b[0]]  # a comment replaced by code (or the reverse): the old one's goes first
    longest = a if len(a) >= len(b) else b
    other = b if longest is a else a
    if len(longest) != 2:
        return None
    if len(other) == 2 and other != longest:
        return None
    return longest


def _cut(text: str, items: list[Item], lo: int, hi: int, first_is_code: bool) -> int:
    """Where the first run ends: whitespace between a code run and a comment run goes with the comment."""
    firsts = [it for it in items if (it.token >= 0) == first_is_code]
    seconds = [it for it in items if (it.token >= 0) != first_is_code]
    if not firsts:
        return lo
    if not seconds:
        return hi
    if first_is_code:
        return firsts[-1].end  # then "  # comment" is the comment's
    return seconds[0].start  # "# comment\n    " before the code is the comment's


_FIELD = re.compile(r"\{[^{}]*\}")


def split_fstring_atoms(old: Side, new: Side, atom: Atom, renames: dict[str, str]) -> list[Atom] | None:
    """An f-string changed by a rename and by more (`{name}` -> `{name_value.upper()}`): the renamed
    occurrences as rename atoms, the rest as code atoms between them, so reverting the rename keeps the
    fix. None when the atom is not one such f-string, or the rest touches a renamed occurrence."""
    if atom.category != CODE or len(atom.old) != 1 or len(atom.new) != 1 or not renames:
        return None
    x, y = atom.old[0], atom.new[0]
    if (
        x.token < 0
        or y.token < 0
        or not _FSTRING.match(x.key)
        or not _FSTRING.match(y.key)
        or old.text[atom.a0 : x.start] != new.text[atom.b0 : y.start]
        or old.text[x.end : atom.a1] != new.text[y.end : atom.b1]
    ):
        return None  # (what the atom holds besides the token is the same on both sides)
    words = re.compile(r"\b(" + "|".join(map(re.escape, renames)) + r")\b")
    occurrences = [
        (f.start() + w.start(), f.start() + w.end(), w.group(1))  # (start, end, name) in x.key
        for f in _FIELD.finditer(x.key)
        for w in words.finditer(f.group(0))
    ]
    if not occurrences:
        return None
    renamed, r_spans, cursor, shift = [], [], 0, 0
    for s, e, name in occurrences:
        renamed.append(x.key[cursor:s] + renames[name])
        r_spans.append((s + shift, s + shift + len(renames[name]), s, e, name))
        shift += len(renames[name]) - (e - s)
        cursor = e
    r_text = "".join(renamed) + x.key[cursor:]

    def to_old(r: int) -> int:  # a position of the renamed text outside every occurrence, in x.key
        moved = 0
        for rs, re_, _os, oe, _ in r_spans:
            if r >= re_:
                moved = re_ - oe
            elif r > rs:
                raise ValueError("inside a renamed occurrence")
        return r - moved

    out: list[Atom] = []
    try:
        for op in Indel.opcodes(r_text, y.key):
            if op.tag == "equal":
                for rs, re_, os_, oe, name in r_spans:
                    if op.src_start <= rs and re_ <= op.src_end:
                        ns = op.dest_start + rs - op.src_start
                        out.append(
                            Atom(
                                x.start + os_,
                                x.start + oe,
                                y.start + ns,
                                y.start + ns + re_ - rs,
                                RENAME,
                                [x],
                                [y],
                                rename=(name, renames[name]),
                            )
                        )
                continue
            lo, hi = to_old(op.src_start), to_old(op.src_end)
            out.append(Atom(x.start + lo, x.start + hi, y.start + op.dest_start, y.start + op.dest_end, CODE, [x], [y]))
    except ValueError:
        return None
    if sum(1 for a in out if a.category == RENAME) != len(r_spans):
        return None  # an occurrence the rest of the change runs through
    out.sort(key=lambda a: (a.a0, a.b0))
    return _joined_code(out)


def _joined_code(atoms: list[Atom]) -> list[Atom]:
    """Code atoms that touch (one change spelled as an insert beside a delete) as one."""
    out: list[Atom] = []
    for a in atoms:
        prev = out[-1] if out else None
        if prev is not None and prev.category == a.category == CODE and prev.a1 == a.a0 and prev.b1 == a.b0:
            out[-1] = Atom(prev.a0, a.a1, prev.b0, a.b1, CODE, prev.old, prev.new)
        else:
            out.append(a)
    return out
