"""Change units: the smallest pieces of an edit that can be accepted or reverted on their own.

Line regions (a line diff) only localise the edit. Inside each region the tokens and comments of both
sides are aligned; between two aligned items (anchors) the differing text is an *atom*: code tokens,
comments, or whitespace alone, split apart when a gap holds more than one of them (a fix and the
removal of the comment after it are two atoms). Then:

- atoms whose brackets do not balance are joined with the next ones until they do (`a - b` to
  `(a - b)` is one atom);
- every occurrence of one consistent rename is one unit (all of it or nothing);
- atoms that cannot stand alone (a changed indentation, a `try:` without its body) are one unit per
  enclosing top-level function: wrapping a body in try/except is one unit, a fix inside it another;
- everything else is a unit of its own, and neighbours of the same kinds on one line are joined later.

Each atom is a pair of character intervals (original, edited) that never overlap another atom's, and
the texts agree outside them, so applying any subset of units gives a well-defined text: all of them
the edited text, none the original.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

from rapidfuzz.distance import Indel

from server.fidelity.lang.analysis import LangAnalysis
from server.fidelity.text import pyast
from server.fidelity.units.gaps import _gap_atoms, split_fstring_atoms
from server.fidelity.units.items import (  # re-exported: the classifier builds on them
    _NEWLINES,
    CODE,
    COMMENT,
    EOL,
    RENAME,
    SPACE,
    Atom,
    Item,
    Side,
    _bracket_balance,
    _fstring_rename,
    _renamed,
)
from server.protocol.report import Position, Range, TextEdit

__all__ = [
    "CODE",
    "COMMENT",
    "EOL",
    "RENAME",
    "SPACE",
    "Atom",
    "Item",
    "Side",
    "atom_edit",
    "comment_delta",
    "expand_regions",
    "mark_dependent",
    "region_atoms",
    "split_definitions",
]


# ---------------------------------------------------------------- regions and atoms


def expand_regions(old: Side, new: Side, regions: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Grow line regions to whole tokens (a multi-line string), moving both sides alike.

    The lines between two regions match one to one, so a region may grow into them on both sides;
    one that would reach its neighbour is joined with it first (the union is again a region)."""
    pending: list[list[int]] = []
    for r in regions:  # only blank lines between two regions: one region (a blank line is a weak anchor)
        if pending and all(not ln.strip() for ln in old.lines[pending[-1][1] : r[0] - 1]):
            pending[-1][1], pending[-1][3] = r[1], r[3]
        else:
            pending.append(list(r))
    out: list[list[int]] = []
    i = 0
    while i < len(pending):
        cur = pending[i]
        up = down = 0
        for side, start, end in ((old, cur[0], cur[1]), (new, cur[2], cur[3])):
            if end < start:
                continue
            lo, hi = side.a.token_span(start, end)
            if hi > lo:
                up = max(up, start - side.rows[lo])
                down = max(down, side.end_rows[hi - 1] - end)
        room_up = cur[0] - (out[-1][1] + 1) if out else cur[0] - 1
        if out and up > room_up:
            prev = out.pop()
            pending[i] = [prev[0], cur[1], prev[2], cur[3]]
            continue
        nxt = pending[i + 1] if i + 1 < len(pending) else None
        room_down = nxt[0] - cur[1] - 1 if nxt else len(old.lines) - cur[1]
        if nxt is not None and down > room_down:
            pending[i + 1] = [cur[0], nxt[1], cur[2], nxt[3]]
            i += 1
            continue
        down = max(0, min(down, room_down, len(new.lines) - cur[3]))
        up = max(0, min(up, room_up))
        out.append([cur[0] - up, cur[1] + down, cur[2] - up, cur[3] + down])
        i += 1
    return [tuple(r) for r in out]  # type: ignore[misc]


