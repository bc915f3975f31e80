"""The suites `bench run --suite NAME` knows: name -> "module:Class" (imported on use, so one suite's
heavy imports never slow down another's run).

Each suite is a package `benchmark/suites/<name>/`, split by job (tasks and loader, prompts, judge glue,
metrics, report sections, download, CLI), its `Suite[TaskType]` subclass in `<name>/suite.py`; this module
imports none of them. Code every suite shares (engine, store, reports, downloads) stays in `benchmark/`."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchmark.suite import Suite

SUITES: dict[str, str] = {
    "canitedit": "benchmark.suites.canitedit.suite:CanItEdit",
    "codeeditorbench": "benchmark.suites.codeeditorbench.suite:CodeEditorBench",
    "canaicode": "benchmark.suites.canaicode.suite:CanAiCode",
    "overedit": "benchmark.suites.overedit.suite:OverEdit",
    "bics": "benchmark.suites.bics.suite:Bics",
}


def suite_class(name: str) -> type[Suite[Any]]:
    try:
        target = SUITES[name]
    except KeyError:
        raise KeyError(f"unknown suite {name!r}; known: {', '.join(sorted(SUITES))}") from None
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)


def get(name: str) -> Suite[Any]:
    return suite_class(name)()


def offering(hook: str) -> list[str]:
    """The suites that implement `Suite.download` / `Suite.published_report` (imports each suite module)."""
    return sorted(n for n in SUITES if suite_class(n).offers(hook))
