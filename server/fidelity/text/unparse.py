"""`ast.unparse` with a fast path for string literals that need no escaping.

The standard unparser escapes string literals one character at a time through a Python callback;
for the long docstrings of typical functions that is a sixth of the whole normalisation. When a
string has no backslash and nothing unprintable (newlines and tabs aside), every character would be
kept as is, so the escaping is skipped and the standard quote selection runs on the string itself.
Output is identical to `ast.unparse` (the tests compare them on real code); interpreters without
the private `_Unparser` class use `ast.unparse` directly.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

_Unparser = getattr(ast, "_Unparser", None)
_MULTI_QUOTES: tuple[str, ...] | None = getattr(ast, "_MULTI_QUOTES", None)
_ALL_QUOTES: tuple[str, ...] | None = getattr(ast, "_ALL_QUOTES", None)


def _plain(string: str, escape_special_whitespace: bool) -> bool:
    if "\\" in string:
        return False
    if string.isprintable():
        return True
    return not escape_special_whitespace and string.replace("\n", "").replace("\t", "").isprintable()


if _Unparser is not None and _MULTI_QUOTES is not None and hasattr(_Unparser, "_str_literal_helper"):
    multi_quotes = _MULTI_QUOTES

    class _FastUnparser(_Unparser):  # type: ignore[misc, valid-type]
        def _str_literal_helper(
            self,
            string: str,
            *,
            quote_types: Sequence[str] | None = _ALL_QUOTES,
            escape_special_whitespace: bool = False,
        ) -> tuple[str, list[str]]:
            if not _plain(string, escape_special_whitespace):
                return super()._str_literal_helper(
                    string, quote_types=quote_types, escape_special_whitespace=escape_special_whitespace
                )
            # The rest of the standard helper, with escaped_string == string.
            assert quote_types is not None  # the class exists where ast has _ALL_QUOTES
            possible_quotes = list(quote_types)
            if "\n" in string:
                possible_quotes = [q for q in possible_quotes if q in multi_quotes]
            possible_quotes = [q for q in possible_quotes if q not in string]
            if not possible_quotes:
                text = repr(string)
                quote = next((q for q in quote_types if text[0] in q), text[0])
                return text[1:-1], [quote]
            if string:
                possible_quotes.sort(key=lambda q: q[0] == string[-1])
                if possible_quotes[0][0] == string[-1]:
                    assert len(possible_quotes[0]) == 3
                    string = string[:-1] + "\\" + string[-1]
            return string, possible_quotes

    def unparse(ast_obj: ast.AST) -> str:  # ast.unparse's own signature
        return _FastUnparser().visit(ast_obj)

else:  # pragma: no cover - interpreters without the private class
    unparse = ast.unparse
