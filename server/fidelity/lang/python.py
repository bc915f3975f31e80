"""Python as a `Language`: the paper-compatible path (`text/` for each side, `metrics/`, `units/`)."""

from __future__ import annotations

from rapidfuzz.distance import Levenshtein

from server.fidelity.metrics.distance import token_distance
from server.fidelity.metrics.localize import broken_functions, localized_distances
from server.fidelity.text.analysis import Analysis, analyze
from server.fidelity.text.tokens import lex
from server.fidelity.units.classifier import build_units
from server.protocol.report import (
    VARIANTS,
    ComplexityDelta,
    Distance,
    FidelityReport,
    FunctionChange,
    ParseStatus,
)


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
    # a side that does not parse: its functions come from the top-level statements that do, and those
    # in the broken statements are "unparseable", not removed or added
    broken_a = broken_functions(a) if not a.parses else {}
    broken_b = broken_functions(b) if not b.parses else {}
    if broken_a:
        old.update({n: f for n, f in broken_a.items() if f is not None})
    if broken_b:
        new.update({n: f for n, f in broken_b.items() if f is not None})
    changes: list[FunctionChange] = []
    for name in [*old, *(n for n in new if n not in old)]:
        fa, fb = old.get(name), new.get(name)
        if (fa is None and name in broken_a) or (fb is None and name in broken_b):
            changes.append(
                FunctionChange(
                    name=name,
                    status="unparseable",
                    start_line=fa.start if fa else None,
                    end_line=fa.end if fa else None,
                    new_start_line=fb.start if fb else None,
                    new_end_line=fb.end if fb else None,
                    tokens_changed=0,
                    cognitive_before=fa.cognitive if fa else None,
                    cognitive_after=fb.cognitive if fb else None,
                    sonar_before=None,
                    sonar_after=None,
                    cyclomatic_before=None,
                    cyclomatic_after=None,
                )
            )
            continue
        if a.parses and b.parses:
            toks_a = a.tokens_in(fa.start, fa.end) if fa else []
            toks_b = b.tokens_in(fb.start, fb.end) if fb else []
        else:  # a side fell back to str.split(): tokenise the function's own lines
            toks_a = lex("".join(a.lines[fa.start - 1 : fa.end])).strings if fa else []
            toks_b = lex("".join(b.lines[fb.start - 1 : fb.end])).strings if fb else []
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


class Python:
    """The paper-compatible path: every text tokenised and parsed the way the over-editing paper does."""

    name = "python"

    def measure(self, original: str, edited: str, *, gold: str | None, target: range | None) -> FidelityReport:
        a, b = analyze(original), analyze(edited)
        dist = {v: token_distance(a.variant_tokens(v), b.variant_tokens(v)) for v in VARIANTS}
        gold_dist: dict[str, Distance] | None = None
        excess: dict[str, float] | None = None
        gold_cc: dict[str, ComplexityDelta] | None = None
        if gold is not None:
            g = analyze(gold)
            gold_dist = {v: token_distance(a.variant_tokens(v), g.variant_tokens(v)) for v in VARIANTS}
            excess = {v: dist[v].normalized - gold_dist[v].normalized for v in VARIANTS}
            gold_cc = _complexity(a, g)

        identical = original == edited
        units = [] if identical else build_units(a, b, target)
        hunks = [h for h, _ in units]
        edits = [e for _, unit_edits in units for e in unit_edits]

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
            localized_distance=dist if a.parses and b.parses else localized_distances(a, b),
            gold_complexity=gold_cc,
        )