def region_atoms(
    old: Side,
    new: Side,
    region: tuple[int, int, int, int],
    renames: dict[str, str],
    scopes: dict[str, tuple[int, int]] | None = None,
) -> list[Atom]:
    a_start, a_end, b_start, b_end = region
    a_lo, a_hi = old.line_start(a_start), old.line_start(a_end + 1) if a_end >= a_start else old.line_start(a_start)
    b_lo, b_hi = new.line_start(b_start), new.line_start(b_end + 1) if b_end >= b_start else new.line_start(b_start)
    t_lo, t_hi = old.a.token_span(a_start, a_end)
    u_lo, u_hi = new.a.token_span(b_start, b_end)
    old_items = old.items(t_lo, t_hi, a_start, a_end) if a_end >= a_start else []
    new_items = new.items(u_lo, u_hi, b_start, b_end) if b_end >= b_start else []
    skip = old.not_variables() if renames else set()

    def key(i: Item) -> str:
        if i.token < 0 or i.token in skip:
            return i.key
        scope = scopes.get(i.key) if scopes else None
        if scope is not None and not scope[0] <= old.rows[i.token] <= scope[1]:
            return i.key  # renamed in another function only
        return _renamed(
            i.key,
            {k: v for k, v in renames.items() if not scopes or k not in scopes} if i.key not in renames else renames,
        )

    old_keys = [key(i) for i in old_items] if renames else [i.key for i in old_items]
    new_keys = [i.key for i in new_items]
    atoms: list[Atom] = []
    prev_a, prev_b, pi, pj = a_lo, b_lo, 0, 0
    # another language has no NEWLINE tokens: its lines come from where the items start
    lines = (
        (_lines_from_rows(old, old_items), _lines_from_rows(new, new_items))
        if isinstance(old.a, LangAnalysis)
        else (None, None)
    )
    anchors = align(old_items, old_keys, new_keys, *lines)
    n_old = len(old_items)
    anchors.append((n_old, len(new_items)))
    old_text, new_text = old.text, new.text
    x: Item | None
    y: Item | None
    for i, j in anchors:
        if i < n_old:  # an aligned pair (both indices valid); else the region's end
            x, y = old_items[i], new_items[j]
            end_a, end_b = x.start, y.start
        else:
            x = y = None
            end_a, end_b = a_hi, b_hi
        if (end_a - prev_a or end_b - prev_b) and old_text[prev_a:end_a] != new_text[prev_b:end_b]:
            atoms.extend(_gap_atoms(old, new, prev_a, end_a, prev_b, end_b, old_items[pi:i], new_items[pj:j], x))
        if x is not None and y is not None:
            if old_text[x.start : x.end] != new_text[y.start : y.end]:
                if x.key != y.key:
                    pair = (x.key, y.key) if x.key in renames else _fstring_rename(x.key, renames)
                    atoms.append(Atom(x.start, x.end, y.start, y.end, RENAME, [x], [y], rename=pair))
                else:
                    atoms.append(Atom(x.start, x.end, y.start, y.end, EOL, [x], [y]))
            prev_a, prev_b = x.end, y.end
        pi, pj = i + 1, j + 1
    if renames:
        atoms = [piece for a in atoms for piece in (split_fstring_atoms(old, new, a, renames) or [a])]
    return _balance(atoms)


