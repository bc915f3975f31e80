"""OptScore (SPEC 3.7) and Win Rate."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from benchmark.suites.codeeditorbench.kinds import CATEGORY_METRIC
from sandbox.judge import Usage

OPT_REPEATS = 5
OPT_MARGIN_FLOOR = 0.05
OPT_MARGIN_Z = 2.0


def opt_score(original: Usage, candidate: Usage) -> float:
    """SPEC 3.7: max(((T - t)/T + (M - m)/M) / 2, 0) over the mean runtime and memory."""
    gain_t, gain_m = _gains(original, candidate)
    return max((gain_t + gain_m) / 2, 0.0)


def noise_margin(original: Sequence[float], candidate: Sequence[float]) -> float:
    """The smallest relative change taken for real: max(5 %, 2 standard errors of the difference of
    the two means, over the original's mean)."""
    base = sum(original) / len(original) if original else 0.0
    if base <= 0:
        return OPT_MARGIN_FLOOR

    def var(xs: Sequence[float]) -> float:
        if len(xs) < 2:
            return 0.0
        m = sum(xs) / len(xs)
        return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)

    se = math.sqrt(var(original) / max(len(original), 1) + var(candidate) / max(len(candidate), 1))
    return max(OPT_MARGIN_FLOOR, OPT_MARGIN_Z * se / base)


def opt_score_margin(original: Usage, candidate: Usage) -> float:
    """OptScore with each relative gain within its noise margin counted as 0 (a named mode)."""
    gain_t, gain_m = _gains(original, candidate)
    if abs(gain_t) < noise_margin(original.cpu_s, candidate.cpu_s):
        gain_t = 0.0
    if abs(gain_m) < noise_margin(original.memory_mb, candidate.memory_mb):
        gain_m = 0.0
    return max((gain_t + gain_m) / 2, 0.0)


def _gains(original: Usage, candidate: Usage) -> tuple[float, float]:
    T, M = original.mean_cpu_s, original.mean_memory_mb  # the paper's names
    t, m = candidate.mean_cpu_s, candidate.mean_memory_mb
    if T <= 0 or M <= 0:
        raise ValueError(f"the original's runtime and memory must be positive (T={T}, M={M})")
    return (T - t) / T, (M - m) / M


class WinRate(msgspec.Struct, kw_only=True):
    win_rate: float | None  # the mean over the categories the backend was ranked in
    scores: dict[str, float]  # per category: 1 - (rank - 1) / (N - 1)
    ranks: dict[str, float]  # per category (ties share the mean of their places)
    compared: dict[str, int]  # per category: N, the backends ranked


def win_rate(
    summaries: Mapping[str, Mapping[str, Any]], metric: Mapping[str, str] = CATEGORY_METRIC
) -> dict[str, WinRate]:
    """Win Rate across the backends of one report (SPEC 3.7): per category rank the backends by the
    category's metric (higher is better; ties take the mean of their places), score each
    1 - (rank - 1)/(N - 1), average over the categories. `summaries`: label -> summary.json
    (`{"conditions": {category: {metric: value}}}`); a backend without a value in a category is not
    ranked there, and a category with fewer than two ranked backends is left out."""
    out = {label: WinRate(win_rate=None, scores={}, ranks={}, compared={}) for label in summaries}
    for category, name in metric.items():
        values = {}
        for label, s in summaries.items():
            v = ((s.get("conditions") or {}).get(category) or {}).get(name)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v):
                values[label] = float(v)
        n = len(values)
        if n < 2:
            continue
        ordered = sorted(values, key=lambda k: -values[k])
        i = 0
        while i < n:
            j = i
            while j + 1 < n and values[ordered[j + 1]] == values[ordered[i]]:
                j += 1
            rank = (i + j) / 2 + 1
            for k in ordered[i : j + 1]:
                out[k].ranks[category] = rank
                out[k].scores[category] = 1 - (rank - 1) / (n - 1)
                out[k].compared[category] = n
            i = j + 1
    for w in out.values():
        w.win_rate = sum(w.scores.values()) / len(w.scores) if w.scores else None
    return out


def polish_metrics(orig: Usage, cand: Usage) -> dict[str, Any]:
    return {
        "opt_score": opt_score(orig, cand),
        "opt_score_margin": opt_score_margin(orig, cand),
        "T_cpu_s": orig.mean_cpu_s,
        "M_mb": orig.mean_memory_mb,
        "t_cpu_s": cand.mean_cpu_s,
        "m_mb": cand.mean_memory_mb,
        "T_sd": orig.sd_cpu_s,
        "t_sd": cand.sd_cpu_s,
        "M_sd": orig.sd_memory_mb,
        "m_sd": cand.sd_memory_mb,
        "time_margin": noise_margin(orig.cpu_s, cand.cpu_s),
        "memory_margin": noise_margin(orig.memory_mb, cand.memory_mb),
        "repeats": len(orig.cpu_s),
    }
