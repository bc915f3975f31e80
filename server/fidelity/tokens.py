"""Tokenisation for the distance metrics, compatible with the over-editing paper on any interpreter.

The paper tokenises with `tokenize.generate_tokens` on Python 3.11, drops COMMENT, NL, INDENT, DEDENT,
ENCODING and ENDMARKER, and falls back to `str.split()` when tokenisation raises. Python 3.12 moved
tokenize to C and split f-strings into several tokens; `lex` runs 3.11's own algorithm instead, so the
published numbers are reproduced on any interpreter (and faster). `_lex_stdlib` is the slower route for
an interpreter without 3.11's regular expressions: it joins each f-string back into one STRING token.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import NamedTuple

_SKIPPED = frozenset(
    (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER)
)
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)
_TSTRING_START = getattr(tokenize, "TSTRING_START", None)
_TSTRING_END = getattr(tokenize, "TSTRING_END", None)
_STRING_STARTS = frozenset(t for t in (_FSTRING_START, _TSTRING_START) if t is not None)
_STRING_ENDS = frozenset(t for t in (_FSTRING_END, _TSTRING_END) if t is not None)


class Lexed(NamedTuple):
    """One tokenisation of a text, everything the core needs from it.

    `strings` is the paper's token list. `rows` holds, per token, the 1-based line it belongs to for
    hunk mapping (NEWLINE is attached to the line it ends, not the next one). `comments` lists
    (row, text) of every comment. `ok` is False when tokenize raised and `strings` is `text.split()`.
    """

    strings: list[str]
    rows: list[int]
    end_rows: list[int]
    comments: list[tuple[int, str]]
    ok: bool


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def lex(text: str) -> Lexed:
    """Tokenise with Python 3.11's rules on any interpreter (see `_lex_311`), else the stdlib tokenizer."""
    if _PSEUDO is None:
        return _lex_stdlib(text)
    try:
        return _lex_311(text)
    except (tokenize.TokenError, SyntaxError):
        return _split_fallback(text)


# Python 3.11's pure-Python tokenizer rules. 3.12+ tokenize through C (f-strings become several tokens)
# but still export these regular expressions, so the 3.11 algorithm runs unchanged on any version.
_PSEUDO = re.compile(tokenize.PseudoToken, re.UNICODE) if hasattr(tokenize, "PseudoToken") else None
_ENDPATS = {k: re.compile(v, re.UNICODE) for k, v in getattr(tokenize, "endpats", {}).items() if v}
_TRIPLE = frozenset(getattr(tokenize, "triple_quoted", ()))
_SINGLE = frozenset(getattr(tokenize, "single_quoted", ()))
_TABSIZE = getattr(tokenize, "tabsize", 8)


