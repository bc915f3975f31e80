"""Getting code out of a model's answer.

Order: reasoning sections (`<think>...</think>`, also an answer that only has the closing tag) are
removed; then the longest fenced block tagged python (or untagged) wins; a block cut off by the
token limit (opening fence, no closing one) counts; failing that, the whole answer when it parses
as Python (as the over-editing paper does), also after removing a common indentation. Anything else
has no code: the caller turns that into an error proposal.
"""

from __future__ import annotations

import ast
import re
import textwrap

from server.fidelity.text import pyast

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
# An opening fence: 3+ backticks or tildes at the start of a line, an optional info string.
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$", re.MULTILINE)

_STATEMENT_START = re.compile(r"^(def |class |async def |import |from \S+ import |@\w)")
PYTHON_TAGS = {"python", "py", "python3", "py3", "ipython", "pycon", "sage", "cython"}
_SELECTION_MARKER = re.compile(r"^[ \t]*(?:#|//) (>>> SELECTION START|<<< SELECTION END)[ \t]*\n?", re.MULTILINE)
# fence tags per languageId (besides the id itself)
LANGUAGE_TAGS: dict[str, set[str]] = {
    "javascript": {"javascript", "js", "node", "nodejs", "jsx", "mjs"},
    "typescript": {"typescript", "ts", "tsx"},
    "cpp": {"cpp", "c++", "cc", "cxx", "hpp", "c"},
    "c": {"c", "h"},
    "java": {"java"},
    "go": {"go", "golang"},
    "rust": {"rust", "rs"},
}


def strip_reasoning(answer: str) -> str:
    text = _THINK_BLOCK.sub("", answer)
    closes = list(_THINK_CLOSE.finditer(text))
    close = closes[-1] if closes else None
    if close is not None:  # a closing tag without its opening one: everything before is reasoning
        text = text[close.end() :]
    opened = _THINK_OPEN.search(text)
    if opened is not None:  # reasoning that never ended: there is no answer after it
        text = text[: opened.start()]
    return text


def fenced_blocks(text: str) -> list[tuple[str, str, bool]]:
    """(info tag lower-cased, body, closed) for each fenced block, in order."""
    blocks: list[tuple[str, str, bool]] = []
    pos = 0
    while True:
        m = _FENCE_OPEN.search(text, pos)
        if m is None:
            break
        fence = m.group("fence")
        info = m.group("info").strip().split()
        tag = info[0].lower().lstrip("{.").rstrip("}") if info else ""
        body_start = m.end() + 1
        closing = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$", re.MULTILINE)
        c = closing.search(text, body_start) if body_start <= len(text) else None
        if c is None:
            body = text[body_start:]
            blocks.append((tag, _unindent(body, m.group("indent")), False))
            break
        body = text[body_start : c.start()]
        blocks.append((tag, _unindent(body, m.group("indent")), True))
        pos = c.end()
    return blocks


def _unindent(body: str, indent: str) -> str:
    if not indent:
        return body
    out = []
    for line in body.splitlines(keepends=True):
        out.append(line.removeprefix(indent))
    return "".join(out)


def parses(code: str) -> bool:
    try:
        pyast.parse(code, quiet=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def _looks_like_code(text: str) -> bool:
    stripped = text.strip()
    if not stripped:
        return False
    if parses(stripped) or parses(textwrap.dedent(text).strip()):
        # A sentence of prose ("Sure.") can be valid Python only as a bare name or expression; demand
        # more than one bare word on the first line before calling it code.
        tree = None
        try:
            tree = pyast.parse(textwrap.dedent(text).strip())
        except SyntaxError:
            return True
        if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
            value = tree.body[0].value
            if isinstance(value, (ast.Name, ast.Constant)):
                return False
        return True
    return False


def extract_for(answer: str | None, *, language: str = "python", mode: str = "longest") -> str | None:
    """The code in an answer for a document of `language`, read as the prompt style says: `longest`
    (our extractor), `first` (CanItEdit's: the lines of the first ``` block, None when none),
    `first_or_all` (the first block, else the whole answer) or `raw` (the whole answer)."""
    if answer is None:
        return None
    if mode == "raw":
        text = strip_reasoning(answer.replace("\r\n", "\n"))
        return _clean(text) if text.strip() else None
    if mode in ("first", "first_or_all"):
        text = strip_reasoning(answer.replace("\r\n", "\n"))
        code = first_block_lines(text)
        if code is None and mode == "first_or_all" and "```" not in text and text.strip():
            return _clean(text.strip("\n"))
        return code
    if language == "python":
        return extract_code(answer)
    return _extract_other(answer, language)


def first_block_lines(text: str) -> str | None:
    """CanItEdit's `python_markdown_codeblock_extract`: lines after the first line starting with ```
    up to the next such line (or the end); None when that is empty."""
    buf: list[str] = []
    inside = False
    for line in text.split("\n"):
        if line.startswith("```"):
            if inside:
                break
            inside = True
        elif inside:
            buf.append(line + "\n")
    code = "".join(buf)
    return code if code.strip() else None


def _extract_other(answer: str, language: str) -> str | None:
    """Non-Python documents: the longest block tagged for the language (or untagged); without fences,
    the whole answer when it looks like code of a braces language (a line ending in ; { or })."""
    if not answer.strip():
        return None
    text = strip_reasoning(answer.replace("\r\n", "\n"))
    tags = LANGUAGE_TAGS.get(language, set()) | {language}
    blocks = fenced_blocks(text)
    if blocks:
        pool = [b for b in blocks if b[0] in tags] or [b for b in blocks if b[0] == ""]
        candidates = [b[1] for b in pool if b[1].strip()]
        return _clean(max(candidates, key=len)) if candidates else None
    if any(ln.rstrip().endswith((";", "{", "}")) for ln in text.splitlines()):
        return _clean(text.strip("\n"))
    return None


def extract_code(answer: str | None) -> str | None:
    """The code in a model's answer (Python), or None when there is none."""
    if not answer or not answer.strip():
        return None
    text = strip_reasoning(answer.replace("\r\n", "\n"))
    blocks = fenced_blocks(text)
    if blocks:
        python = [b for b in blocks if b[0] in PYTHON_TAGS]
        untagged = [b for b in blocks if b[0] == ""]
        pool = python or untagged
        candidates = [b[1] for b in pool if b[1].strip()]
        if candidates:
            return _clean(max(candidates, key=len))
        # Only blocks in other languages (diff, text, json...): they are not Python code.
        others = [b[1] for b in blocks if b[1].strip() and b[0] not in {"diff", "patch"}]
        code = [c for c in others if _looks_like_code(c)]
        if code:
            return _clean(max(code, key=len))
        return None
    if _looks_like_code(text):
        return _clean(text.strip("\n"))
    # unfenced code wrapped in prose ("Here is the fix:" ... "This works because ..."): the span
    # from the first line that starts a statement to the last line that keeps it parseable
    lines = text.splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if _STATEMENT_START.match(ln)]
    for first in starts[:3]:
        for last in range(len(lines), first, -1):
            chunk = "".join(lines[first:last])
            if chunk.count("\n") >= 1 and _looks_like_code(chunk):
                return _clean(chunk.strip("\n"))
    return None


def _clean(code: str) -> str:
    code = _SELECTION_MARKER.sub("", code)
    if code and not code.endswith("\n"):
        code += "\n"
    return code
