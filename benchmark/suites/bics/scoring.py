"""BICS scores: an answer against its label, the length x depth accuracy matrix and its headline means.

An answer is correct only if both its line and its bug type match (the type compared after trimming
and lower-casing, as the paper's parser leaves it). The published runs retried unparseable answers
with a new haystack, so their accuracies are "among parseable answers"; ours also give "with
unparseable answers counted wrong". Headline: the mean of the cell accuracies (each cell weighs the
same, whatever its number of trials), also without the longest target length. Means are exact
fractions, rounded only for display.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from fractions import Fraction

import msgspec

from benchmark.suites.bics import BUG_TYPES


class Trial(msgspec.Struct, frozen=True, kw_only=True):
    length: int
    depth: float
    trial: int
    label_line: int
    bug_type: str
    pred_line: int | None = None  # None: unparseable
    pred_type: str | None = None
    parseable: bool = True
    correct: bool = False


class Matrix(msgspec.Struct, kw_only=True):
    lengths: list[int]
    depths: list[float]
    accuracy: list[list[float | None]]  # [depth][length], percent; None: no trial in the cell
    trials: list[list[int]]  # [depth][length]


def is_correct(label_line: int, bug_type: str, pred_line: int | None, pred_type: str | None) -> bool:
    return (
        pred_line is not None
        and pred_type is not None
        and pred_line == label_line
        and pred_type.strip().lower() == bug_type
    )


def _pct(num: int, den: int) -> Fraction | None:
    return Fraction(100 * num, den) if den else None


def _counted(trials: Iterable[Trial], unparseable_wrong: bool) -> list[Trial]:
    return [t for t in trials if t.parseable or unparseable_wrong]


def matrix(trials: Iterable[Trial], *, unparseable_wrong: bool = False) -> tuple[Matrix, dict]:
    """The matrix, plus its exact cell fractions keyed (length, depth) for the headline (None: no counted trial)."""
    cells: dict[tuple[int, float], list[int]] = defaultdict(lambda: [0, 0])
    seen: set[tuple[int, float]] = set()
    for t in trials:
        seen.add((t.length, t.depth))
        if not (t.parseable or unparseable_wrong):
            continue
        c = cells[(t.length, t.depth)]
        c[0] += t.correct
        c[1] += 1
    lengths, depths = sorted({k[0] for k in seen}), sorted({k[1] for k in seen})
    # every cell with a trial, None where none counts (all unparseable): the longest length stays the longest
    exact = {k: _pct(*cells[k]) if k in cells else None for k in seen}
    m = Matrix(
        lengths=lengths,
        depths=depths,
        accuracy=[[_round(exact.get((ln, d))) for ln in lengths] for d in depths],
        trials=[[cells[(ln, d)][1] if (ln, d) in cells else 0 for ln in lengths] for d in depths],
    )
    return m, exact


def _round(x: Fraction | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def headline(exact: dict[tuple[int, float], Fraction | None], *, without_longest: bool = False) -> Fraction | None:
    """Mean of the cell accuracies (cells without trials left out); optionally without the longest length."""
    cells = {k: v for k, v in exact.items() if v is not None}
    if without_longest and cells:
        longest = max(k[0] for k in exact)
        cells = {k: v for k, v in cells.items() if k[0] != longest}
    if not cells:
        return None
    return sum(cells.values(), Fraction(0)) / len(cells)


def per_bug_type(trials: Iterable[Trial], *, unparseable_wrong: bool = False) -> dict[str, dict]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for t in _counted(trials, unparseable_wrong):
        c = counts[t.bug_type]
        c[0] += t.correct
        c[1] += 1
    order = [b for b in BUG_TYPES if b in counts] + sorted(b for b in counts if b not in BUG_TYPES)
    return {b: {"accuracy": _round(_pct(*counts[b])), "trials": counts[b][1]} for b in order}


def summarise(trials: list[Trial]) -> dict:
    """Both accuracies (among parseable answers, and with unparseable ones wrong) with their matrices."""
    out: dict = {"trials": len(trials), "unparseable": sum(not t.parseable for t in trials)}
    for key, wrong in (("parseable", False), ("all", True)):
        m, exact = matrix(trials, unparseable_wrong=wrong)
        full, short = headline(exact), headline(exact, without_longest=True)
        out[key] = {
            "accuracy": _round(full),
            "accuracy_without_longest": _round(short),
            "longest_length": max(m.lengths) if m.lengths else None,
            "matrix": msgspec.to_builtins(m),
            "per_bug_type": per_bug_type(trials, unparseable_wrong=wrong),
        }
    return out
