"""BICS reports in text, JSON and HTML, for published runs and ours alike.

An entry is one model's scores as `scoring.summarise` gives them, plus `name` and `source`
("published" or "ours"). Published runs only have parseable answers (the paper retried the others),
so their "all" scores equal their "parseable" ones. The HTML page is self-contained: one heatmap
(inline SVG, length x depth) per entry, no scripts, no external files.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

from benchmark.suites.bics import BUG_TYPES


def _esc(x: object) -> str:
    return html.escape(str(x))


def _fmt(x: float | None, nd: int = 2) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def _depth(d: float) -> str:
    return f"{d:g}"


def heatmap_svg(title: str, matrix: dict) -> str:
    """Accuracy per (depth row, length column), each cell labelled with its value (matplotlib, inline SVG)."""
    from benchmark.report import charts

    return charts.heatmap(
        title,
        [_depth(d) for d in matrix["depths"]],
        [str(n) for n in matrix["lengths"]],
        matrix["accuracy"],
        "target length (tokens)",
        "depth",
        vmin=0.0,
        vmax=100.0,
        fmt="{:.1f}",
    )


def _types(entries: Sequence[dict]) -> list[str]:
    return [b for b in BUG_TYPES if any(b in e[k]["per_bug_type"] for e in entries for k in ("parseable", "all"))]


def _views(entry: dict) -> list[tuple[str, dict]]:
    views = [("among parseable", entry["parseable"])]
    if entry.get("source") != "published":
        views.append(("unparseable = wrong", entry["all"]))
    return views


def render_text(entries: Sequence[dict], *, title: str = "Bug In The Code Stack") -> str:
    lines = [title, ""]
    head = f"{'model':<34} {'source':<9} {'accuracy':>9} {'w/o longest':>12} {'all':>7} {'all w/o L':>10} {'trials':>7} {'unparsed':>9}"
    lines += [head, "-" * len(head)]
    for e in entries:
        p, a = e["parseable"], e["all"]
        lines.append(
            f"{e['name'][:34]:<34} {e.get('source', ''):<9} {_fmt(p['accuracy']):>9} "
            f"{_fmt(p['accuracy_without_longest']):>12} {_fmt(a['accuracy']):>7} "
            f"{_fmt(a['accuracy_without_longest']):>10} {e['trials']:>7} {e['unparseable']:>9}"
        )
    lines += [
        "",
        (
            "accuracy: mean of the length x depth cell accuracies among parseable answers (the published "
            "measure); all: unparseable answers counted wrong; w/o longest: without the longest target length."
        ),
        "",
    ]
    types = _types(entries)
    for key, label in (("parseable", "per bug type, parseable"), ("all", "per bug type, all")):
        widths = [max(12, len(b)) for b in types]  # a column as wide as its header: never cut
        head = f"{label:<34}" + "".join(f" {b:>{w}}" for b, w in zip(types, widths, strict=True))
        lines += [head, "-" * len(head)]
        for e in entries:
            pb = e[key]["per_bug_type"]
            lines.append(
                f"{e['name'][:34]:<34}"
                + "".join(f" {_fmt(pb.get(b, {}).get('accuracy'), 1):>{w}}" for b, w in zip(types, widths, strict=True))
            )
        lines.append("")
    for e in entries:
        for label, view in _views(e):
            m = view["matrix"]
            lines += ["", f"{e['name']}: accuracy by depth (rows) and target length (columns), {label}"]
            lines.append(f"{'depth':>6}" + "".join(f" {n:>7}" for n in m["lengths"]))
            for d, row in zip(m["depths"], m["accuracy"], strict=True):
                lines.append(f"{_depth(d):>6}" + "".join(f" {_fmt(a, 1):>7}" for a in row))
    return "\n".join(lines)


def render_json(entries: Sequence[dict]) -> str:
    return json.dumps({"suite": "bics", "models": list(entries)}, indent=2)


def render_sections(entries: Sequence[dict]) -> str:
    """The report's body: the headline table, accuracy per bug type and one heatmap per entry and view."""
    rows = "".join(
        f"<tr><td style='text-align:left'>{_esc(e['name'])}</td><td>{_esc(e.get('source', ''))}</td>"
        f"<td>{_fmt(e['parseable']['accuracy'])}</td><td>{_fmt(e['parseable']['accuracy_without_longest'])}</td>"
        f"<td>{_fmt(e['all']['accuracy'])}</td><td>{_fmt(e['all']['accuracy_without_longest'])}</td>"
        f"<td>{e['trials']}</td><td>{e['unparseable']}</td></tr>"
        for e in entries
    )
    types = _types(entries)
    type_rows = "".join(
        f"<tr><td style='text-align:left'>{_esc(e['name'])}</td><td>{label}</td>"
        + "".join(f"<td>{_fmt(view['per_bug_type'].get(b, {}).get('accuracy'), 1)}</td>" for b in types)
        + "</tr>"
        for e in entries
        for label, view in _views(e)
    )
    maps = "".join(heatmap_svg(f"{e['name']} ({label})", view["matrix"]) for e in entries for label, view in _views(e))
    return f"""<table><tr><th>model</th><th>source</th><th>accuracy</th><th>without longest</th><th>all</th>
<th>all without longest</th><th>trials</th><th>unparseable</th></tr>{rows}</table>
<p>accuracy: the mean of the length x depth cell accuracies among parseable answers (the published measure); all:
unparseable answers counted wrong; without longest: the longest target length left out. Published runs retried
unparseable answers, so both are the same for them.</p>
<h2>Accuracy per bug type</h2>
<table><tr><th>model</th><th>answers</th>{"".join(f"<th>{_esc(b)}</th>" for b in types)}</tr>{type_rows}</table>
<h2>Accuracy by target length and depth</h2>
<div>{maps}</div>"""


def render_html(entries: Sequence[dict], *, title: str = "Bug In The Code Stack") -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>edit-fidelity: {_esc(title)}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin-bottom:1.5em}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}svg{{margin:8px;border:1px solid #eee}}</style></head><body>
<h1>{_esc(title)}</h1>
{render_sections(entries)}
</body></html>
"""


def render(entries: Sequence[dict], fmt: str, *, title: str = "Bug In The Code Stack") -> str:
    if fmt == "text":
        return render_text(entries, title=title)
    if fmt == "json":
        return render_json(entries)
    if fmt == "html":
        return render_html(entries, title=title)
    raise ValueError(f"unknown format {fmt!r}; use text, json or html")
