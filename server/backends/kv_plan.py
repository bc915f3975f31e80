"""Which parts of a KV cache a new prompt can take, and in which order to move them (pure).

The cache holds the tokens of the previous prompt and its answer at positions 0..n-1. For the new
prompt, the tokens it shares with the cache keep their computed keys and values:
- the common prefix, exactly (its cells saw the same text);
- `reuse_chunks` > 0: also later runs of at least that many tokens that the prompt has too (the
  rest of a document after a changed line), moved to their new positions. Approximate: those cells
  attended to the old text before them. llama.cpp's own `n_cache_reuse` only finds runs after a
  deletion; here a changed, inserted or deleted range anywhere is one gap to compute.
The prompt's last token is always computed: its logits give the first answer token.

Moving a kept run rewrites the positions of the cells in its old range, so the runs are shifted in
an order in which no run's old range holds another run's cells at that moment: the runs moving left
from the first, then those moving right from the last.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from rapidfuzz.distance import LCSseq


class Kept(NamedTuple):
    old: int  # first position in the cache
    new: int  # first position in the prompt
    size: int

    @property
    def delta(self) -> int:
        return self.new - self.old


class KvPlan(NamedTuple):
    drop: list[tuple[int, int]]  # cache position ranges [p0, p1) to remove
    kept: list[Kept]  # in prompt order; the common prefix first when there is one
    compute: list[tuple[int, int]]  # prompt position ranges to compute, in order; the last ends at len(prompt)

    @property
    def reused(self) -> int:
        return sum(k.size for k in self.kept)

    def shift_order(self) -> list[Kept]:
        left = [k for k in self.kept if k.delta < 0]
        right = [k for k in self.kept if k.delta > 0]
        return left + right[::-1]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def plan(cached: Sequence[int], prompt: Sequence[int], reuse_chunks: int = 0) -> KvPlan:
    """How to turn a cache holding `cached` into one holding `prompt` (all but the ranges to compute)."""
    if not prompt:
        return KvPlan([(0, len(cached))] if cached else [], [], [])
    limit = len(prompt) - 1  # the last token is computed
    head = min(common_prefix(cached, prompt), limit)
    kept = [Kept(0, 0, head)] if head else []
    if reuse_chunks > 0 and head < limit:
        for op in LCSseq.opcodes(cached[head:], prompt[head:limit]):
            if op.tag == "equal" and op.src_end - op.src_start >= reuse_chunks:
                kept.append(Kept(head + op.src_start, head + op.dest_start, op.src_end - op.src_start))
    old_ranges = [(k.old, k.old + k.size) for k in kept]
    new_ranges = [(k.new, k.new + k.size) for k in kept]
    return KvPlan(_gaps(old_ranges, len(cached)), kept, _gaps(new_ranges, len(prompt)))


def _gaps(covered: list[tuple[int, int]], end: int) -> list[tuple[int, int]]:
    """The ranges of 0..end that the sorted, disjoint `covered` ranges leave out."""
    out: list[tuple[int, int]] = []
    at = 0
    for start, stop in covered:
        if start > at:
            out.append((at, start))
        at = stop
    if at < end:
        out.append((at, end))
    return out
