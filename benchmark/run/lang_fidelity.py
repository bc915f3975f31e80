"""Fidelity numbers of one answer through the core's language layer, for suites whose answers are not
Python (CodeEditorBench's C++ and Java): the token distance to the original and its excess over the
gold edit, and the complexity delta (cyclomatic and SonarSource cognitive, whole file) where the
paper's Python-only metric has none. Python answers keep the paper-compatible numbers the server
reports; this adds nothing for them.
"""

from __future__ import annotations

from typing import Any

from server.fidelity.measure import measure


def lang_fidelity(language: str, original: str, answer: str, gold: str | None) -> dict[str, Any] | None:
    """{language, distance, excess, cyclomatic_delta, cognitive_delta, added_cognitive} of `answer`
    measured against `original` as `language` (None for Python, which the paper's path covers).

    `added_cognitive` is CC(answer) - CC(gold), the paper's "added complexity" with Sonar's metric;
    a number is None where a side does not parse."""
    if language in ("python", "py"):
        return None
    report = measure(original, answer, gold=gold, language=language)
    c = report.complexity
    added = None
    if gold is not None:
        g = measure(original, gold, language=language).complexity["sonar"].after
        after = c["sonar"].after
        added = None if g is None or after is None else after - g
    return {
        "language": report.language,
        "distance": report.distance["no_comments"].normalized,
        "distance_tokens": report.distance["no_comments"].tokens,
        "excess": None if report.excess is None else report.excess["no_comments"],
        "cyclomatic_delta": c["cyclomatic"].delta,
        "cognitive_delta": c["sonar"].delta,
        "added_cognitive": added,
        "hunks": len(report.hunks),
        "unrequested_hunks": sum(h.unrequested for h in report.hunks),
    }
