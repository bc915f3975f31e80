"""The BICS snippet table: `bics/bug_in_the_code_stack_alpaca_dataset.csv` in the data directory.

Columns: `output` (a clean snippet), then per bug type `output_TYPE` (the snippet with the paper's
pre-inserted bug, empty where it has none) and `bug_line_number_TYPE` (its 1-based line, -1 when none).

A clean snippet joins the haystack pool only if it compiles on its own, has no line separators other
than `\\n` (`str.splitlines` and editors would number such lines differently) and no `__future__`
import (legal only at the top of a file). A pre-bugged entry needs a readable positive line inside
its snippet. Every rejected row or entry is listed in `problems`, one message each; loading goes on.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import msgspec

from benchmark.datadir import DataError, data_dir, require
from benchmark.suites.bics import BUG_TYPES
from benchmark.suites.bics.inserters import syntax_error_line

CSV_NAME = "bug_in_the_code_stack_alpaca_dataset.csv"
# what str.splitlines treats as a line break besides "\n"
_OTHER_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_FUTURE = re.compile(r"^\s*from\s+__future__\s+import", re.MULTILINE)


class PreBugged(msgspec.Struct, frozen=True):
    code: str
    line: int  # 1-based, within `code`


class Snippet(msgspec.Struct, frozen=True):
    row: int  # 0-based row of the table (the snippet's id)
    code: str
    bugged: dict[str, PreBugged] = {}  # the paper's pre-inserted bugs by type


class SnippetTable(msgspec.Struct, frozen=True):
    snippets: list[Snippet]  # the clean pool, in table order
    problems: list[str]  # one message per rejected row or entry
    rows: int  # rows read

    def with_bug(self, bug_type: str) -> list[Snippet]:
        return [s for s in self.snippets if bug_type in s.bugged]


def clean_problem(code: str) -> str | None:
    """Why `code` cannot be a haystack snippet, or None."""
    if not code.strip():
        return "empty snippet"
    if _OTHER_BREAKS.search(code):
        return "contains a line break other than \\n"
    if code.endswith("\n"):  # the paper's label formula counts the joining blank line only
        return "ends with a line break"
    if _FUTURE.search(code):
        return "has a __future__ import"
    line = syntax_error_line(code)
    if line is not None:
        return f"does not compile (SyntaxError at line {line})"
    return None


def _prebugged(row_no: int, row: dict[str, str], bug_type: str, problems: list[str]) -> PreBugged | None:
    code = row.get(f"output_{bug_type}") or ""
    raw = (row.get(f"bug_line_number_{bug_type}") or "").strip()
    if not code:
        return None
    try:
        line = int(float(raw))
    except ValueError:
        problems.append(f"row {row_no}: {bug_type}: bug line {raw!r} is not a number")
        return None
    n_lines = len(code.split("\n"))
    if not 1 <= line <= n_lines:
        problems.append(f"row {row_no}: {bug_type}: bug line {line} outside the snippet's {n_lines} lines")
        return None
    if _OTHER_BREAKS.search(code):
        problems.append(f"row {row_no}: {bug_type}: contains a line break other than \\n")
        return None
    return PreBugged(code=code, line=line)


def parse_rows(rows: list[dict[str, str]]) -> SnippetTable:
    snippets: list[Snippet] = []
    problems: list[str] = []
    for i, row in enumerate(rows):
        code = row.get("output")
        if code is None:
            problems.append(f"row {i}: no `output` column")
            continue
        why = clean_problem(code)
        if why is not None:
            problems.append(f"row {i}: {why}")
            continue
        bugged = {}
        for bug_type in BUG_TYPES:
            pre = _prebugged(i, row, bug_type, problems)
            if pre is not None:
                bugged[bug_type] = pre
        snippets.append(Snippet(row=i, code=code, bugged=bugged))
    return SnippetTable(snippets=snippets, problems=problems, rows=len(rows))


def read_csv(path: Path) -> SnippetTable:
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            if not reader.fieldnames or "output" not in reader.fieldnames:
                raise DataError(f"{path}: not the BICS snippet table (no `output` column)")
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path}: cannot read the BICS snippet table: {exc}") from None
    return parse_rows(rows)


_cache: dict[Path, SnippetTable] = {}


def load(data: str | Path | None = None) -> SnippetTable:
    """The snippet table of the data directory (read once per process); with no directory configured (the
    per-user cache), the first use downloads the BICS files."""
    from benchmark.suites.bics.download import ensure

    ensure(data)
    path = require(
        data_dir(data) / "bics" / CSV_NAME,
        f"BICS snippets (bics/{CSV_NAME}; `edit-fidelity bench download bics` fetches them)",
    ).resolve()
    table = _cache.get(path)
    if table is None:
        table = _cache[path] = read_csv(path)
        if not table.snippets:
            raise DataError(f"{path}: no usable snippet ({len(table.problems)} rows rejected)")
    return table
