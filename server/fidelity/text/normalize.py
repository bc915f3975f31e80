"""The paper's code normalisation (`no_comments`) and function-body extraction (`body_no_comments`).

Both follow the over-editing paper's `standardize_code_formatting` and `extract_function_body`
including their fallbacks, so the derived distances are comparable with the published ones.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from server.fidelity.text import pyast


def strip_comments_fallback(code: str) -> str:
    """Comment removal for code that `ast` cannot parse: tokenize round trip, else a line scanner."""
    try:
        kept = [t for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type != tokenize.COMMENT]
        return tokenize.untokenize(kept)
    except Exception:  # noqa: BLE001 - the paper falls back on any failure
        return "\n".join(_strip_line_comment(line) for line in code.splitlines())


def _strip_line_comment(line: str) -> str:
    # The paper's character scanner, kept as is (it does not know about escapes in triple quotes).
    in_string = False
    quote: str | None = None
    i = 0
    while i < len(line):
        char = line[i]
        if not in_string and char in "\"'":
            if line[i : i + 3] in ('"""', "'''") and i + 2 < len(line):
                in_string, quote = True, line[i : i + 3]
                i += 3
                continue
            in_string, quote = True, char
        elif in_string and quote is not None and char == quote[0]:
            if len(quote) == 3:
                if i + 2 < len(line) and line[i : i + 3] == quote:
                    in_string, quote = False, None
                    i += 3
                    continue
            elif i == 0 or line[i - 1] != "\\":
                in_string, quote = False, None
        elif not in_string and char == "#":
            return line[:i].rstrip()
        i += 1
    return line


def normalize(code: str, tree: ast.Module | None = None) -> str:
    """`ast.unparse(ast.parse(code))`; comment stripping when it does not parse. Pass `tree` to reuse a parse."""
    if not code.strip():
        return code
    if tree is None:
        try:
            tree = pyast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return strip_comments_fallback(code)
    try:
        return ast.unparse(tree)
    except (ValueError, RecursionError):
        return strip_comments_fallback(code)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def first_function(tree: ast.AST) -> ast.FunctionDef | None:
    """The paper's choice: the first `FunctionDef` in `ast.walk` (breadth-first) order; async defs do not count."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            return node
    return None


def body_start_line(normalized_tree: ast.Module) -> int | None:
    """First line of the body slice in normalised code, 0 for an empty body, None when there is no function.

    As in the paper: the slice starts at the second statement when the first is a docstring, and at the
    `def` line itself otherwise; a function with only a docstring has an empty body.
    """
    func = first_function(normalized_tree)
    if func is None:
        return None
    if func.body and _is_docstring(func.body[0]):
        return func.body[1].lineno if len(func.body) > 1 else 0
    return func.lineno


_DEF_RE = re.compile(r"(def\s+[^:]+:\s*)\n")
_DOCSTRING_RES = (re.compile(r'^\s*"""[\s\S]*?"""\s*\n', re.DOTALL), re.compile(r"^\s*'''[\s\S]*?'''\s*\n", re.DOTALL))


def body_by_regex(normalized: str) -> str:
    """The paper's regex fallback for code without a parseable function."""
    match = _DEF_RE.search(normalized)
    if not match:
        return normalized
    after = normalized[match.end() :]
    for pattern in _DOCSTRING_RES:
        doc = pattern.search(after)
        if doc:
            return after[doc.end() :]
    return after


def function_body(code: str) -> str:
    """The paper's `extract_function_body` (normalises first). Used by reference checks and tooling."""
    normalized = normalize(code)
    try:
        tree = pyast.parse(normalized)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return body_by_regex(normalized)
    start = body_start_line(tree)
    if start is None:
        return body_by_regex(normalized)
    if start == 0:
        return ""
    return "\n".join(normalized.splitlines()[start - 1 :])
