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
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field

from rapidfuzz.distance import Indel

from server.fidelity.analysis import Analysis
from server.fidelity.hunks import _placeholder_lines, not_variables
from server.fidelity.lang.analysis import LangAnalysis
from server.fidelity.report import Position, Range, TextEdit
from server.fidelity.textedits import utf16_len

CODE, COMMENT, SPACE, RENAME, EOL = "code", "comment", "space", "rename", "eol"
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_NEWLINES = ("\n", "\r\n", "")


@dataclass(slots=True)
class Item:
    """A token (code) or a comment, with its character interval in its side's text."""

    key: str
    start: int
    end: int
    token: int  # index in the side's raw token list; -1 for a comment


@dataclass(slots=True)
class Atom:
    a0: int  # original interval [a0, a1)
    a1: int
    b0: int  # edited interval [b0, b1)
    b1: int
    category: str
    old: list[Item] = field(default_factory=list)
    new: list[Item] = field(default_factory=list)
    rename: tuple[str, str] | None = None
    indent: bool = False  # a changed indentation at the start of a logical line
    dependent: bool = False  # cannot be applied on its own
    group: int = -1  # atoms of one bracket pair share a group (accepted together)

    def code_old(self) -> list[Item]:
        return [i for i in self.old if i.token >= 0]

    def code_new(self) -> list[Item]:
        return [i for i in self.new if i.token >= 0]


class Side:
    """Offsets of one text's lines, tokens and comments (computed for the changed regions only)."""

    def __init__(self, analysis: Analysis) -> None:
        self.a = analysis
        self.text = analysis.text
        self.lines = analysis.lines
        self.starts = [0, *itertools.accumulate(map(len, self.lines))]
        self.strings = analysis.lexed.strings
        self.rows, self.end_rows = analysis.token_rows
        m = analysis.line_map
        comments = analysis.lexed.comments
        self.comments = [(m[r], c) for r, c in comments] if m else comments
        self.comment_rows = [r for r, _ in self.comments]
        self._offsets: dict[int, tuple[int, int]] = {}
        self._not_variables: set[int] | None = None

    def not_variables(self) -> set[int]:
        if self._not_variables is None:
            self._not_variables = not_variables(self.strings)
        return self._not_variables

    def line_start(self, line: int) -> int:
        """Offset of 1-based line `line` (one past the last line: the text's end)."""
        return self.starts[min(max(line, 1), len(self.starts)) - 1]

    def token_offsets(self, lo: int, hi: int) -> None:
        """Find the character interval of tokens lo..hi-1 (in order, each at or after its row)."""
        cursor = self.line_start(self.rows[lo]) if lo < len(self.rows) else len(self.text)
        text, strings, rows, starts = self.text, self.strings, self.rows, self.starts
        last = len(starts)
        for i in range(lo, hi):
            s = strings[i]
            row = rows[i]
            line_start = starts[row - 1] if 0 < row <= last else self.line_start(row)
            begin = cursor if cursor > line_start else line_start
            if s == "":
                pos = begin
            else:
                pos = text.find(s, begin)
                if pos < 0:
                    pos = begin
            cursor = pos + len(s)
            self._offsets[i] = (pos, cursor)

    def items(self, lo: int, hi: int, first_line: int, last_line: int) -> list[Item]:
        if hi > lo:
            missing = [i for i in (lo, hi - 1) if i not in self._offsets]
            if missing:
                self.token_offsets(lo, hi)
        strings, offsets = self.strings, self._offsets
        out = [Item("\n" if s == "\r\n" else s, *offsets[i], i) for i, s in zip(range(lo, hi), strings[lo:hi])]
        c_lo = bisect_right(self.comment_rows, first_line - 1)
        c_hi = bisect_right(self.comment_rows, last_line)
        if c_lo < c_hi:
            for row, comment in self.comments[c_lo:c_hi]:
                content = self.lines[row - 1].rstrip("\r\n")
                start = self.starts[row - 1] + (len(content) - len(comment) if content.endswith(comment)
                                               else max(content.find(comment), 0))
                out.append(Item("\x00" + comment, start, start + len(comment), -1))
            out.sort(key=lambda it: (it.start, it.token < 0))
        return out

    def position(self, offset: int) -> Position:
        line = bisect_right(self.starts, offset) - 1
        if line >= len(self.lines):
            last = self.lines[-1] if self.lines else "\n"
            if not last.endswith(("\n", "\r")):  # the end of a last line without a line break
                return Position(line=len(self.lines) - 1, character=utf16_len(last))
            return Position(line=len(self.lines), character=0)
        text = self.lines[line]
        col = offset - self.starts[line]
        return Position(line=line, character=utf16_len(text[:col]) if not text.isascii() else col)

    def line_of(self, offset: int) -> int:
        """1-based line holding `offset`."""
        return bisect_right(self.starts, offset)


# ---------------------------------------------------------------- regions and atoms

