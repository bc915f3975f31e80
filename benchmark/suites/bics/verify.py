"""Independent checks of a generated haystack (used by the tests and `python -m benchmark.suites.bics check`).

- the label against the text: put the clean snippet back in place of the bug snippet; exactly one line
  differs, and it is the label;
- the label against the interpreter: the SyntaxError line of the haystack (None when it compiles);
- the token count against a whole-text count, and the length against the target: a haystack short
  of the target would reach it with the snippet it dropped; one at or over the target would not be
  without its bug snippet (the paper appends the bug snippet before its count catches up with it).
"""

from __future__ import annotations

import msgspec

from benchmark.suites.bics.haystack import Haystack, number_lines
from benchmark.suites.bics.inserters import syntax_error_line
from benchmark.suites.bics.snippets import SnippetTable
from benchmark.suites.bics.tokens import count_tokens


class HaystackCheck(msgspec.Struct, frozen=True, kw_only=True):
    label_by_text: int | None  # the one line that differs from the clean haystack (None: not exactly one)
    interpreter_line: int | None  # SyntaxError line of the haystack (None: it compiles)
    tokens_exact: bool  # the incremental count equals a whole-text count
    within_one_snippet: bool


def clean_code(table: SnippetTable, h: Haystack) -> str:
    rows = {s.row: s.code for s in table.snippets}
    return "\n\n".join(rows[r] for r in h.snippet_rows)


def label_by_text(table: SnippetTable, h: Haystack) -> int | None:
    buggy, clean = h.code.split("\n"), clean_code(table, h).split("\n")
    if len(buggy) != len(clean):
        return None
    diff = [i + 1 for i, (a, b) in enumerate(zip(buggy, clean, strict=True)) if a != b]
    return diff[0] if len(diff) == 1 else None


def within_one_snippet(table: SnippetTable, h: Haystack) -> bool:
    if h.tokens < h.target_length:
        # stopped short: the snippet it dropped would have reached the target
        return h.next_tokens is not None and h.next_tokens >= h.target_length
    # at or over the target: only because of the bug snippet, without which it would not be
    rows = {s.row: s.code for s in table.snippets}
    others = [rows[r] for i, r in enumerate(h.snippet_rows) if i != h.bug_index]
    return count_tokens(number_lines("\n\n".join(others))) <= h.target_length


def check(table: SnippetTable, h: Haystack, *, count_whole: bool = True) -> HaystackCheck:
    return HaystackCheck(
        label_by_text=label_by_text(table, h),
        interpreter_line=syntax_error_line(h.code),
        tokens_exact=(count_tokens(h.numbered) == h.tokens) if count_whole else True,
        within_one_snippet=within_one_snippet(table, h),
    )
