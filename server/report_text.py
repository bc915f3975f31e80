"""A readable rendering of a fidelity report for terminals (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from server.fidelity import VARIANTS, FidelityReport


def _number(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def _signed(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    text = _number(value, digits)
    return f"+{text}" if value > 0 else text


def render_report(report: FidelityReport, *, title: str, console: Console | None = None) -> None:
    console = console or Console(highlight=False)
    console.print(f"[bold]{title}[/bold]")
    if report.identical:
        console.print("no change")
        return
    for side, error in (("original", report.parse_errors.original), ("edited", report.parse_errors.edited)):
        if error:
            console.print(f"[yellow]the {side} text does not parse ({error}): fallback tokens, no complexity[/yellow]")

    distance = Table(title="token edit distance", title_justify="left")
    distance.add_column("variant")
    distance.add_column("tokens", justify="right")
    distance.add_column("normalised", justify="right")
    if report.excess is not None:
        distance.add_column("gold", justify="right")
        distance.add_column("excess", justify="right")
    for variant in VARIANTS:
        d = report.distance[variant]
        row = [variant, str(d.tokens), _number(d.normalized)]
        if report.excess is not None and report.gold_distance is not None:
            row += [_number(report.gold_distance[variant].normalized), _signed(report.excess[variant], 4)]
        distance.add_row(*row)
    console.print(distance)

    complexity = Table(title="complexity", title_justify="left")
    for column in ("metric", "before", "after", "delta"):
        complexity.add_column(column, justify="left" if column == "metric" else "right")
    for name, c in report.complexity.items():
        complexity.add_row(name, _number(c.before, 2), _number(c.after, 2), _signed(c.delta))
    console.print(complexity)

    flagged = [h for h in report.hunks if h.unrequested]
    console.print(f"{len(report.hunks)} changed regions, {len(flagged)} with changes nobody asked for:")
    for hunk in report.hunks:
        where = (
            f"lines {hunk.start_line}-{hunk.end_line}"
            if hunk.end_line >= hunk.start_line
            else f"before line {hunk.start_line}"
        )
        marker = "[red]![/red]" if hunk.unrequested else " "
        console.print(f" {marker} {where}: {', '.join(hunk.kinds)}: {hunk.message}")
    if report.functions:
        console.print(
            "functions: " + ", ".join(f"{f.name} ({f.status}, {f.tokens_changed} tokens)" for f in report.functions)
        )
