"""Report charts drawn with matplotlib, embedded as inline SVG (text kept as text, so a page stays
searchable and small). A chart that would carry no information (no values, all zero, one point) is left
out with a line saying why, instead of an empty frame."""

from __future__ import annotations

import html
import io
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: reports are built in CI and over SSH
import matplotlib.pyplot as plt  # after choosing the backend

plt.rcParams.update(
    {
        "svg.fonttype": "none",
        "svg.hashsalt": "edit-fidelity",
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
    }
)

COLOURS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d"]
Value = float | None


def left_out(title: str, why: str) -> str:
    return f'<p class="left-out">Chart left out: <b>{html.escape(title)}</b>: {html.escape(why)}.</p>'


def _svg(fig: Any, title: str) -> str:
    buf = io.StringIO()
    # tight: no clipped labels; no date in the metadata, so the same run gives the same page
    fig.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.1, metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text[text.index("<svg") :], flags=re.S)  # inline: no prolog
    return f'<figure class="chart" aria-label="{html.escape(title)}">{text}</figure>'


def _finite(v: Value) -> bool:
    return v is not None and math.isfinite(v)


def _empty(values: Sequence[Value]) -> str | None:
    """Why a chart of these values would carry nothing, or None."""
    vals = [v for v in values if _finite(v)]
    if not vals:
        return "no values"
    if all(v == 0 for v in vals):
        return "its only value is 0" if len(vals) == 1 else f"all {len(vals)} values are 0"
    return None


def bars(title: str, items: Sequence[tuple[str, Value]], ylabel: str = "", *, fmt: str = "{:.1f}") -> str:
    """One bar per label, its value written above it."""
    why = _empty([v for _, v in items])
    if why:
        return left_out(title, why)
    return grouped_bars(title, [k for k, _ in items], {"": [v for _, v in items]}, ylabel, fmt=fmt)


def grouped_bars(
    title: str,
    categories: Sequence[str],
    series: Mapping[str, Sequence[Value]],
    ylabel: str = "",
    *,
    fmt: str = "{:.1f}",
) -> str:
    """Bars per category, one colour per series (a legend when there are several)."""
    why = _empty([v for vs in series.values() for v in vs])
    if why:
        return left_out(title, why)
    n = max(len(series), 1)
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(max(4.0, 0.55 * len(categories) * n + 1.5), 3.2))
    for j, (name, vals) in enumerate(series.items()):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(categories))]
        ys = [float(v) if v is not None and _finite(v) else 0.0 for v in vals]
        rects = ax.bar(xs, ys, width * 0.92, label=name or None, color=COLOURS[j % len(COLOURS)])
        ax.bar_label(rects, labels=[fmt.format(v) if _finite(v) else "n/a" for v in vals], fontsize=7, padding=1)
    ax.set_xticks(
        range(len(categories)),
        [str(c) for c in categories],
        rotation=30 if sum(len(str(c)) for c in categories) > 40 else 0,
        ha="right" if sum(len(str(c)) for c in categories) > 40 else "center",
    )
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.margins(y=0.15)
    if n > 1:  # beside the axes: never over a bar
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(fig, title)


def scatter(title: str, points: Sequence[tuple[str, Value, Value]], xlabel: str, ylabel: str) -> str:
    """One labelled point per entry (runs, conditions, families)."""
    pts = [
        (k, float(x), float(y)) for k, x, y in points if x is not None and y is not None and _finite(x) and _finite(y)
    ]
    if len(pts) < 2:
        return left_out(title, f"{len(pts)} point{'s' if len(pts) != 1 else ''} with both values; a scatter needs 2")
    if len({(x, y) for _, x, y in pts}) < 2:
        return left_out(title, f"all {len(pts)} points are at ({pts[0][1]:g}, {pts[0][2]:g})")
    fig, ax = plt.subplots(figsize=(5.0, 3.6))
    for i, (label, x, y) in enumerate(pts):
        ax.scatter([x], [y], s=36, color=COLOURS[i % len(COLOURS)], zorder=3)
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(5, 4 + 7 * (i % 2)), fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.margins(0.12)
    return _svg(fig, title)


def histogram(title: str, values: Sequence[float], xlabel: str, bins: int = 12) -> str:
    vals = [v for v in values if math.isfinite(v)]
    if not vals:
        return left_out(title, "no values")
    if min(vals) == max(vals):
        return left_out(title, f"all {len(vals)} values are {vals[0]:g}")
    fig, ax = plt.subplots(figsize=(4.6, 3.0))
    ax.hist(vals, bins=bins, color=COLOURS[0], edgecolor="white")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("samples")
    ax.set_title(f"{title} (n={len(vals)})")
    return _svg(fig, title)


def heatmap(
    title: str,
    rows: Sequence[str],
    cols: Sequence[str],
    values: Sequence[Sequence[Value]],
    xlabel: str,
    ylabel: str,
    *,
    vmin: float = 0.0,
    vmax: float = 1.0,
    fmt: str = "{:.2f}",
) -> str:
    """A matrix with each cell's value written in it (None: grey, 'n/a')."""
    if not rows or not cols or all(not _finite(v) for row in values for v in row):
        return left_out(title, "no values")
    fig, ax = plt.subplots(figsize=(max(3.5, 0.7 * len(cols) + 1.8), max(2.2, 0.4 * len(rows) + 1.2)))
    data = [[float(v) if v is not None and _finite(v) else math.nan for v in row] for row in values]
    # vector cells (pcolormesh), not an embedded raster image: sharp at any zoom, text stays searchable
    im = ax.pcolormesh(data, cmap="RdYlGn", vmin=vmin, vmax=vmax, edgecolors="white", linewidth=0.5)
    ax.invert_yaxis()  # first row on top, as in the papers' tables
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            ax.text(j + 0.5, i + 0.5, fmt.format(v) if _finite(v) else "n/a", ha="center", va="center", fontsize=7)
    ax.set_xticks([j + 0.5 for j in range(len(cols))], [str(c) for c in cols])
    ax.set_yticks([i + 0.5 for i in range(len(rows))], [str(r) for r in rows])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    bar = fig.colorbar(im, ax=ax, fraction=0.05)
    if bar.solids is not None:
        bar.solids.set_rasterized(False)  # matplotlib rasterizes long colour bars: keep the page all vector
    return _svg(fig, title)
