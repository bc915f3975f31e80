"""CanItEdit's task type (SPEC 3.3): a problem, its two instruction kinds, where its data lives."""

from __future__ import annotations

from pathlib import Path

import msgspec

NAME = "canitedit"
CONDITIONS = ("descriptive", "lazy")
HF_DATASET = "nuprl/CanItEdit"
FILE = Path("canitedit") / "canitedit_test.jsonl"


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    name: str
    full_name: str
    before: str
    after: str
    tests: str
    instruction_descriptive: str
    instruction_lazy: str
    taxonomy: dict = {}

    @property
    def task_id(self) -> str:
        return self.full_name

    def instruction(self, condition: str) -> str:
        if condition == "descriptive":
            return self.instruction_descriptive
        if condition == "lazy":
            return self.instruction_lazy
        raise ValueError(f"unknown CanItEdit condition {condition!r}; known: {', '.join(CONDITIONS)}")
