"""What kind of change each change unit is, and the units as report records.

Each changed token of a unit is explained by the first matching kind: docstring, import, signature,
added guard, placeholder; tokens nothing explains are `logic`, unless the unit leaves the syntax tree
of its statements unchanged (parentheses, quotes, wrapping, trailing commas): then it is
`formatting_only`. Comments and whitespace are units of their own (`atoms.py`).
"""

from __future__ import annotations

import itertools
from collections import Counter

import msgspec
from rapidfuzz.distance import Levenshtein

import server.fidelity.lang.dispatch as other
from server.fidelity.lang.analysis import LangAnalysis
from server.fidelity.text.analysis import Analysis
from server.fidelity.text.structure import FunctionInfo, Structure
from server.fidelity.text.textedits import apply_text_edits, region_edit
from server.fidelity.units.atoms import (
    CODE,
    EOL,
    RENAME,
    Atom,
    Item,
    Side,
    atom_edit,
    comment_delta,
    expand_regions,
    mark_dependent,
    region_atoms,
    split_definitions,
)
from server.fidelity.units.regions import (
    LineRegion,
    _in_ranges,
    _is_name,
    _placeholder_lines,
    _plural,
    _signature_changes,
    line_regions,
    rename_map,
)
from server.fidelity.units.renames import _regions_after_renames, _renamed_lines
from server.fidelity.units.trees import StatementTrees, _plausibly_formatting, _same_layout
from server.protocol.report import UNREQUESTED_KINDS, Hunk, TextEdit


class Unit:
    """Atoms accepted or reverted together, with what the classifier says about them."""

    __slots__ = ("atoms", "kinds", "details", "renames", "sig_rename")

    def __init__(self, atoms: list[Atom]) -> None:
        self.atoms = atoms
        self.kinds: list[str] = []
        self.details: list[str] = []
        self.renames: dict[str, str] = {}
        self.sig_rename = False


