"""`measure`: the full fidelity report of one edit."""

from __future__ import annotations

from rapidfuzz.distance import Levenshtein

from server.fidelity.analysis import Analysis, analyze
from server.fidelity.hunks import HunkClassifier, LineRegion, line_regions
from server.fidelity.report import (
    VARIANTS,
    ComplexityDelta,
    Distance,
    FidelityReport,
    FunctionChange,
    ParseStatus,
)
from server.fidelity.textedits import region_edit


def token_distance(a: list[str], b: list[str]) -> Distance:
    """Unit-cost Levenshtein over token lists, absolute and normalised by the longer list (0 if both empty)."""
    tokens = Levenshtein.distance(a, b)
    longest = max(len(a), len(b))
    return Distance(tokens=tokens, normalized=tokens / longest if longest else 0.0)


def distances(original: str, edited: str) -> dict[str, Distance]:
    """d(edited, original) in the three variants of SPEC 3.1, with each text tokenised once per variant."""
    a, b = analyze(original), analyze(edited)
    return {v: token_distance(a.variant_tokens(v), b.variant_tokens(v)) for v in VARIANTS}


def _delta(before: float | None, after: float | None) -> ComplexityDelta:
    if before is None or after is None:
        return ComplexityDelta(before=before, after=after, delta=None)
    return ComplexityDelta(before=before, after=after, delta=round(after - before, 2))


def _complexity(a: Analysis, b: Analysis) -> dict[str, ComplexityDelta]:
    sonar_a, sonar_b = a.sonar, b.sonar
    cyc_a, cyc_b = a.cyclomatic, b.cyclomatic
    return {
        "paper": _delta(a.paper_cognitive, b.paper_cognitive),
        "sonar": _delta(sonar_a[0] if sonar_a else None, sonar_b[0] if sonar_b else None),
        "cyclomatic": _delta(cyc_a[0] if cyc_a else None, cyc_b[0] if cyc_b else None),
        "maintainability": _delta(a.maintainability, b.maintainability),
    }


def _function_changes(a: Analysis, b: Analysis) -> list[FunctionChange]:
    old = {f.qualname: f for f in a.structure.functions}
    new = {f.qualname: f for f in b.structure.functions}
    changes: list[FunctionChange] = []
    for name in [*old, *(n for n in new if n not in old)]:
        fa, fb = old.get(name), new.get(name)
        toks_a = a.tokens_in(fa.start, fa.end) if fa else []
        toks_b = b.tokens_in(fb.start, fb.end) if fb else []
        if fa and fb and toks_a == toks_b:
            continue
        status = "changed" if fa and fb else "removed" if fa else "added"
        changes.append(
            FunctionChange(
                name=name,
                status=status,
                start_line=fa.start if fa else None,
                end_line=fa.end if fa else None,
                new_start_line=fb.start if fb else None,
                new_end_line=fb.end if fb else None,
                tokens_changed=Levenshtein.distance(toks_a, toks_b),
                cognitive_before=fa.cognitive if fa else None,
                cognitive_after=fb.cognitive if fb else None,
                sonar_before=a.sonar[1].get(fa.start) if fa and a.sonar else None,
                sonar_after=b.sonar[1].get(fb.start) if fb and b.sonar else None,
                cyclomatic_before=a.cyclomatic[1].get(fa.def_line) if fa and a.cyclomatic else None,
                cyclomatic_after=b.cyclomatic[1].get(fb.def_line) if fb and b.cyclomatic else None,
            )
        )
    return changes


def measure(
    original: str,
    edited: str,
    *,
    gold: str | None = None,
    target: range | None = None,
) -> FidelityReport:
    """How faithful `edited` is to `original`.

    `gold` is the reference minimal edit (enables `excess`); `target` is the range of 1-based original
    lines the edit was asked for (hunks outside it are `outside_target`). Never raises on bad code:
    text that does not parse gets fallback tokens and complexity `None`.
    """
    a, b = analyze(original), analyze(edited)
    dist = {v: token_distance(a.variant_tokens(v), b.variant_tokens(v)) for v in VARIANTS}
    gold_dist: dict[str, Distance] | None = None
    excess: dict[str, float] | None = None
    if gold is not None:
        g = analyze(gold)
        gold_dist = {v: token_distance(a.variant_tokens(v), g.variant_tokens(v)) for v in VARIANTS}
        excess = {v: dist[v].normalized - gold_dist[v].normalized for v in VARIANTS}

    identical = original == edited
    regions: list[LineRegion] = [] if identical else line_regions(a.lines, b.lines)
    classifier = HunkClassifier(a, b, regions, target) if regions else None
    hunks = [classifier.classify(r) for r in regions] if classifier else []
    edits = [region_edit(a.lines, b.lines, r.a_start, r.a_end, r.b_start, r.b_end) for r in regions]

    return FidelityReport(
        distance=dist,
        excess=excess,
        gold_distance=gold_dist,
        complexity=_complexity(a, b),
        hunks=hunks,
        functions=_function_changes(a, b) if not identical else [],
        edits=edits,
        parse_errors=ParseStatus(original=a.parse_error, edited=b.parse_error),
        identical=identical,
    )
