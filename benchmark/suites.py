"""The suites `bench run --suite NAME` knows: name -> "module:Class" (imported on use, so one suite's
heavy imports never slow down another's run)."""

from __future__ import annotations

import importlib

from benchmark.suite import Suite

SUITES: dict[str, str] = {
    "canitedit": "benchmark.canitedit:CanItEdit",
    "codeeditorbench": "benchmark.codeeditorbench:CodeEditorBench",
    "canaicode": "benchmark.canaicode.suite:CanAiCode",
    "overedit": "benchmark.overedit:OverEdit",
    "bics": "benchmark.bics.suite:Bics",
}


def get(name: str) -> Suite:
    try:
        target = SUITES[name]
    except KeyError:
        raise KeyError(f"unknown suite {name!r}; known: {', '.join(sorted(SUITES))}") from None
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)()