class UnitBuilder:
    """Builds and classifies the change units of one edit."""

    def __init__(self, original: Analysis, edited: Analysis, target: range | None) -> None:
        self.original, self.edited, self.target = original, edited, target
        self.lang = isinstance(original, LangAnalysis)  # another language: its own trees, no NEWLINE tokens
        self.lang_original = original if isinstance(original, LangAnalysis) else None  # the same, typed
        self.old, self.new = Side(original), Side(edited)
        regions = expand_regions(
            self.old,
            self.new,
            [
                (r.a_start, r.a_end, r.b_start, r.b_end)
                for r in line_regions(original.lines, edited.lines, indent_free=self.lang)
            ],
        )
        self.regions = regions
        both_parse = original.parses and edited.parses
        line_regs = [LineRegion(*r) for r in regions]
        self.scopes: dict[str, tuple[int, int]] = {}
        self.renames = rename_map(original, edited, line_regs, self.scopes) if both_parse else {}
        if self.renames:  # align lines again as they read after the renames: a renamed line is no anchor elsewhere
            mapped = _renamed_lines(original.lines, self.renames, self.scopes)
            self.regions = regions = expand_regions(
                self.old,
                self.new,
                [
                    (r.a_start, r.a_end, r.b_start, r.b_end)
                    for r in line_regions(original.lines, edited.lines, indent_free=True, a_keys=mapped)
                ]
                if self.lang
                else _regions_after_renames(original.lines, mapped, edited.lines),
            )
        self.sig_old, self.sig_new, self.sig_changed = (
            _signature_changes(original, edited) if both_parse else ([], [], set())
        )
        try:
            self.atoms = [
                atom for r in regions for atom in region_atoms(self.old, self.new, r, self.renames, self.scopes)
            ]
        except (IndexError, ValueError):  # offsets we could not find (odd line breaks): whole regions
            self.atoms = []
        if not _consistent(self.old.text, self.new.text, self.atoms):
            self.atoms = [self._region_atom(r) for r in regions]
        for atom in self.atoms:
            if atom.category == RENAME and self.renames.get(atom.rename[0]) != atom.rename[1]:  # type: ignore[index]
                atom.category = CODE  # not the consistent rename (cannot happen with mapped keys; kept safe)
            mark_dependent(self.old, self.new, atom)
        if not self.lang:  # new definitions inserted together are units of their own
            self.atoms = [piece for atom in self.atoms for piece in split_definitions(self.old.text, self.new, atom)]
        if self.lang:  # a new block's re-indented lines go with it (indentation is layout there)
            other.join_wrapped_indents(self.old.text, self.new.text, self.atoms)
        self.changed_new = {it.token for a in self.atoms for it in a.new if it.token >= 0 and a.category != RENAME}
        self.trees = StatementTrees(original, self.lang_original, self.old, self.new)

    def _region_atom(self, region: tuple[int, int, int, int]) -> Atom:
        """A whole line region as one atom: the fallback when token offsets cannot be trusted."""
        a_start, a_end, b_start, b_end = region
        old, new = self.old, self.new
        t_lo, t_hi = self.original.token_span(a_start, a_end)
        u_lo, u_hi = self.edited.token_span(b_start, b_end)
        return Atom(
            old.line_start(a_start),
            old.line_start(a_end + 1) if a_end >= a_start else old.line_start(a_start),
            new.line_start(b_start),
            new.line_start(b_end + 1) if b_end >= b_start else new.line_start(b_start),
            CODE,
            [Item(old.strings[i], 0, 0, i) for i in range(t_lo, t_hi)],
            [Item(new.strings[i], 0, 0, i) for i in range(u_lo, u_hi)],
        )

    # -- grouping ----------------------------------------------------------------------
    def units(self) -> list[Unit]:
        groups: dict[object, list[Atom]] = {}
        order: list[object] = []
        for n, atom in enumerate(self.atoms):
            if atom.category == RENAME:
                key: object = ("rename", atom.rename)
            elif atom.dependent:
                key = ("dependent", self._outer_function(atom))
            elif atom.group >= 0:
                key = ("brackets", atom.group)
            else:
                key = n
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(atom)
        units = _merge_same_point(order, groups)
        for u in units:
            self._classify(u)
        return self._join(units)

    def _classified(self, atom: Atom) -> Unit:
        unit = Unit([atom])
        self._classify(unit)
        return unit

    def _outer_function(self, atom: Atom) -> str | None:
        at = atom.a0
        if at == atom.a1 and at and self.old.text[at - 1] in "\n\r":
            at -= 1  # an insertion at a line start: the lines it follows (a handler after the body)
        line = self.old.line_of(at)
        for f in self.original.structure.functions:
            if "." not in f.qualname and f.start <= line <= f.end:
                return f.qualname
        return None

    def _join(self, units: list[Unit]) -> list[Unit]:
        """Join neighbouring single-atom units of the same kinds (two tokens of one fix, a reformatted block)."""
        out: list[Unit] = []
        position = {id(a): n for n, a in enumerate(self.atoms)}
        for u in sorted(units, key=lambda u: position[id(u.atoms[0])]):
            prev = out[-1] if out else None
            if (
                prev is not None
                and len(prev.atoms) == 1
                and len(u.atoms) == 1
                and not prev.renames
                and not u.renames
                and not prev.atoms[0].dependent
                and not u.atoms[0].dependent
                and not _same_point(prev.atoms[0], u.atoms[0])
                and prev.kinds == u.kinds
                and position[id(u.atoms[0])] == position[id(prev.atoms[0])] + 1
                and self._near(prev.atoms[0], u.atoms[0], logic=u.kinds == ["logic"])
            ):
                a, b = prev.atoms[0], u.atoms[0]
                joined = Atom(
                    a.a0,
                    b.a1,
                    a.b0,
                    b.b1,
                    a.category if a.category == b.category else CODE,
                    a.old + b.old,
                    a.new + b.new,
                )
                position[id(joined)] = position[id(b)]
                prev.atoms = [joined]
                prev.details = list(dict.fromkeys(prev.details + u.details))
                continue
            out.append(u)
        out.sort(key=lambda u: (min(a.a0 for a in u.atoms), min(a.b0 for a in u.atoms)))
        return out

    def _near(self, a: Atom, b: Atom, *, logic: bool) -> bool:
        """Two pieces of one fix on a line; layout or comment changes on the same or the next line."""
        gap_a = self.old.text[a.a1 : b.a0]
        gap_b = self.new.text[a.b1 : b.b0]
        breaks = gap_a.count("\n") + gap_a.count("\r") - gap_a.count("\r\n")
        if breaks == 0 or a.category == b.category == EOL:  # one line; or line endings, all of them
            return True
        return not logic and not gap_a.strip() and not gap_b.strip() and breaks <= 1

    # -- classification ----------------------------------------------------------------
    def _classify(self, unit: Unit) -> None:
        atoms = unit.atoms
        if atoms[0].category == RENAME:
            old_name, new_name = atoms[0].rename  # type: ignore[misc]
            unit.renames = {old_name: new_name}
            rows = self.old.rows
            kinds: list[str] = ["rename"]
            details: list[str] = [f"renamed `{old_name}` to `{new_name}`"]
            # a renamed parameter breaks Python's keyword callers; the other languages have no
            # keyword arguments, so there it is a rename only
            if not self.lang and any(_in_ranges(rows[a.old[0].token], self.sig_old) for a in atoms):
                kinds.append("signature_change")
                details.append(
                    "changes the signature of "
                    + ", ".join(
                        f"`{n}`"
                        for n in dict.fromkeys(n for n, _ in self._functions_at(atoms))
                        if n in self.sig_changed
                    )
                    or "a function"
                )
            unit.kinds, unit.details = kinds, details
            self._target(unit)
            return
        old_code = [it for a in atoms if a.category == CODE for it in a.old if it.token >= 0]
        new_code = [it for a in atoms if a.category == CODE for it in a.new if it.token >= 0]
        old_comments = [it.key[1:] for a in atoms for it in a.old if it.token < 0]
        new_comments = [it.key[1:] for a in atoms for it in a.new if it.token < 0]
        kinds = []
        details = []
        if old_code or new_code:
            old_keys = [it.key for it in old_code]
            new_keys = [it.key for it in new_code]
            # another language: quotes may mean a char, not a string, so its own tree decides
            if _plausibly_formatting(old_keys, new_keys) and (
                (not self.lang and _same_layout(old_keys, new_keys)) or self.trees.same_tree(atoms)
            ):
                kinds.append("formatting_only")
                details.append("reformats code (same syntax tree)")
            else:
                self._explain(atoms, old_code, new_code, kinds, details)
        removed, added = comment_delta(old_comments, new_comments)
        placeholders = [c for c in added if _placeholder_lines([c])]
        if placeholders and "lazy_placeholder" not in kinds and not (old_code or new_code):
            kinds.append("lazy_placeholder")
            details.append(f"adds a placeholder ({placeholders[0]!r})")
        if (
            removed.total() > added.total()
            and self.lang_original is not None
            and other.doc_comments_only(self.lang_original, [it for a in atoms for it in a.old], removed - added)
        ):
            kinds.append("docstring")  # a doc comment is these languages' docstring
            details.append(f"removes {_plural(removed.total() - added.total(), 'doc comment')}")
        elif removed.total() > added.total():
            kinds.append("comment_removed")
            details.append(f"removes {_plural(removed.total() - added.total(), 'comment')}")
        elif (removed or added) and not kinds:
            kinds.append("comment_only")
            details.append("changes comments only")
        if not kinds:
            kinds.append("formatting_only")
            details.append("reformats code (same tokens)")
        unit.kinds, unit.details = kinds, details
        self._target(unit)

    def _target(self, unit: Unit) -> None:
        if self.target is None:
            return
        lines = [self.old.line_of(a.a0) for a in unit.atoms] + [
            self.old.line_of(max(a.a1 - 1, a.a0)) for a in unit.atoms
        ]
        t = self.target
        whole = t.start <= 1 and t.stop >= self.old.text.count("\n") + 2  # every line: nothing precedes it

        old_text = self.old.text
        open_end = bool(old_text) and old_text[-1] not in "\r\n"  # the last line has no line break

        def inside(ln: int, a: Atom) -> bool:
            if open_end and a.a0 == len(old_text) and self.new.text[a.b0 : a.b1][:1] not in ("\n", "\r"):
                ln = self.old.line_of(a.a0 - 1)  # text added to the last line, not after it
            if (
                ln == t.start
                and not whole
                and a.a0 == a.a1
                and (a.a0 == 0 or self.old.text[a.a0 - 1] == "\n")
                and self.new.text[a.b0 : a.b1].endswith("\n")
            ):
                return False  # whole lines inserted above the target's first line precede it
            if t.start <= ln < t.stop:
                return True
            # an insertion just after the target continues it when indented (not a new top-level statement)
            added = self.new.text[a.b0 : a.b1].lstrip("\r\n")
            return ln == t.stop and a.a0 == a.a1 and added[:1] in (" ", "\t")

        if any(not inside(ln, a) for ln, a in zip(lines, unit.atoms * 2)):
            unit.kinds.append("outside_target")
            unit.details.append(f"outside the target lines {t.start}-{t.stop - 1}")

    def _explain(self, atoms: list[Atom], old_code: list, new_code: list, kinds: list[str], details: list[str]) -> None:
        original, edited = self.original, self.edited
        a_rows, b_rows = self.old.rows, self.new.rows
        a_struct, b_struct = original.structure, edited.structure
        old_lines = sorted({a_rows[it.token] for it in old_code})
        new_lines = sorted({b_rows[it.token] for it in new_code})
        old_text = [original.lines[r - 1] for r in old_lines if r - 1 < len(original.lines)]
        new_text = [edited.lines[r - 1] for r in new_lines if r - 1 < len(edited.lines)]
        placeholders = [p for p in _placeholder_lines(new_text) if p not in _placeholder_lines(old_text)]
        old_notes = {it.key[1:] for a in atoms for it in a.old if it.token < 0}
        placeholders += [
            c
            for a in atoms
            for it in a.new
            if it.token < 0
            for c in [it.key[1:]]
            if c not in old_notes and _placeholder_lines([c])
        ]
        guards = [g for g in b_struct.guards if self._guard_added(g[0])]
        guard_ranges = [(g[0], g[1]) for g in guards]
        whole_statements = (
            other.whole_lines(self.lang_original, {it.token for it in old_code}, old_lines)
            if self.lang_original is not None
            else any(it.key in ("\n", "\r\n", "") for it in old_code)
        )
        removal = (
            "lazy_placeholder"
            if placeholders
            else "deletion"
            if whole_statements and not [it for it in new_code if it.key not in ("\n", "")]
            else "logic"
        )

        def shared(row: int, structure: Structure, signatures: list[tuple[int, int]]) -> str | None:
            if _in_ranges(row, structure.docstrings):
                return "docstring"
            if _in_ranges(row, structure.imports):
                return "import_change"
            if _in_ranges(row, signatures):
                return "signature_change"
            return None

        seen: list[str] = []
        # another language: an `unwrap()`/`expect()` dropped for a new match on the Result is defensive
        unwrapped: list[tuple[int, int]] = (
            other.unwrap_spans(self.lang_original)
            if self.lang_original is not None and other.adds_match(guards)
            else []
        )
        for it in old_code:
            kind = shared(a_rows[it.token], a_struct, self.sig_old) or removal
            if unwrapped and kind == "logic" and any(s <= it.start < e for s, e in unwrapped):
                kind = "defensive"
            seen.append(kind)
        for it in new_code:
            row = b_rows[it.token]
            kind = shared(row, b_struct, self.sig_new) or (
                "defensive"
                if _in_ranges(row, guard_ranges)
                else "lazy_placeholder"
                if placeholders and edited.lines[row - 1].strip() in placeholders
                else "logic"
            )
            seen.append(kind)
        counts = Counter(seen)
        newline_kinds = Counter(k for k, it in zip(seen, [*old_code, *new_code]) if it.key in ("\n", "\r\n", ""))
        if newline_kinds.total() < len(seen):  # a line break takes the kind of the tokens around it
            counts -= newline_kinds

        def note(kind: str, detail: str) -> None:
            if kind not in kinds:
                kinds.append(kind)
                details.append(detail)

        if counts["docstring"]:
            note("docstring", "edits a docstring")
        if counts["import_change"]:
            note("import_change", "changes imports")
        if counts["signature_change"]:
            names = list(dict.fromkeys(n for n, _ in self._functions_at(atoms) if n in self.sig_changed))
            note("signature_change", "changes the signature of " + (", ".join(f"`{n}`" for n in names) or "a function"))
        if counts["defensive"]:
            note("defensive", "adds " + ", ".join(sorted({g[2] for g in guards})) + " (input validation)")
        if counts["lazy_placeholder"]:
            note("lazy_placeholder", f"replaces code with a placeholder ({placeholders[0]!r})")
        if counts["deletion"]:
            note("deletion", f"deletes {_plural(len(old_lines), 'line')} of code with nothing in their place")
        if counts["logic"]:
            note("logic", "changes logic")

    def _guard_added(self, line: int) -> bool:
        """Is the guard starting on this edited line new (its first token inserted, not aligned)?"""
        lo, hi = self.edited.token_span(line, line)
        rows = self.new.rows
        while lo < hi and rows[lo] < line:
            lo += 1
        return lo < hi and lo in self.changed_new

    def _functions_at(self, atoms: list[Atom]) -> list[tuple[str, FunctionInfo]]:
        found = []
        for a in atoms:
            la, lb = self.old.line_of(a.a0), self.new.line_of(a.b0)
            found += [(f.qualname, f) for f in self.original.structure.functions if f.start <= la <= f.signature_end]
            found += [(f.qualname, f) for f in self.edited.structure.functions if f.start <= lb <= f.signature_end]
        return found

    def innermost(self, structure: Structure, line: int) -> str | None:
        best = None
        for f in structure.functions:
            if f.start <= line <= f.end and (best is None or f.start >= best.start):
                best = f
        return best.qualname if best else None

    # -- output ------------------------------------------------------------------------
    def hunk(self, unit: Unit) -> tuple[Hunk, list[TextEdit]]:
        old, new = self.old, self.new
        atoms = sorted(unit.atoms, key=lambda a: a.a0)
        edits = [atom_edit(old, new, a) for a in atoms]
        a_lines = [
            _line_span(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character, e.new_text)
            for e in edits
        ]
        b_lines = [_new_line_span(new, a) for a in atoms]
        start_line = min(s for s, _ in a_lines)
        end_line = max(e for _, e in a_lines)
        new_start = min(s for s, _ in b_lines)
        new_end = max(e for _, e in b_lines)
        if all(e < s for s, e in a_lines):
            end_line = start_line - 1
        if all(e < s for s, e in b_lines):
            new_end = new_start - 1
        changed = 0
        names: list[str] = []
        spans: list[list[int]] = []
        for a in atoms:
            ok, nk = [i.key for i in a.code_old()], [i.key for i in a.code_new()]
            changed += Levenshtein.distance(ok, nk)
            names += [k for k in ok + nk if _is_name(k)]
            spans.append([_lo(a.code_old()), _hi(a.code_old()), _lo(a.code_new()), _hi(a.code_new())])
        functions = list(
            dict.fromkeys(
                f
                for f in (
                    self.innermost(self.original.structure, start_line),
                    self.innermost(self.edited.structure, new_start),
                )
                if f
            )
        )
        unrequested = any(k in UNREQUESTED_KINDS for k in unit.kinds)
        message = "; ".join(unit.details) + (" (not requested)" if unrequested else "")
        hunk = Hunk(
            start_line=start_line,
            end_line=end_line,
            new_start_line=new_start,
            new_end_line=new_end,
            kinds=unit.kinds,
            tokens_changed=changed,
            unrequested=unrequested,
            message=message,
            renames=unit.renames,
            edits=edits,
            names=list(dict.fromkeys(names)),
            functions=functions,
            token_spans=spans,
        )
        return hunk, edits


