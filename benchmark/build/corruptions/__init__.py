"""The corruption generator of the over-editing benchmark (SPEC 3.4): 34 families of small AST-level
bugs (14 in distribution, 20 held out), applied 1 to N at a time to a program's first function with
seeded, interpreter-independent choices, each with its inverse (the gold patch).

`bench make-suite` (benchmark/build/make_suite.py) builds minimal-fix suites with it.
"""

from benchmark.build.corruptions.choice import Chooser
from benchmark.build.corruptions.families import (
    BY_NAME,
    FAMILIES,
    HELD_OUT,
    IN_DISTRIBUTION,
    Family,
    select,
)
from benchmark.build.corruptions.generator import (
    Corrupted,
    Corruption,
    CorruptionError,
    InverseError,
    corrupt,
    first_function,
    gold_patch,
    invert,
    signatures,
)

__all__ = [
    "BY_NAME",
    "FAMILIES",
    "HELD_OUT",
    "IN_DISTRIBUTION",
    "Chooser",
    "Corrupted",
    "Corruption",
    "CorruptionError",
    "Family",
    "InverseError",
    "corrupt",
    "first_function",
    "gold_patch",
    "invert",
    "select",
    "signatures",
]
