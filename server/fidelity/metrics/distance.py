"""Token distances between two Python texts: SPEC 3.1's unit-cost Levenshtein over token lists."""

from __future__ import annotations

from rapidfuzz.distance import Levenshtein

from server.fidelity.text.analysis import analyze
from server.protocol.report import VARIANTS, Distance


def token_distance(a: list[str], b: list[str]) -> Distance:
    """Unit-cost Levenshtein over token lists, absolute and normalised by the longer list (0 if both empty)."""
    tokens = Levenshtein.distance(a, b)
    longest = max(len(a), len(b))
    return Distance(tokens=tokens, normalized=tokens / longest if longest else 0.0)


def distances(original: str, edited: str) -> dict[str, Distance]:
    """d(edited, original) in the three variants of SPEC 3.1, with each text tokenised once per variant."""
    a, b = analyze(original), analyze(edited)
    return {v: token_distance(a.variant_tokens(v), b.variant_tokens(v)) for v in VARIANTS}
