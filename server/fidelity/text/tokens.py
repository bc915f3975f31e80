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
import threading
import tokenize
from collections import deque
from typing import NamedTuple

from rapidfuzz.distance import Indel

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
    unit mapping (NEWLINE is attached to the line it ends, not the next one). `comments` lists
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


class _Lexing(NamedTuple):
    """A recent successful tokenisation, kept to reuse on a text that shares lines with it."""

    lines: list[str]
    lexed: Lexed
    # per 0-based line index where a statement starts (no open bracket, string or backslash):
    # (tokens before it, comments before it, the indentation stack there)
    checkpoints: dict[int, tuple[int, int, tuple[int, ...]]]


# An edit is tokenised right after its original (and the normalised edit after the normalised
# original): the lines both share are not tokenised again. Tokenising goes line by line from a state
# (brackets, strings, indentation), so from a statement start inside a run of shared lines, reached in
# the state the recent text had there, its tokens up to its last statement start in the run are the
# same, rows moved.
_RECENT = 4
_MIN_SHARED_LINES = 8
_recent: deque[_Lexing] = deque(maxlen=_RECENT)
_recent_lock = threading.Lock()


def _shared_runs(lines: list[str]) -> tuple[_Lexing, list[int], list[int]] | None:
    """A recent tokenisation sharing many lines with these, and per line the recent text's line it
    equals (-1 if none) and the end of that run of equal lines in the recent text."""
    with _recent_lock:
        recent = list(_recent)
    for entry in reversed(recent):
        other = entry.lines
        if other[0] != lines[0] and other[-1] != lines[-1]:
            continue
        blocks = [op for op in Indel.opcodes(other, lines) if op.tag == "equal"]
        if 4 * sum(op.src_end - op.src_start for op in blocks) < max(len(lines), 4 * _MIN_SHARED_LINES):
            continue
        same = [-1] * len(lines)
        run_end = [-1] * len(lines)
        last_old, last_new = len(other), len(lines)
        for op in blocks:
            src_end, dest_end = op.src_end, op.dest_end
            if (src_end == last_old) != (dest_end == last_new):  # a last line lacks the other's line break
                src_end, dest_end = src_end - 1, dest_end - 1
            for k in range(dest_end - op.dest_start):
                same[op.dest_start + k] = op.src_start + k
                run_end[op.dest_start + k] = src_end
        return entry, same, run_end
    return None


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
    assert _PSEUDO is not None  # `lex` calls this only where the pattern exists
    pseudo = _PSEUDO.match
    lines = text.split("\n")
    last_index = len(lines) - 1
    lnum = parenlev = 0
    continued = needcont = False
    contstr: str | None = None
    controw = 0
    endprog: re.Pattern[str] | None = None
    indents = [0]
    indent_key: tuple[int, ...] = (0,)
    line = ""
    last_line = ""
    checkpoints: dict[int, tuple[int, int, tuple[int, ...]]] = {}
    found = _shared_runs(lines) if len(lines) >= _MIN_SHARED_LINES else None
    same: list[int] = found[1] if found is not None else []
    while True:
        last_line = line
        if contstr is None and parenlev == 0 and not continued:
            checkpoints[lnum] = (len(strings), len(comments), indent_key)
            if lnum <= last_index and same and same[lnum] >= 0:
                skipped = _copy_run(found, lnum, indent_key, strings, rows, end_rows, comments, checkpoints)  # type: ignore[arg-type]
                if skipped:
                    lnum += skipped
                    indent_key = checkpoints[lnum][2]
                    indents = list(indent_key)
                    line = lines[lnum - 1] + ("\n" if lnum - 1 < last_index else "")
                    continue
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
                indent_key = tuple(indents)
            while column < indents[-1]:
                if column not in indents:
                    raise IndentationError(
                        "unindent does not match any outer indentation level", ("<tokenize>", lnum, pos, line)
                    )
                indents.pop()
                indent_key = tuple(indents)
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
            if initial.isidentifier() and token[-1] not in "'\"\n":
                pass  # NAME: a prefixed string ends with its quote (or the line break it continues over)
            elif initial in "0123456789" or (initial == "." and token != "." and token != "..."):
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
    return _remember(lines, Lexed(strings, rows, end_rows, comments, True), checkpoints)


def _remember(lines: list[str], lexed: Lexed, checkpoints: dict[int, tuple[int, int, tuple[int, ...]]]) -> Lexed:
    with _recent_lock:
        _recent.append(_Lexing(lines, lexed, checkpoints))
    return lexed


def _copy_run(
    found: tuple[_Lexing, list[int], list[int]],
    lnum: int,
    indent_key: tuple[int, ...],
    strings: list[str],
    rows: list[int],
    end_rows: list[int],
    comments: list[tuple[int, str]],
    checkpoints: dict[int, tuple[int, int, tuple[int, ...]]],
) -> int:
    """Append the recent tokenisation's tokens of the shared lines from line `lnum` (0-based) to its
    last statement start in their run; how many lines that covers (0: none usable)."""
    entry, same, run_end = found
    old_line = same[lnum]
    here = entry.checkpoints.get(old_line)
    if here is None or here[2] != indent_key:
        return 0
    marks = entry.checkpoints
    stop = next((k for k in range(run_end[lnum], old_line, -1) if k in marks), None)
    if stop is None:
        return 0
    old = entry.lexed
    n0, c0, _ = here
    n1, c1, _ = marks[stop]
    if n1 > n0 and old.rows[n0] <= old_line:  # a NEWLINE first: its row is the token's before it
        return 0
    shift = lnum - old_line
    strings.extend(old.strings[n0:n1])
    if shift:
        rows.extend([r + shift for r in old.rows[n0:n1]])
        end_rows.extend([r + shift for r in old.end_rows[n0:n1]])
        comments.extend([(r + shift, c) for r, c in old.comments[c0:c1]])
    else:
        rows.extend(old.rows[n0:n1])
        end_rows.extend(old.end_rows[n0:n1])
        comments.extend(old.comments[c0:c1])
    dn, dc = len(strings) - n1, len(comments) - c1
    for k in range(old_line + 1, stop + 1):
        mark = marks.get(k)
        if mark is not None:
            checkpoints[k + shift] = (mark[0] + dn, mark[1] + dc, mark[2])
    return stop - old_line


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