def _merge_same_point(order: list[object], groups: dict[object, list[Atom]]) -> list[Unit]:
    """Units inserting at one point of the original keep their order there only through the order of
    the units (LSP applies inserts at one position in array order; so does `apply_text_edits`): units
    are ordered by where they start, so two whose insertions there would come out in the wrong order
    (or in no defined order) are one unit. Merging moves a unit's start, so repeat until none is left."""
    merged = [list(groups[k]) for k in order]
    while True:
        rank = [(min(a.a0 for a in g), min(a.b0 for a in g)) for g in merged]
        at_point: dict[int, list[tuple[int, Atom]]] = {}
        for n, g in enumerate(merged):
            for a in g:
                if a.a0 == a.a1:
                    at_point.setdefault(a.a0, []).append((n, a))
        clash = next(
            (
                (m, n)
                for inserts in at_point.values()
                for (m, x), (n, y) in itertools.pairwise(sorted(inserts, key=lambda na: (rank[na[0]], na[1].b0)))
                if m != n and (rank[m] == rank[n] or x.b0 > y.b0)
            ),
            None,
        )
        if clash is None:
            return [Unit(sorted(g, key=lambda a: (a.a0, a.b0))) for g in merged]
        m, n = clash
        merged[m] += merged[n]
        del merged[n]