def align(
    old_items: list[Item],
    old_keys: list[str],
    new_keys: list[str],
    old_lines: list[tuple[int, int]] | None = None,
    new_items_lines: list[tuple[int, int]] | None = None,
) -> list[tuple[int, int]]:
    """Aligned item pairs: logical lines first (similar lines paired), then tokens within paired lines.

    A flat token alignment may tie a line's tokens to a later line's line break (a fix `+ 1` then lands
    in the `except` block a wrap added); pairing whole lines first keeps each change on its line.
    `old_lines`/`new_items_lines` give the lines of a language without NEWLINE tokens."""
    del old_items
    if new_items_lines is None:
        new_items_lines = _lines_from_keys(new_keys)
    if old_lines is None:
        old_lines = _lines_from_keys(old_keys)
    if len(old_lines) * len(new_keys) > 200_000:
        return _token_pairs(old_keys, new_keys, 0, len(old_keys), 0, len(new_keys))
    old_group = [tuple(old_keys[a:b]) for a, b in old_lines]
    new_group = [tuple(new_keys[a:b]) for a, b in new_items_lines]
    pairs: list[tuple[int, int]] = []
    i_prev = j_prev = 0
    ops = [op for op in Indel.opcodes(old_group, new_group) if op.tag == "equal"]
    for op in [*ops, None]:
        i_next, j_next = (op.src_start, op.dest_start) if op is not None else (len(old_group), len(new_group))
        if i_next > i_prev and j_next > j_prev:  # a replaced block (Indel says delete + insert)
            _pair_lines(old_keys, new_keys, old_lines, new_items_lines, i_prev, i_next, j_prev, j_next, pairs)
        if op is None:
            break
        for i, j in zip(range(op.src_start, op.src_end), range(op.dest_start, op.dest_end)):
            (a0, a1), (b0, b1) = old_lines[i], new_items_lines[j]
            pairs.extend(zip(range(a0, a1), range(b0, b1)))
        i_prev, j_prev = op.src_end, op.dest_end
    pairs.sort()
    return pairs


def _lines_from_rows(side: Side, items: list[Item]) -> list[tuple[int, int]]:
    """Item index ranges of one text line each (items in text order)."""
    out: list[tuple[int, int]] = []
    start, row = 0, None
    for n, it in enumerate(items):
        r = side.line_of(it.start)
        if row is not None and r != row:
            out.append((start, n))
            start = n
        row = r
    if start < len(items):
        out.append((start, len(items)))
    return out


