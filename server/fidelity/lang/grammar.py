"""The languages other than Python as `Language`s: the same `FidelityReport`, from the language layer
(`Grammar`, a row of the table), or from plain tokens and line regions where there is no grammar
(`Unsupported`). `server.fidelity.measure.measure(..., language=...)` is the entry point.
"""

from __future__ import annotations

import re
from collections import Counter

from rapidfuzz.distance import Levenshtein

from server.fidelity.lang.analysis import LangAnalysis, analyze_lang
from server.fidelity.lang.analysis import _split_lines as split_lines
from server.fidelity.lang.functions import LangFunction, functions
from server.fidelity.lang.table import Lang
from server.fidelity.text.textedits import region_edit
from server.fidelity.units.classifier import build_units
from server.fidelity.units.regions import line_regions
from server.protocol.report import (
    VARIANTS,
    ComplexityDelta,
    Distance,
    FidelityReport,
    FunctionChange,
    Hunk,
    ParseStatus,
)

_PYTHON_ONLY = "Python only (the paper's metric and radon's index have no definition for {lang})"
# an unsupported language: words, numbers and each other non-space character are tokens
_PLAIN_TOKEN = re.compile(r"\w+|[^\w\s]")


def _distance(a: list[str], b: list[str]) -> Distance:
    tokens = Levenshtein.distance(a, b)
    longest = max(len(a), len(b))
    return Distance(tokens=tokens, normalized=tokens / longest if longest else 0.0)


def _dists(a: LangAnalysis, b: LangAnalysis) -> dict[str, Distance]:
    return {v: _distance(a.variant_tokens(v), b.variant_tokens(v)) for v in VARIANTS}


def _delta(before: int | None, after: int | None) -> ComplexityDelta:
    if before is None or after is None:
        return ComplexityDelta(before=before, after=after, delta=None, reason="does not parse")
    return ComplexityDelta(before=before, after=after, delta=round(after - before, 2))


def _complexity(a: LangAnalysis, b: LangAnalysis) -> dict[str, ComplexityDelta]:
    # a side with a parse error keeps tree-sitter's recovered tree; like the Python path its numbers
    # are withheld rather than guessed
    ok = a.parses and b.parses
    why = _PYTHON_ONLY.format(lang=a.lang.name)
    return {
        "paper": ComplexityDelta(before=None, after=None, delta=None, reason=why),
        "sonar": _delta(a.sonar[0] if ok else None, b.sonar[0] if ok else None),
        "cyclomatic": _delta(a.cyclomatic[0] if ok else None, b.cyclomatic[0] if ok else None),
        "maintainability": ComplexityDelta(before=None, after=None, delta=None, reason=why),
    }


def _keyed(fs: list[LangFunction]) -> dict[str, LangFunction]:
    """Functions by qualified name; a repeated name (an overload) gets `#2`, `#3` in text order."""
    seen: Counter[str] = Counter()
    out: dict[str, LangFunction] = {}
    for f in fs:
        seen[f.qualname] += 1
        out[f.qualname if seen[f.qualname] == 1 else f"{f.qualname}#{seen[f.qualname]}"] = f
    return out


def _function_changes(a: LangAnalysis, b: LangAnalysis) -> list[FunctionChange]:
    old, new = _keyed(functions(a.source)), _keyed(functions(b.source))
    ln_a, ln_b = a._line, b._line
    changes: list[FunctionChange] = []
    for name in [*old, *(n for n in new if n not in old)]:
        fa, fb = old.get(name), new.get(name)
        toks_a = a.tokens_in(ln_a(fa.start), ln_a(fa.end)) if fa else []
        toks_b = b.tokens_in(ln_b(fb.start), ln_b(fb.end)) if fb else []
        if fa and fb and toks_a == toks_b:
            continue
        broken = bool((fa and fa.broken) or (fb and fb.broken))
        status = "unparseable" if broken else "changed" if fa and fb else "removed" if fa else "added"
        changes.append(
            FunctionChange(
                name=name,
                status=status,
                start_line=ln_a(fa.start) if fa else None,
                end_line=ln_a(fa.end) if fa else None,
                new_start_line=ln_b(fb.start) if fb else None,
                new_end_line=ln_b(fb.end) if fb else None,
                tokens_changed=0 if broken else Levenshtein.distance(toks_a, toks_b),
                cognitive_before=fa.cognitive if fa else None,
                cognitive_after=fb.cognitive if fb else None,
                sonar_before=fa.cognitive if fa and not broken else None,
                sonar_after=fb.cognitive if fb and not broken else None,
                cyclomatic_before=fa.cyclomatic if fa and not broken else None,
                cyclomatic_after=fb.cyclomatic if fb and not broken else None,
            )
        )
    return changes


