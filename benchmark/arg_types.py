"""Argument types for the benchmark's command lines (`bench`, the studies, the corpus builder): a bad value
is a usage error, one line, before anything runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def number_arg(kind: type, low: float, high: float | None = None, *, open_low: bool = False) -> Callable[[str], Any]:
    """An argparse type: a number in [low, high] (or (low, high]), so a bad value is a usage error."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value < low or (open_low and value == low) or (high is not None and value > high):
            bounds = f"{'>' if open_low else '>='} {low:g}" + (f" and <= {high:g}" if high is not None else "")
            raise argparse.ArgumentTypeError(f"{text} must be {bounds}")
        return value

    return parse


POSITIVE = number_arg(int, 1)
NON_NEGATIVE = number_arg(int, 0)
