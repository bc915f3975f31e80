"""A suite is a frozen value of its parts (`benchmark.suite`): every registered suite's factory composes a
Dataset, Solver, Scorer and Reporter; `--suite-option`s make another value; what a suite optionally offers is
a field that is set or None, not a method probed for being overridden."""

from __future__ import annotations

import dataclasses

import pytest

from benchmark import suites
from benchmark.suite import Dataset, Reporter, Scorer, Solver, Suite


@pytest.mark.parametrize("name", sorted(suites.SUITES))
def test_every_suite_is_a_frozen_value_of_its_parts(name: str) -> None:
    suite = suites.get(name)
    assert isinstance(suite, Suite) and suite.name == name
    parts = {"dataset": (Dataset, "load"), "solver": (Solver, "ask"), "scorer": (Scorer, "judge")}
    parts["reporter"] = (Reporter, "summarise")
    for part, (protocol, required) in parts.items():
        cls = type(getattr(suite, part))
        assert protocol in cls.__mro__, (name, part)  # each part subclasses its protocol, for its defaults
        if protocol is not Solver:  # the solver's `ask` has a default (an edit); the others are the part's own
            assert getattr(cls, required) is not getattr(protocol, required), (name, part, required)
    with pytest.raises(dataclasses.FrozenInstanceError):
        suite.name = "other"  # type: ignore[misc]
    assert set(suite.default_conditions or suite.conditions) <= set(suite.conditions)


def test_options_make_another_value_and_bad_ones_are_named() -> None:
    plain = suites.get("bics")
    chosen = suites.get("bics", {"lengths": "300", "trials": "2"})
    assert chosen is not plain and chosen.dataset.grid.lengths == (300,)  # type: ignore[attr-defined]
    assert plain.dataset.grid.lengths != (300,)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="suite canitedit takes no options"):
        suites.get("canitedit", {"x": "1"})
    with pytest.raises(ValueError, match="unknown option"):
        suites.get("canaicode", {"nosuch": "1"})
    with pytest.raises(KeyError, match="unknown suite"):
        suites.get("nosuch")


def test_what_a_suite_offers_is_a_field() -> None:
    assert suites.offering("published_report") == ["bics"]
    assert suites.offering("download") == sorted(suites.SUITES)  # every suite fetches its data
    assert suites.get("canitedit").published_report is None
    assert suites.get("overedit").sandbox_envs([]) == []  # one environment per task: none without tasks
    assert suites.get("canitedit").sandbox_envs([]) == ["canitedit"]
