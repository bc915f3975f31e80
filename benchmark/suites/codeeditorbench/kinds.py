"""The suite's name, task kinds and conditions (`KIND` zero-shot, `KIND-3shot` with worked examples)."""

from __future__ import annotations

NAME = "codeeditorbench"
KINDS = ("debug", "translate", "polish", "switch")
CONDITIONS = (*KINDS, *(f"{k}-3shot" for k in KINDS))
# Win Rate: the category metric that ranks the backends.
CATEGORY_METRIC = {"debug": "pass@1", "translate": "pass@1", "polish": "opt_score", "switch": "pass@1"}


def kind_of(condition: str) -> str:
    return condition.split("-", 1)[0]