def expand_regions(old: Side, new: Side, regions: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Grow line regions to whole tokens (a multi-line string), moving both sides alike.

    The lines between two regions match one to one, so a region may grow into them on both sides;
    one that would reach its neighbour is joined with it first (the union is again a region)."""
    pending: list[list[int]] = []
    for r in regions:  # only blank lines between two regions: one region (a blank line is a weak anchor)
        if pending and all(not ln.strip() for ln in old.lines[pending[-1][1]:r[0] - 1]):
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


def _is_line_start(text: str, offset: int) -> bool:
    return offset == 0 or text[offset - 1] in "\n\r"


_FSTRING = re.compile(r"^[rRbB]?[fF][rRbB]?['\"]")


def _renamed(key: str, renames: dict[str, str]) -> str:
    """A token as it reads after the renames: a name, or the names inside an f-string's fields."""
    if not renames:
        return key
    found = renames.get(key)
    if found is not None:
        return found
    if _FSTRING.match(key) and "{" in key:
        return _fields_renamed(key, renames)
    return key


def _fields_renamed(key: str, renames: dict[str, str]) -> str:
    words = re.compile(r"\b(" + "|".join(map(re.escape, renames)) + r")\b")
    return re.sub(r"\{[^{}]*\}", lambda m: words.sub(lambda w: renames[w.group(1)], m.group(0)), key)


def _fstring_rename(key: str, renames: dict[str, str]) -> tuple[str, str]:
    for old, new in renames.items():
        if _fields_renamed(key, {old: new}) != key:
            return old, new
    return next(iter(renames.items()))


def _starts_logical_line(side: Side, item: Item) -> bool:
    return item.token == 0 or side.strings[item.token - 1] in _NEWLINES


def region_atoms(old: Side, new: Side, region: tuple[int, int, int, int], renames: dict[str, str],
                 scopes: dict[str, tuple[int, int]] | None = None) -> list[Atom]:
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
        return _renamed(i.key, {k: v for k, v in renames.items() if not scopes or k not in scopes} if
                        i.key not in renames else renames)

    old_keys = [key(i) for i in old_items] if renames else [i.key for i in old_items]
    new_keys = [i.key for i in new_items]
    atoms: list[Atom] = []
    prev_a, prev_b, pi, pj = a_lo, b_lo, 0, 0
    # another language has no NEWLINE tokens: its lines come from where the items start
    lines = (_lines_from_rows(old, old_items), _lines_from_rows(new, new_items)) if isinstance(old.a, LangAnalysis) \
        else (None, None)
    anchors = align(old_items, old_keys, new_keys, *lines)
    n_old = len(old_items)
    anchors.append((n_old, len(new_items)))
    old_text, new_text = old.text, new.text
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
            if old_text[x.start:x.end] != new_text[y.start:y.end]:
                if x.key != y.key:
                    pair = (x.key, y.key) if x.key in renames else _fstring_rename(x.key, renames)
                    atoms.append(Atom(x.start, x.end, y.start, y.end, RENAME, [x], [y], rename=pair))
                else:
                    atoms.append(Atom(x.start, x.end, y.start, y.end, EOL, [x], [y]))
            prev_a, prev_b = x.end, y.end
        pi, pj = i + 1, j + 1
    return _balance(atoms)


def align(old_items: list[Item], old_keys: list[str], new_keys: list[str],
          old_lines: list[tuple[int, int]] | None = None,
          new_items_lines: list[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
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
    out = []
    for op in Indel.opcodes(a[a0:a1], b[b0:b1]):
        if op.tag == "equal":
            out.extend(zip(range(a0 + op.src_start, a0 + op.src_end), range(b0 + op.dest_start, b0 + op.dest_end)))
    return out


def _pair_lines(a: list[str], b: list[str], la: list[tuple[int, int]], lb: list[tuple[int, int]],
                i1: int, i2: int, j1: int, j2: int, pairs: list[tuple[int, int]]) -> None:
    """Pair the most similar lines of a replaced block (difflib's fancy replace), recursively."""
    if i1 >= i2 or j1 >= j2:
        return
    if (i2 - i1) * (j2 - j1) > 400:
        pairs.extend(_token_pairs(a, b, la[i1][0], la[i2 - 1][1], lb[j1][0], lb[j2 - 1][1]))
        return
    best, bi, bj = 0.5, -1, -1
    for i in range(i1, i2):
        x = a[la[i][0]:la[i][1]]
        for j in range(j1, j2):
            score = Indel.normalized_similarity(x, b[lb[j][0]:lb[j][1]])
            if score > best:
                best, bi, bj = score, i, j
    if bi < 0:  # no similar lines: the old ones go, the new ones come (no chance token matches)
        return
    _pair_lines(a, b, la, lb, i1, bi, j1, bj, pairs)
    pairs.extend(_token_pairs(a, b, la[bi][0], la[bi][1], lb[bj][0], lb[bj][1]))
    _pair_lines(a, b, la, lb, bi + 1, i2, bj + 1, j2, pairs)


def _gap_atoms(old: Side, new: Side, a0: int, a1: int, b0: int, b1: int,
               old_items: list[Item], new_items: list[Item], following: Item | None) -> list[Atom]:
    """Split one differing gap into a leading-whitespace atom, then code and comment atoms."""
    out: list[Atom] = []
    nothing_old = a0 == a1 and all(it.start == it.end for it in old_items)  # (a missing final line break)
    if nothing_old and (k := _line_end_cut(new, new_items, b0, b1)):
        # the end of a line (a fix's `)`) and whole lines after it (a function appended): two changes
        cut = new_items[k].start
        return (_gap_atoms(old, new, a0, a1, b0, cut, [], new_items[:k], following)
                + _gap_atoms(old, new, a0, a1, cut, b1, [], new_items[k:], following))
    if not old_items and (cuts := _statement_cuts(new, new_items, b0, b1)):
        # whole lines inserted: an import and the function after it are two changes
        bounds = [b0, *(new.line_start(new.line_of(new_items[i].start)) for i in cuts), b1]
        items = [0, *cuts, len(new_items)]
        for k in range(len(bounds) - 1):
            out.extend(_gap_atoms(old, new, a0, a1, bounds[k], bounds[k + 1], [], new_items[items[k]:items[k + 1]],
                                  following))
        return out
    la = old_items[0].start if old_items else a1
    lb = new_items[0].start if new_items else b1
    lead_a, lead_b = old.text[a0:la], new.text[b0:lb]
    if not old_items and not new_items:  # whitespace only: a changed indentation cannot stand alone
        nxt = following
        indent = (nxt is not None and nxt.token >= 0 and _starts_logical_line(old, nxt)
                  and lead_a.rsplit("\n", 1)[-1] != lead_b.rsplit("\n", 1)[-1])
        return [Atom(a0, a1, b0, b1, SPACE, indent=indent)]
    if ("\n" in lead_a or "\n" in lead_b or _is_line_start(old.text, a0)) and old_items and new_items:
        if lead_a != lead_b:
            nxt = old_items[0] if old_items else following
            indent = (nxt is not None and nxt.token >= 0 and _starts_logical_line(old, nxt)
                      and lead_a.rsplit("\n", 1)[-1] != lead_b.rsplit("\n", 1)[-1])
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
    for lo_a, hi_a, lo_b, hi_b, ia, ib, is_code in ((a0, cut_a, b0, cut_b, left_a, left_b, first_is_code),
                                                    (cut_a, a1, cut_b, b1, right_a, right_b, not first_is_code)):
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
        starts = prev is None or prev.key in _NEWLINES or kind == "placeholder" or (
            lang and side.line_of(it.start) > side.line_of(prev.end)
            and (prev.key in (";", "}") or _directive(text, side, prev)))
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
            after = any(x.token >= 0 and x.key not in _NEWLINES for x in items[n + 1:])
            return n if before and after else 0
    return 0


def _directive(text: str, side: Side, item: Item) -> bool:
    """The item is on a preprocessor line (`#include <x>` ends with no `;`)."""
    line = side.line_of(item.start)
    return text[side.line_start(line):item.start].lstrip().startswith("#") or item.key.startswith("#")


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
    return ((brackets(new_items) and _bracket_balance(old_items) == 0)
            or (brackets(old_items) and _bracket_balance(new_items) == 0))


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


def _closing(atoms: list[Atom], i: int) -> int | None:
    """The atom that balances atom i's brackets when every atom between balances on its own."""
    da, db = _bracket_balance(atoms[i].old), _bracket_balance(atoms[i].new)
    for j in range(i + 1, len(atoms)):
        a, b = _bracket_balance(atoms[j].old), _bracket_balance(atoms[j].new)
        if a == -da and b == -db and atoms[j].category == CODE and atoms[j].group < 0:
            return j
        if a or b:
            return None
    return None


def _bracket_balance(items: list[Item]) -> int:
    depth = 0
    for it in items:
        if it.token >= 0 and len(it.key) == 1:
            if it.key in _OPEN:
                depth += 1
            elif it.key in _CLOSE:
                depth -= 1
    return depth


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
    if side.text[line_start:first.start].strip():
        return False
    body = side.text[line_start:last.end]
    indent = len(body) - len(body.lstrip(" \t"))
    lines = [ln[indent:] if ln[:indent].strip() == "" else ln for ln in body.splitlines(keepends=True)]
    try:
        compile("".join(lines), "<unit>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except (SyntaxError, ValueError):
        return False
    return True


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
    while a0 < a1 and b0 < b1 and ot[a0] == nt[b0] and not (ot[a0] == "\r" and ot[a0 + 1:a0 + 2] == "\n"):
        a0 += 1
        b0 += 1
    while a1 > a0 and b1 > b0 and ot[a1 - 1] == nt[b1 - 1] and not (ot[a1 - 1] == "\n" and ot[a1 - 2:a1 - 1] == "\r"):
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
