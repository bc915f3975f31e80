"""Asking a model where a syntax bug is: the Bug In The Code Stack prompt and its answer format.

The prompt is the BICS paper's, word for word (one user message, its `<system>` part included, as the
paper sent it), with the document's lines numbered as the paper numbers them: `f"{n:<width}| {line}"`,
`width` the digits of the largest number. For a selection, the numbers are the document's own line
numbers, so an answer always names a document line.

The answer format is `<line_number>, <bug_type>`. `parse_answer` accepts exactly that, case-insensitive,
after a reasoning section (`<think>...</think>`), surrounding white space, one trailing period (the
paper's parser drops it too) and an `Answer:` label as in the prompt's examples. Anything else is
unparseable, with the reason; it is never guessed from the text. A type outside the seven is a
parseable (wrong) answer, as in the paper.
"""

from __future__ import annotations

import re

import msgspec

from server.backends.extract import strip_reasoning
from server.backends.prompts import ChatMessage
from server.protocol.names import BUG_TYPES  # the paper's seven, in its order

__all__ = ["BUG_TYPES", "LocatedBug", "build_messages", "document_lines", "number_lines", "parse_answer"]

_PROMPT = """<system>
You are a intelligent assistant.
</system>
  
I will give you a codebase with a syntactic bug hidden at some line. You need to answer the line at which the syntactic error occurs and the type of the syntactic error.

<example>
1 | def fahrenheit_to_celsius(fahrenheit):
2 |   return (fahrenheit - 32) * 5.0/9.0
3 |
4 | def is_prime(num:
5 |     if num <= 1:
6 |         return False
7 |     for i in range(2, int(num**0.5) + 1):
8 |         if num % i == 0:
9 |             return False
10|     return True
Answer: 4, missing_parenthesis
</example>

<example>
1| import random
2| import string
3|
4| def generate_password(length=8):
5|     characters = string.ascii_letters + string.digits
6|     password = '".join(random.choice(characters) for i in range(length))
7|     return password
Answer: 6, mismatched_quotation
</example>

<context>
@@CONTEXT@@
</context>

<bug_types>
missing_colon
missing_parenthesis
missing_quotation
missing_comma
mismatched_quotation
mismatched_bracket
keywords_as_identifier
</bug_types>

Always return your answer in the following format: <line_number>, <bug_type>
Do not write anything else after that."""  # noqa: W293 - the paper's text, its stray spaces included (the line after </system>)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LABEL = re.compile(r"^answer\s*:\s*")
_NUMBER = re.compile(r"^[+-]?[0-9]+$")


class LocatedBug(msgspec.Struct, frozen=True):
    """A parsed answer: `line` (1-based) and `bug_type` when parseable, else `problem` says why not."""

    parseable: bool
    line: int | None = None
    bug_type: str | None = None
    known_type: bool = False
    problem: str | None = None


def document_lines(text: str) -> list[str]:
    """The lines an editor shows (LSP line breaks: \\r\\n, \\r, \\n), without a last empty line."""
    lines = _LINE_BREAK.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines if text else []


def number_lines(lines: list[str], first: int = 1) -> str:
    """The paper's numbering, starting at `first`; the width is that of the largest number."""
    if not lines:
        return ""
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"{first + i:<{width}}| {line}" for i, line in enumerate(lines))


def build_messages(text: str, selection: tuple[int, int] | None = None) -> list[ChatMessage]:
    """The paper's prompt over the document, or over the selected lines (0-based, inclusive)."""
    lines = document_lines(text)
    first = 0
    if selection is not None:
        first, last = selection
        lines = lines[first : last + 1]
    return [ChatMessage("user", _PROMPT.replace("@@CONTEXT@@", number_lines(lines, first + 1)))]


def parse_answer(raw: str) -> LocatedBug:
    text = strip_reasoning(raw).strip().lower()
    if text.endswith("."):
        text = text[:-1].rstrip()
    text = _LABEL.sub("", text)
    if not text:
        return LocatedBug(parseable=False, problem="the answer is empty")
    if "\n" in text:
        return LocatedBug(parseable=False, problem="the answer has more than one line")
    parts = text.split(",")
    if len(parts) != 2:
        return LocatedBug(parseable=False, problem=f"expected `<line_number>, <bug_type>`, got {len(parts) - 1} commas")
    number, bug_type = parts[0].strip(), parts[1].strip()
    if not _NUMBER.match(number):
        return LocatedBug(parseable=False, problem=f"the line number {number[:40]!r} is not an integer")
    if not bug_type:
        return LocatedBug(parseable=False, problem="no bug type after the comma")
    return LocatedBug(parseable=True, line=int(number), bug_type=bug_type, known_type=bug_type in BUG_TYPES)
