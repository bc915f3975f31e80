"""A self-contained HTML report (inline SVG, no scripts, no external files): opens offline."""

from __future__ import annotations

import html
from collections.abc import Sequence

from benchmark.records import SampleRecord

W, H, PAD = 420, 260, 40


def esc(x: object) -> str:
    return html.escape(str(x))


def fmt(x: float | None, nd: int = 2) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def bars(title: str, items: Sequence[tuple[str, float | None]], unit: str = "") -> str:
    vals = [v for _, v in items if v is not None]
    top = max(vals + [1e-9])
    bw = (W - 2 * PAD) / max(len(items), 1)
    parts = [f'<svg width="{W}" height="{H}" role="img" aria-label="{esc(title)}">',
             f'<text x="{W / 2}" y="16" text-anchor="middle" font-weight="bold">{esc(title)}</text>',
             f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="#444"/>']
    for i, (label, v) in enumerate(items):
        x = PAD + i * bw + bw * 0.15
        h = 0 if v is None else (H - 2 * PAD - 10) * v / top
        parts.append(f'<rect x="{x:.1f}" y="{H - PAD - h:.1f}" width="{bw * 0.7:.1f}" height="{h:.1f}" fill="#4c78a8"/>')
        parts.append(f'<text x="{x + bw * 0.35:.1f}" y="{H - PAD - h - 4:.1f}" text-anchor="middle" font-size="11">'
                     f'{esc(fmt(v, 1))}{unit}</text>')
        parts.append(f'<text x="{x + bw * 0.35:.1f}" y="{H - PAD + 14}" text-anchor="middle" font-size="11">{esc(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def scatter(title: str, points: Sequence[tuple[str, float, float]], xlabel: str, ylabel: str) -> str:
    xs = [p[1] for p in points] or [0.0]
    ys = [p[2] for p in points] or [0.0]
    x0, x1 = min(0.0, *xs), max(1e-9, *xs) * 1.1
    y0, y1 = min(0.0, *ys), max(1e-9, *ys) * 1.1

    def sx(v: float) -> float:
        return PAD + (W - 2 * PAD) * (v - x0) / (x1 - x0)

    def sy(v: float) -> float:
        return H - PAD - (H - 2 * PAD) * (v - y0) / (y1 - y0)

    parts = [f'<svg width="{W}" height="{H}" role="img" aria-label="{esc(title)}">',
             f'<text x="{W / 2}" y="16" text-anchor="middle" font-weight="bold">{esc(title)}</text>',
             f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="#444"/>',
             f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="#444"/>',
             f'<text x="{W / 2}" y="{H - 8}" text-anchor="middle" font-size="11">{esc(xlabel)}</text>',
             f'<text x="12" y="{H / 2}" font-size="11" transform="rotate(-90 12 {H / 2})" text-anchor="middle">{esc(ylabel)}</text>']
    for label, x, y in points:
        parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="5" fill="#e45756"><title>{esc(label)}: '
                     f'{x:.2f}, {y:.3f}</title></circle>')
        parts.append(f'<text x="{sx(x) + 7:.1f}" y="{sy(y) - 6:.1f}" font-size="11">{esc(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def histogram(title: str, values: Sequence[float], bins: int = 12) -> str:
    if not values:
        return f"<p>{esc(title)}: no values</p>"
    lo, hi = min(values), max(values)
    width = (hi - lo) / bins or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / width), bins - 1)] += 1
    items = [(f"{lo + i * width:.2f}", float(c)) for i, c in enumerate(counts)]
    return bars(title, items)


def page(summary: dict, body: str) -> str:
    """A whole report page around a suite's sections."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>edit-fidelity: {esc(summary['suite'])} / {esc(summary['backend'])}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}
svg{{margin:8px;border:1px solid #eee}}</style></head><body>
<h1>{esc(summary['suite'])}: {esc(summary['backend'])}</h1>
{state_banner(summary)}
{body}
</body></html>
"""


def state_banner(summary: dict) -> str:
    """Errors and flaky verdicts above every table: a reader must not take incomplete scores for final."""
    from benchmark.report import state_lines

    lines = state_lines(summary)
    if not lines:
        return f'<p class="state">Complete: scores {esc(summary.get("scores", ""))}.</p>'
    items = "".join(f"<li>{esc(line.strip())}</li>" for line in lines)
    return f'<div class="state" style="border:2px solid #c00;padding:4px 12px;margin:1em 0"><ul>{items}</ul></div>'


def metrics_table(summary: dict) -> str:
    """Every suite's summary metrics, one row per condition."""
    conds = summary.get("conditions") or {}
    names: list[str] = []
    for m in conds.values():
        names += [k for k in m if k not in names and not isinstance(m[k], (dict, list))]
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    rows = "".join(f"<tr><td>{esc(c)}</td>" + "".join(
        f"<td>{esc(fmt(m.get(n), 4) if isinstance(m.get(n), float) else m.get(n, '-'))}</td>" for n in names) + "</tr>"
        for c, m in conds.items())
    return f"<table><tr><th>condition</th>{head}</tr>{rows}</table>"


def render(summary: dict, records: list[SampleRecord]) -> str:
    from benchmark import suites

    own = suites.get(summary["suite"]).html_sections(summary, records)
    return page(summary, own if own is not None else metrics_table(summary))