def _lex_311(text: str) -> Lexed:
    """`tokenize.generate_tokens` of Python 3.11 reduced to what the core keeps.

    The same line loop, regular expressions and error conditions as the standard library's 3.11
    `_tokenize` (so the same tokens, ERRORTOKENs included, and the same TokenError/IndentationError),
    without building a TokenInfo per token: about twice as fast.
    """
    strings: list[str] = []
    rows: list[int] = []
    end_rows: list[int] = []
    comments: list[tuple[int, str]] = []
    append_string, append_row, append_end = strings.append, rows.append, end_rows.append
    pseudo = _PSEUDO.match
    lines = text.split("\n")
    last_index = len(lines) - 1
    lnum = parenlev = 0
    continued = needcont = False
    contstr: str | None = None
    controw = 0
    endprog: re.Pattern[str] | None = None
    indents = [0]
    line = ""
    last_line = ""
    while True:
        last_line = line
        if lnum < last_index:
            line = lines[lnum] + "\n"
        elif lnum == last_index:
            line = lines[lnum]
        else:
            line = ""
        lnum += 1
        pos, end_of_line = 0, len(line)

        if contstr is not None:  # inside a string that spans lines
            if not line:
                raise tokenize.TokenError("EOF in multi-line string", (controw, 0))
            match = endprog.match(line)  # type: ignore[union-attr]
            if match:
                pos = match.end(0)
                append_string(contstr + line[:pos])
                append_row(controw)
                append_end(lnum)
                contstr, needcont = None, False
            elif needcont and line[-2:] != "\\\n" and line[-3:] != "\\\r\n":
                append_string(contstr + line)  # an ERRORTOKEN, which the paper keeps
                append_row(controw)
                append_end(lnum)
                contstr = None
                continue
            else:
                contstr += line
                continue
        elif parenlev == 0 and not continued:  # a new statement
            if not line:
                break
            column = 0
            while pos < end_of_line:
                char = line[pos]
                if char == " ":
                    column += 1
                elif char == "\t":
                    column = (column // _TABSIZE + 1) * _TABSIZE
                elif char == "\f":
                    column = 0
                else:
                    break
                pos += 1
            if pos == end_of_line:
                break
            char = line[pos]
            if char in "#\r\n":  # a comment-only or blank line
                if char == "#":
                    comments.append((lnum, line[pos:].rstrip("\r\n")))
                continue
            if column > indents[-1]:
                indents.append(column)
            while column < indents[-1]:
                if column not in indents:
                    raise IndentationError(
                        "unindent does not match any outer indentation level", ("<tokenize>", lnum, pos, line)
                    )
                indents.pop()
        else:  # a statement continued from the previous line
            if not line:
                raise tokenize.TokenError("EOF in multi-line statement", (lnum, 0))
            continued = False

        while pos < end_of_line:
            match = pseudo(line, pos)
            if not match:  # ERRORTOKEN: one character
                append_string(line[pos])
                append_row(lnum)
                append_end(lnum)
                pos += 1
                continue
            start, end = match.span(1)
            pos = end
            if start == end:
                continue
            token, initial = line[start:end], line[start]
            if initial in "0123456789" or (initial == "." and token != "." and token != "..."):
                pass  # NUMBER
            elif initial in "\r\n":
                if parenlev > 0:
                    continue  # NL
                # NEWLINE ends the previous logical line; attach it there.
                append_string(token)
                row = end_rows[-1] if end_rows else lnum
                append_row(row)
                append_end(row)
                continue
            elif initial == "#":
                comments.append((lnum, token))
                continue
            elif token in _TRIPLE:
                endprog = _ENDPATS[token]
                match = endprog.match(line, pos)
                if not match:
                    controw, contstr = lnum, line[start:]
                    break
                pos = match.end(0)
                token = line[start:pos]
            elif initial in _SINGLE or token[:2] in _SINGLE or token[:3] in _SINGLE:
                if token[-1] == "\n":  # a string continued with a backslash
                    controw, contstr, needcont = lnum, line[start:], True
                    endprog = _ENDPATS.get(initial) or _ENDPATS.get(token[1]) or _ENDPATS.get(token[2])
                    break
            elif initial.isidentifier():
                pass  # NAME
            elif initial == "\\":
                continued = True
                continue
            elif initial in "([{":
                parenlev += 1
            elif initial in ")]}":
                parenlev -= 1
            append_string(token)
            append_row(lnum)
            append_end(lnum)

    # The implicit NEWLINE of a text that does not end with a line break.
    if last_line and last_line[-1] not in "\r\n" and not last_line.strip().startswith("#"):
        row = end_rows[-1] if end_rows else lnum - 1
        append_string("")
        append_row(row)
        append_end(row)
    return Lexed(strings, rows, end_rows, comments, True)


def _lex_stdlib(text: str) -> Lexed:
    strings: list[str] = []
    rows: list[int] = []
    end_rows: list[int] = []
    comments: list[tuple[int, str]] = []
    depth = 0  # nesting of f-/t-strings (3.12+), joined into one token
    fstart: tuple[int, int] = (0, 0)
    line_starts: list[int] | None = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = tok.type
            if depth:
                if kind in _STRING_STARTS:
                    depth += 1
                elif kind in _STRING_ENDS:
                    depth -= 1
                    if not depth:
                        if line_starts is None:
                            line_starts = _line_starts(text)
                        begin = line_starts[fstart[0] - 1] + fstart[1]
                        end = line_starts[tok.end[0] - 1] + tok.end[1]
                        strings.append(text[begin:end])
                        rows.append(fstart[0])
                        end_rows.append(tok.end[0])
                continue
            if kind in _STRING_STARTS:
                depth = 1
                fstart = tok.start
                continue
            if kind in _SKIPPED:
                if kind == tokenize.COMMENT:
                    comments.append((tok.start[0], tok.string))
                continue
            strings.append(tok.string)
            if kind == tokenize.NEWLINE:
                # NEWLINE ends the previous logical line; attach it there (it may sit after a comment).
                row = end_rows[-1] if end_rows else tok.start[0]
                rows.append(row)
                end_rows.append(row)
            else:
                rows.append(tok.start[0])
                end_rows.append(tok.end[0])
    except (tokenize.TokenError, SyntaxError, ValueError):
        return _split_fallback(text)
    return Lexed(strings, rows, end_rows, comments, True)


def _split_fallback(text: str) -> Lexed:
    strings: list[str] = []
    rows: list[int] = []
    for row, line in enumerate(text.split("\n"), start=1):
        parts = line.split()
        strings.extend(parts)
        rows.extend([row] * len(parts))
    return Lexed(strings, rows, list(rows), [], False)


def paper_tokens(text: str) -> list[str]:
    """The paper's `tokenize_code`: token strings, or `text.split()` when tokenize raises."""
    return lex(text).strings
