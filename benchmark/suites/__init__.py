"""The suites `bench run --suite NAME` knows: name -> "module:factory" (imported on use, so one suite's
heavy imports never slow down another's run).

Each suite is a package `benchmark/suites/<name>/`, split by job (tasks and loader, prompts, judge glue,
metrics, report sections, download, CLI); its `suite.py` holds its parts (`Dataset`, `Solver`, `Scorer`,
`Reporter`) and the factory `make(options)` that composes them into the `Suite` value, configured by the
`--suite-option`s (a ValueError names one it does not know). This module imports none of them. Code every
suite shares (engine, store, reports, downloads) stays in `benchmark/`."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmark.suite import Suite

SUITES: dict[str, str] = {
    "canitedit": "benchmark.suites.canitedit.suite:make",
    "codeeditorbench": "benchmark.suites.codeeditorbench.suite:make",
    "canaicode": "benchmark.suites.canaicode.suite:make",
    "overedit": "benchmark.suites.overedit.suite:make",
    "bics": "benchmark.suites.bics.suite:make",
}


def get(name: str, options: Mapping[str, str] | None = None) -> Suite[Any]:
    """The suite `name` configured by `options` (`--suite-option KEY=VALUE`); KeyError: no such suite,
    ValueError: an option it does not take."""
    try:
        target = SUITES[name]
    except KeyError:
        raise KeyError(f"unknown suite {name!r}; known: {', '.join(sorted(SUITES))}") from None
    module, factory = target.split(":")
    suite: Suite[Any] = getattr(importlib.import_module(module), factory)(dict(options or {}))
    return suite


def offering(part: str) -> list[str]:
    """The suites that offer `download` / `published_report` (imports each suite module)."""
    return sorted(n for n in SUITES if getattr(get(n), part) is not None)