def measure_lang(original: str, edited: str, lang: Lang, *, gold: str | None, target: range | None) -> FidelityReport:
    a = analyze_lang(original, lang)
    b = analyze_lang(edited, lang, previous=a)  # incremental: an edit reuses the original's tree
    dist = _dists(a, b)
    gold_dist = excess = None
    if gold is not None:
        gold_dist = _dists(a, analyze_lang(gold, lang))
        excess = {v: dist[v].normalized - gold_dist[v].normalized for v in VARIANTS}
    identical = original == edited
    units = [] if identical else build_units(a, b, target)  # type: ignore[arg-type]
    return FidelityReport(
        distance=dist,
        excess=excess,
        gold_distance=gold_dist,
        complexity=_complexity(a, b),
        hunks=[h for h, _ in units],
        functions=[] if identical else _function_changes(a, b),
        edits=[e for _, unit_edits in units for e in unit_edits],
        parse_errors=ParseStatus(original=a.parse_error, edited=b.parse_error),
        identical=identical,
        localized_distance=dist,
        language=lang.name,
    )


def plain_tokens(text: str) -> list[str]:
    return _PLAIN_TOKEN.findall(text)


def _line_units(original: str, edited: str) -> list[Hunk]:
    """One unit per changed line region, unclassified: without a grammar nothing is known of what
    changed, but the editor can still accept or revert each region."""
    a_lines, b_lines = split_lines(original), split_lines(edited)
    out = []
    for r in line_regions(a_lines, b_lines):
        edit = region_edit(a_lines, b_lines, r.a_start, r.a_end, r.b_start, r.b_end)
        changed = Levenshtein.distance(
            plain_tokens("".join(a_lines[r.a_start - 1 : r.a_end])),
            plain_tokens("".join(b_lines[r.b_start - 1 : r.b_end])),
        )
        out.append(
            Hunk(
                start_line=r.a_start,
                end_line=r.a_end,
                new_start_line=r.b_start,
                new_end_line=r.b_end,
                kinds=["logic"],
                tokens_changed=changed,
                unrequested=False,
                message="changes lines (unsupported language: not classified)",
                edits=[edit],
            )
        )
    return out


def measure_unsupported(original: str, edited: str, language: str, *, gold: str | None) -> FidelityReport:
    """Token distance only: no grammar, so no comments, functions or complexity, and units that are
    the changed line regions, unclassified. Every variant is the same plain-token distance (comments
    cannot be told apart without a grammar)."""
    a, b = plain_tokens(original), plain_tokens(edited)
    d = _distance(a, b)
    dist = dict.fromkeys(VARIANTS, d)
    gold_dist = excess = None
    if gold is not None:
        g = _distance(a, plain_tokens(gold))
        gold_dist = dict.fromkeys(VARIANTS, g)
        excess = dict.fromkeys(VARIANTS, d.normalized - g.normalized)
    none = ComplexityDelta(before=None, after=None, delta=None, reason=f"unsupported language {language!r}")
    hunks = [] if original == edited else _line_units(original, edited)
    return FidelityReport(
        distance=dist,
        excess=excess,
        gold_distance=gold_dist,
        complexity=dict.fromkeys(("paper", "sonar", "cyclomatic", "maintainability"), none),
        hunks=hunks,
        functions=[],
        edits=[e for h in hunks for e in h.edits],
        parse_errors=ParseStatus(original=None, edited=None),
        identical=original == edited,
        localized_distance=dist,
        language=f"unsupported:{language}",
    )


class Grammar:
    """A language of the table (`table.Lang`): measured with its tree-sitter grammar."""

    def __init__(self, lang: Lang) -> None:
        self.lang = lang
        self.name = lang.name

    def measure(self, original: str, edited: str, *, gold: str | None, target: range | None) -> FidelityReport:
        return measure_lang(original, edited, self.lang, gold=gold, target=target)


class Unsupported:
    """A language with no grammar here: `measure_unsupported` (the target plays no part)."""

    def __init__(self, language_id: str) -> None:
        self.name = f"unsupported:{language_id}"
        self.language_id = language_id

    def measure(self, original: str, edited: str, *, gold: str | None, target: range | None) -> FidelityReport:
        return measure_unsupported(original, edited, self.language_id, gold=gold)
