"""Token distances between two texts of one language: the `raw`, `no_comments` and `body_no_comments`
variants, each normalised like SPEC 3.1 (unit-cost Levenshtein over token lists, divided by the longer
list; 0 when both are empty).

- `raw`: every token as written, each comment one token (deleting a comment is an edit);
- `no_comments`: the code tokens only (comments dropped; layout never counted: whitespace is not a
  token in these languages);
- `body_no_comments`: the `no_comments` tokens from the first function's body on (the paper's "first
  function": the shallowest in the tree, the earliest on a tie; its doc comment is a comment, so
  nothing needs skipping); the whole token list when the text has no function.
"""

from __future__ import annotations

from bisect import bisect_left

from rapidfuzz.distance import Levenshtein

from server.fidelity.lang.functions import first_function
from server.fidelity.lang.lex import lex
from server.fidelity.lang.parse import Source

VARIANTS = ("raw", "no_comments", "body_no_comments")


def raw_tokens(src: Source) -> list[str]:
    """Code tokens and comments merged in text order."""
    lexed = lex(src)
    if not lexed.comments:
        return lexed.strings
    out: list[str] = []
    i = 0
    strings, starts = lexed.strings, lexed.starts
    for (start, _), (_, text) in zip(lexed.comment_spans, lexed.comments):
        j = bisect_left(starts, start, i)
        out += strings[i:j]
        out.append(text)
        i = j
    out += strings[i:]
    return out


def variant_tokens(src: Source, variant: str) -> list[str]:
    if variant == "raw":
        return raw_tokens(src)
    lexed = lex(src)
    if variant == "no_comments":
        return lexed.strings
    if variant == "body_no_comments":
        func = first_function(src)
        if func is None:
            return lexed.strings
        return lexed.strings[bisect_left(lexed.starts, func.body_char) :]
    raise ValueError(f"unknown distance variant {variant!r} (expected one of {', '.join(VARIANTS)})")


def token_distance(a: list[str], b: list[str]) -> tuple[int, float]:
    """(edits, edits / longer length); (0, 0.0) for two empty lists."""
    longest = max(len(a), len(b))
    if not longest:
        return 0, 0.0
    d = Levenshtein.distance(a, b)
    return d, d / longest


def distance(a: Source, b: Source, variant: str = "no_comments") -> tuple[int, float]:
    return token_distance(variant_tokens(a, variant), variant_tokens(b, variant))


def distances(a: Source, b: Source) -> dict[str, tuple[int, float]]:
    return {v: distance(a, b, v) for v in VARIANTS}
