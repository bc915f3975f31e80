"""`measure`: the full fidelity report of one edit, from the `Language` it is written in (picked once)."""

from __future__ import annotations

from server.fidelity.lang.grammar import Grammar, Unsupported
from server.fidelity.lang.language import Language
from server.fidelity.lang.python import Python
from server.fidelity.lang.table import Lang, detect
from server.protocol.report import FidelityReport

_PYTHON: Language = Python()


def language_of(language: str | None) -> Language:
    """An LSP `languageId` or a language-layer name as a `Language`: None or Python is the paper-compatible
    path; JavaScript, TypeScript, Java, C, C++, Go and Rust go through the tree-sitter layer; anything else
    is unsupported (token distance only), never Python."""
    if language is None:
        return _PYTHON
    found = detect(language)
    if found is None:
        return Unsupported(language.strip().lower() or "unknown")
    return Grammar(found) if isinstance(found, Lang) else _PYTHON


def measure(
    original: str,
    edited: str,
    *,
    gold: str | None = None,
    target: range | None = None,
    language: str | None = None,
) -> FidelityReport:
    """How faithful `edited` is to `original`.

    `gold` is the reference minimal edit (enables `excess`); `target` is the range of 1-based original
    lines the edit was asked for (units outside it are `outside_target`). Never raises on bad code:
    text that does not parse gets fallback tokens and complexity `None`. `language`: see `language_of`
    (the same report for every language).
    """
    return language_of(language).measure(original, edited, gold=gold, target=target)