def _same_point(a: Atom, b: Atom) -> bool:
    """`b` inserts right where `a` ends in the original: pieces split apart on purpose (`split_definitions`)."""
    return a.a1 == b.a0 == b.a1


def _lo(items: list) -> int:
    return items[0].token if items else -1


def _hi(items: list) -> int:
    return items[-1].token + 1 if items else -1


def _line_span(sl: int, sc: int, el: int, ec: int, new_text: str) -> tuple[int, int]:
    """1-based original lines an edit replaces; (l, l - 1) for an insertion before line l."""
    if sl == el and sc == ec:
        if sc == 0 and new_text.endswith(("\n", "\r")):
            return sl + 1, sl
        return sl + 1, sl + 1
    last = el if ec > 0 else el - 1
    return sl + 1, max(last, sl) + 1


def _new_line_span(new: Side, atom: Atom) -> tuple[int, int]:
    text = new.text
    b0, b1 = atom.b0, atom.b1
    while b0 < b1 and text[b0] in " \t":
        b0 += 1
    first = new.line_of(b0)
    if b1 <= b0:
        return first, first
    last = new.line_of(b1 - 1)
    return first, last


def _consistent(old: str, new: str, atoms: list[Atom]) -> bool:
    """Do the atoms cover every difference, in order, without overlapping?"""
    pa = pb = 0
    for a in sorted(atoms, key=lambda a: a.a0):
        if a.a0 < pa or a.b0 < pb or a.a1 < a.a0 or a.b1 < a.b0 or a.a1 > len(old) or a.b1 > len(new):
            return False
        if old[pa : a.a0] != new[pb : a.b0]:
            return False
        pa, pb = a.a1, a.b1
    return old[pa:] == new[pb:]


def build_units(original: Analysis, edited: Analysis, target: range | None) -> list[tuple[Hunk, list[TextEdit]]]:
    builder = UnitBuilder(original, edited, target)
    built = [builder.hunk(u) for u in builder.units()]
    # Checked, not trusted: should the units not rebuild the edited text (odd line breaks), each line
    # region is one unit with the line-level edit.
    if apply_text_edits(original.text, [e for _, edits in built for e in edits]) != edited.text:
        regions = [(r.a_start, r.a_end, r.b_start, r.b_end) for r in line_regions(original.lines, edited.lines)]
        builder.regions = regions
        builder.atoms = [builder._region_atom(r) for r in regions]
        built = []
        for n, r in enumerate(regions):
            hunk, _ = builder.hunk(builder._classified(builder.atoms[n]))
            edit = region_edit(original.lines, edited.lines, *r)
            built.append((msgspec.structs.replace(hunk, edits=[edit]), [edit]))
    return built
