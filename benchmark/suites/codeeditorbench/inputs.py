"""LeetCode-style tests: the published text as one JSON line per parameter."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from sandbox.judge import read_value

_MD_ESCAPE = re.compile(r"\\([\[\]_*#|<>~`])")
_SCRAPED_STRING = re.compile(r'"((?:[^"\\]|\\.)*?) "')
_NAMED = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*")


class InputError(ValueError):
    """A published test input that cannot be read as the function's arguments."""


def descrape(text: str) -> str:
    """LeetCode text as scraped into the public tests: Markdown escapes (`\\[`) undone and the space the
    scrape put before each closing quote (`"babad "`) removed."""
    return _SCRAPED_STRING.sub(lambda m: f'"{m.group(1)}"', _MD_ESCAPE.sub(r"\1", text))


def _split_top(text: str) -> list[str]:
    parts, depth, cur, quote = [], 0, [], None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch in "[({":
            depth += 1
            cur.append(ch)
        elif ch in "])}":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    if quote is not None:
        raise InputError(f"unterminated string in {text[:80]!r}")
    parts.append("".join(cur))
    return parts


def _is_text(type_text: str) -> bool:
    return bool(re.search(r"\b(?:string|String|str|char|Character)\b", type_text))


def literal(text: str, type_text: str = "") -> Any:
    """One argument value: JSON, else a Python literal, else (for a text parameter) the bare text."""
    s = text.strip()
    if not s:
        raise InputError("an empty value")
    try:
        return read_value(s)
    except ValueError:
        pass
    if _is_text(type_text) and '"' not in s and "[" not in s:
        return s
    raise InputError(f"cannot read {s[:80]!r} as a value")


def argument_lines(text: str, params: Sequence[tuple[str, str]], *, scraped: bool) -> str:
    """A published test input (`nums = [1,2], k = 3`, `[1, 2]`, `PAYPALISHIRING, 4`) as the judge's
    harness reads it: one compact JSON value per line, in parameter order."""
    s = descrape(text.strip()) if scraped else text.strip()
    if not params:
        raise InputError("the function takes no parameters")
    if _NAMED.match(s):
        pieces: list[tuple[str, str]] = []
        for part in _split_top(s):
            m = _NAMED.match(part)
            if m:
                pieces.append((m.group(1), part[m.end() :]))
            elif pieces:  # a comma inside a bare value: glue it back
                pieces[-1] = (pieces[-1][0], pieces[-1][1] + "," + part)
            else:
                raise InputError(f"cannot split {s[:80]!r} into named values")
        by_name = dict(pieces)
        names = [p[0] for p in params]
        values = [by_name[n] for n in names] if set(names) <= set(by_name) else [v for _, v in pieces]
    elif len(params) == 1:
        values = [s]
    else:
        values = _split_top(s)
    if len(values) != len(params):
        raise InputError(f"{len(values)} values for {len(params)} parameters in {s[:80]!r}")
    lines = [
        json.dumps(literal(v, t), ensure_ascii=False, separators=(",", ":"))
        for v, (_, t) in zip(values, params, strict=True)
    ]
    return "".join(line + "\n" for line in lines)


def expected_value(text: str, *, scraped: bool = True) -> str:
    """A published LeetCode-style output as compact JSON (the raw text when it is not a value)."""
    s = descrape(text.strip()) if scraped else text.strip()
    try:
        value = read_value(s)
    except ValueError:
        return s
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
