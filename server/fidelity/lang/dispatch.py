"""What the unit classifier asks differently of another language (pure): whether atoms leave the
tree as it was (tree-sitter's canonical trees, not `ast`), whether removed tokens are whole lines
(there are no NEWLINE tokens), where the original's `unwrap()` calls are, and whether removed
comments are doc comments (the docstrings of these languages)."""

from __future__ import annotations

from collections import Counter

from server.fidelity.lang.analysis import LangAnalysis
from server.fidelity.lang.facts import comments, unwraps
from server.fidelity.lang.parse import parse
from server.fidelity.lang.same import same_tree


def same_tree_applied(original: LangAnalysis, new_text: str, atoms: list[tuple[int, int, int, int]]) -> bool:
    """The original with only these atoms (a0, a1, b0, b1: character spans, old and new) applied,
    parsed, and the statements around them compared with the original's."""
    text, pieces, cursor = original.text, [], 0
    for a0, a1, b0, b1 in sorted(atoms):
        pieces.append(text[cursor:a0])
        pieces.append(new_text[b0:b1])
        cursor = a1
    pieces.append(text[cursor:])
    patched = "".join(pieces)
    lo, hi = min(a[0] for a in atoms), max(a[1] for a in atoms)
    # one character more each side: an insertion's empty span, or one of layout only (`\n` -> `;\n`),
    # then still reaches the statements around it
    lo, grow = max(lo - 1, 0), 1 if hi < len(text) else 0
    src = original.source
    return same_tree(src, (lo, hi + grow), parse(patched, src.lang), (lo, hi + grow + len(patched) - len(text)))


def whole_lines(original: LangAnalysis, removed: set[int], old_lines: list[int]) -> bool:
    """Removed code is whole statements when it is every token of the lines it is on."""
    if not old_lines:
        return False
    lo, _ = original.token_span(old_lines[0], old_lines[0])
    _, hi = original.token_span(old_lines[-1], old_lines[-1])
    return removed >= set(range(lo, hi))


def adds_match(guards: list[tuple[int, int, str]]) -> bool:
    """Is one of these added guards a match (or `if let`) on an Option/Result?"""
    return any(g[2].startswith("a match") or "`if let`" in g[2] for g in guards)


def unwrap_spans(original: LangAnalysis) -> list[tuple[int, int]]:
    """Character spans of the original's `.unwrap()` / `.expect(...)` calls."""
    return [(s, e) for _, s, e in unwraps(original.source)]


def doc_comments_only(original: LangAnalysis, old_items: list, removed: Counter[str]) -> bool:
    """Are the removed comments all doc comments (`/** */`, `///`, Go's comment above a declaration)?
    A removed doc comment is the other languages' removed docstring: the same kind as Python's."""
    if not removed:
        return False
    docs = {c.start for c in comments(original.source) if c.doc}
    gone = [it for it in old_items if it.token < 0 and it.key[1:] in removed]
    return bool(gone) and all(it.start in docs for it in gone)


def join_wrapped_indents(old_text: str, new_text: str, atoms: list) -> None:
    """A new block around old lines (`try {` ... `} catch (e) { throw e; }`) re-indents the lines it
    wraps; in these languages indentation is layout, so the diff has those changes as whitespace
    atoms of their own. They belong to the wrapper (as Python's re-indented body belongs to its new
    `try:`): reverting the wrapper restores the lines, and it reads as one change. The wrapper is a
    bracket pair (`atoms._balance`) of two pure insertions; its whitespace atoms are the line-start
    indentation changes strictly between the two halves."""
    from server.fidelity.units.atoms import CODE, SPACE

    pairs: dict[int, list] = {}
    for a in atoms:
        if a.group >= 0 and a.category == CODE:
            pairs.setdefault(a.group, []).append(a)
    for group, members in pairs.items():
        if len(members) != 2 or any(it.token >= 0 for m in members for it in m.old):
            continue
        opening, closing = sorted(members, key=lambda m: m.a0)
        for a in atoms:
            if (
                a.category == SPACE
                and a.group < 0
                and opening.a1 <= a.a0
                and a.a1 <= closing.a0
                and "\n" in old_text[a.a0 : a.a1]
                and "\n" in new_text[a.b0 : a.b1]
            ):
                a.group = group
