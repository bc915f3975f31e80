"""`Language`: what the core asks of a language, so `server.fidelity.measure` picks one once and asks it.

Three kinds implement it: Python (`lang/python.py`, the paper-compatible path over `text/`), each language
of the table with a tree-sitter grammar (`lang/grammar.py`'s `Grammar`), and a language with none
(`Unsupported`: token distance and unclassified line units).
"""

from __future__ import annotations

from typing import Protocol

from server.protocol.report import FidelityReport


class Language(Protocol):
    @property
    def name(self) -> str:
        """The name the report gives (`FidelityReport.language`)."""
        ...

    def measure(self, original: str, edited: str, *, gold: str | None, target: range | None) -> FidelityReport:
        """How faithful `edited` is to `original` (`server.fidelity.measure.measure`)."""
        ...