def _lines_from_keys(keys: list[str]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start = 0
    for n, k in enumerate(keys):
        if k[:1] == "\x00" and n == start:
            out.append((n, n + 1))
            start = n + 1
        elif k in _NEWLINES:
            out.append((start, n + 1))
            start = n + 1
    if start < len(keys):
        out.append((start, len(keys)))
    return out


def _token_pairs(a: list[str], b: list[str], a0: int, a1: int, b0: int, b1: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for op in Indel.opcodes(a[a0:a1], b[b0:b1]):
        if op.tag == "equal":
            out.extend(zip(range(a0 + op.src_start, a0 + op.src_end), range(b0 + op.dest_start, b0 + op.dest_end)))
    return out


def _pair_lines(
    a: list[str],
    b: list[str],
    la: list[tuple[int, int]],
    lb: list[tuple[int, int]],
    i1: int,
    i2: int,
    j1: int,
    j2: int,
    pairs: list[tuple[int, int]],
) -> None:
    """Pair the most similar lines of a replaced block (difflib's fancy replace), recursively."""
    if i1 >= i2 or j1 >= j2:
        return
    if (i2 - i1) * (j2 - j1) > 400:
        pairs.extend(_token_pairs(a, b, la[i1][0], la[i2 - 1][1], lb[j1][0], lb[j2 - 1][1]))
        return
    best, bi, bj = 0.5, -1, -1
    for i in range(i1, i2):
        x = a[la[i][0] : la[i][1]]
        for j in range(j1, j2):
            score = Indel.normalized_similarity(x, b[lb[j][0] : lb[j][1]])
            if score > best:
                best, bi, bj = score, i, j
    if bi < 0:  # no similar lines: the old ones go, the new ones come (no chance token matches)
        return
    _pair_lines(a, b, la, lb, i1, bi, j1, bj, pairs)
    pairs.extend(_token_pairs(a, b, la[bi][0], la[bi][1], lb[bj][0], lb[bj][1]))
    _pair_lines(a, b, la, lb, bi + 1, i2, bj + 1, j2, pairs)


def _closing(atoms: list[Atom], i: int) -> int | None:
    """The atom that balances atom i's brackets when the atoms between balance together (one that
    opens a bracket a later one closes: a call reformatted inside a block newly wrapped in `try {`)."""
    da, db = _bracket_balance(atoms[i].old), _bracket_balance(atoms[i].new)
    sa = sb = 0  # the brackets the atoms between leave open
    for j in range(i + 1, len(atoms)):
        a, b = _bracket_balance(atoms[j].old), _bracket_balance(atoms[j].new)
        if not sa and not sb and a == -da and b == -db and atoms[j].category == CODE and atoms[j].group < 0:
            return j
        sa, sb = sa + a, sb + b
        if sa < 0 or sb < 0:
            return None  # it closes a bracket opened before: not nested between the two
    return None


_groups = itertools.count()  # ids only need to differ within one edit


def _balance(atoms: list[Atom]) -> list[Atom]:
    """Join a code atom whose brackets do not balance with the atoms after it until they do.

    When the atoms in between balance on their own (`w + h` to `(width * h)`), only the two bracket
    atoms go together and what lies between stays separate units."""
    out: list[Atom] = []
    i = 0
    while i < len(atoms):
        atom = atoms[i]
        if atom.category == CODE and atom.group < 0 and (_bracket_balance(atom.old) or _bracket_balance(atom.new)):
            pair = _closing(atoms, i)  # (an atom already paired as a closing one opens nothing)
            if pair is not None:
                group = next(_groups)
                atom.group = atoms[pair].group = group
        if atom.category == CODE and atom.group < 0:
            da, db = _bracket_balance(atom.old), _bracket_balance(atom.new)
            j = i
            while (da or db) and j + 1 < len(atoms):
                j += 1
                nxt = atoms[j]
                da += _bracket_balance(nxt.old)
                db += _bracket_balance(nxt.new)
                atom = Atom(atom.a0, nxt.a1, atom.b0, nxt.b1, CODE, atom.old + nxt.old, atom.new + nxt.new)
            i = j
        out.append(atom)
        i += 1
    return out


# ---------------------------------------------------------------- standing alone


def mark_dependent(old: Side, new: Side, atom: Atom) -> None:
    """An atom that cannot be applied alone: an indentation change, or statements cut in half."""
    if atom.category == SPACE:
        atom.dependent = atom.indent
        return
    if atom.category != CODE:
        return
    if not any(i.key in _NEWLINES and i.token >= 0 for i in atom.old + atom.new):
        return
    atom.dependent = not (_complete(old, atom.code_old()) and _complete(new, atom.code_new()))


def _complete(side: Side, items: list[Item]) -> bool:
    """Do these tokens form whole statements (a header with its body) that parse on their own?"""
    if not items:
        return True
    first, last = items[0], items[-1]
    if last.key not in _NEWLINES:
        return False
    line_start = side.line_start(side.line_of(first.start))
    if side.text[line_start : first.start].strip():
        return False
    body = side.text[line_start : last.end]
    indent = len(body) - len(body.lstrip(" \t"))
    lines = [ln[indent:] if ln[:indent].strip() == "" else ln for ln in body.splitlines(keepends=True)]
    try:
        pyast.parse("".join(lines), "<unit>")
    except (SyntaxError, ValueError):
        return False
    return True


_DEFINITION = re.compile(r"[ \t]*(?:@|(?:async[ \t]+)?def[ \t]|class[ \t])")
_LEAD_IN = re.compile(r"[ \t]*(?:#[^\n\r]*)?(?:\r\n|\n|\r)?$")  # a blank or comment line before a definition


def split_definitions(old_text: str, new: Side, atom: Atom) -> list[Atom]:
    """A pure insertion of whole statements split before each definition it adds at its outermost
    indentation (`def`, `class`, a decorator, with the comments and blank lines just above it; what it
    replaces may be whitespace only, which goes with the first piece): new
    methods and functions are units of their own, so each is judged, accepted or reverted by itself and
    none is excused by the code it happens to be inserted next to. Every piece after the first must be
    whole statements that parse; otherwise (or when there is nothing to split) the atom is returned as it
    is. The first piece may still not stand alone (an `elif` branch before a new method): it stays
    dependent, grouped with the rest of its function's such atoms."""
    if atom.category != CODE or atom.group >= 0 or not atom.new or atom.code_old() or atom.old:
        return [atom]
    if atom.a0 != atom.a1 and old_text[atom.a0 : atom.a1].strip():
        return [atom]
    text = new.text
    first, last = new.line_of(atom.b0), new.line_of(max(atom.b1 - 1, atom.b0))
    if last <= first:
        return [atom]
    cuts: list[int] = []
    least: int | None = None  # the smallest indentation of a code line so far
    lead: int | None = None  # where the comments and blank lines above the current line begin
    for ln in range(first, last + 1):
        lo, hi = new.line_start(ln), new.line_start(ln + 1)
        if lo < atom.b0:
            continue
        line = text[lo:hi]
        if _LEAD_IN.match(line):
            lead = lo if lead is None else lead
            continue
        indent = len(line) - len(line.lstrip(" \t"))
        at = lead if lead is not None else lo
        if _DEFINITION.match(line) and least is not None and indent <= least and at > atom.b0 and at not in cuts:
            cuts.append(at)
        if least is None or indent < least:
            least = indent
        lead = None
        if line.lstrip(" \t").startswith("@"):
            lead = at  # a decorator goes with the definition below it
    if not cuts:
        return [atom]
    bounds = [atom.b0, *cuts, atom.b1]
    pieces = []
    for n, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        items = [it for it in atom.new if lo <= it.start < hi]
        pieces.append(Atom(atom.a0 if n == 0 else atom.a1, atom.a1, lo, hi, CODE, [], items))
    if any(not p.new for p in pieces) or any(not _complete(new, p.code_new()) for p in pieces[1:]):
        return [atom]
    pieces[0].dependent = atom.dependent and not _complete(new, pieces[0].code_new())
    return pieces


_NO_COMMENTS: Counter[str] = Counter()  # shared, never mutated


def comment_delta(old: list[str], new: list[str]) -> tuple[Counter[str], Counter[str]]:
    """Comments removed and added (as multisets); most units have none, so no Counter is built."""
    if not old and not new:
        return _NO_COMMENTS, _NO_COMMENTS
    a, b = Counter(old), Counter(new)
    return a - b, b - a


# ---------------------------------------------------------------- edits


def atom_edit(old: Side, new: Side, atom: Atom) -> TextEdit:
    """The minimal text edit of one atom (common head and tail trimmed, never between \\r and \\n)."""
    a0, a1, b0, b1 = atom.a0, atom.a1, atom.b0, atom.b1
    ot, nt = old.text, new.text
    if atom.category == RENAME:  # the whole name: `numbers` to `values`, not `number` to `value`
        return TextEdit(range=Range(start=old.position(a0), end=old.position(a1)), new_text=nt[b0:b1])
    while a0 < a1 and b0 < b1 and ot[a0] == nt[b0] and not (ot[a0] == "\r" and ot[a0 + 1 : a0 + 2] == "\n"):
        a0 += 1
        b0 += 1
    while a1 > a0 and b1 > b0 and ot[a1 - 1] == nt[b1 - 1] and not (ot[a1 - 1] == "\n" and ot[a1 - 2 : a1 - 1] == "\r"):
        a1 -= 1
        b1 -= 1
    return TextEdit(range=Range(start=old.position(a0), end=old.position(a1)), new_text=nt[b0:b1])


def trimmed(old: Side, new: Side, atom: Atom) -> tuple[int, int, int, int]:
    e = atom_edit(old, new, atom)
    a0 = _offset(old, e.range.start)
    a1 = _offset(old, e.range.end)
    b0 = atom.b0 + (a0 - atom.a0)
    return a0, a1, b0, b0 + len(e.new_text)


def _offset(side: Side, pos: Position) -> int:
    if pos.line >= len(side.lines):
        return len(side.text)
    line = side.lines[pos.line]
    if line.isascii():
        return side.starts[pos.line] + pos.character
    units = col = 0
    while col < len(line) and units < pos.character:
        units += 2 if ord(line[col]) > 0xFFFF else 1
        col += 1
    return side.starts[pos.line] + col
