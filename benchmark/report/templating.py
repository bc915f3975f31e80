"""HTML reports: jinja2 templates (autoescaped) in `templates/`, matplotlib charts, the sample browser."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).parent / "templates"


def short_backend(spec: str) -> str:
    """A backend as a heading shows it: a recorded run by its file's name (the full path in a tooltip)."""
    kind, sep, path = spec.partition(":")
    return f"{kind}:{Path(path).name or path}" if sep and kind == "recorded" else spec


@cache
def env() -> jinja2.Environment:
    out = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    out.filters["short_backend"] = short_backend
    return out
