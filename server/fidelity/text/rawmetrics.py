"""radon's raw line metrics (sloc, lloc, comments, multi) from our own token stream.

`radon.raw.analyze` re-tokenises the file line by line (about 1.2 ms for a 50-line function); the same
counts follow from the one tokenisation the core already has. The rules are radon's, quirks included:
a logical line with a `:` that is not its last token counts twice (`if x: return`, but also a dict
literal), and a statement that is a lone multi-line string counts as `multi`, not code.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from server.fidelity.text.tokens import Lexed

_STRING_TOKEN = re.compile(r"[A-Za-z]{0,3}['\"]")
# Characters str.splitlines() treats as line breaks (radon splits with it) besides \n.
_ODD_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


class RawMetrics(NamedTuple):
    sloc: int
    lloc: int
    comments: int
    multi: int


def _logical(code: list[str]) -> int:
    if ";" not in code:  # one statement: the rule below with a single part
        if ":" not in code:
            return 1 if any(code) else 0
        return 1 if code[-1] == ":" else 2
    total = 0
    subs: list[list[str]] = [[]]
    for token in code:
        if token == ";":
            subs.append([])
        else:
            subs[-1].append(token)
    subs[-1].append("")  # radon's ENDMARKER ends the last part only
    for index, sub in enumerate(subs):
        colon = next((i for i in range(len(sub) - 1, -1, -1) if sub[i] == ":"), None)
        if colon is not None:
            total += 2 - (colon == len(sub) - 2)
        elif any(sub[: len(sub) - 1] if index == len(subs) - 1 else sub):
            total += 1
    return total


def raw_metrics(text: str, lexed: Lexed) -> RawMetrics | None:
    """None when the fast rules may differ from radon's (odd line breaks, tokenize failed)."""
    if not lexed.ok or _ODD_BREAKS.search(text):
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    empty = [not line.strip() for line in lines]
    comment_rows: dict[int, int] = {}
    for row, _ in lexed.comments:
        comment_rows[row] = comment_rows.get(row, 0) + 1
    covered = [False] * (len(lines) + 2)
    sloc = lloc = multi = comments = 0

    strings, rows, end_rows = lexed.strings, lexed.rows, lexed.end_rows
    start = 0
    for index, token in enumerate(strings):
        if token not in ("\n", "\r\n", ""):
            continue
        code = strings[start:index]
        first, last = rows[start] if code else rows[index], end_rows[index]
        start = index + 1
        if first == last:  # most logical lines are one line
            line_comments = comment_rows.get(first, 0) if comment_rows else 0
            covered[first] = True
            nonempty = 1 if first <= len(lines) and not empty[first - 1] else 0
        else:
            line_comments = sum(comment_rows.get(r, 0) for r in range(first, last + 1))
            for r in range(first, last + 1):
                covered[r] = True
            nonempty = sum(1 for r in range(first, last + 1) if r <= len(lines) and not empty[r - 1])
        comments += line_comments
        if len(code) == 1 and not line_comments and _STRING_TOKEN.match(code[0]):
            if first != last:
                multi += nonempty
            # else: a one-line lone string is a "single comment" line, not code
        else:
            sloc += nonempty
        lloc += _logical(code)
    # Comment-only lines outside every logical line.
    for row, count in comment_rows.items():
        if not covered[row]:
            comments += count
    return RawMetrics(sloc=sloc, lloc=lloc, comments=comments, multi=multi)
