"""The language layer: tokens, distances, functions, complexity and syntax facts for languages other
than Python, from tree-sitter grammars. Pure: no I/O beyond importing the grammar wheels, no LSP types.

Grammars: the per-language wheels (`tree-sitter-javascript`, `-typescript`, `-java`, `-c`, `-cpp`,
`-go`, `-rust`) with `tree-sitter` 0.26, not `tree-sitter-language-pack`. Checked on PyPI here:
- the language pack 1.x (1.25.0) is a 2.4 MB wheel with its own native `Node`/`Tree` types (not
  py-tree-sitter's) and no grammars inside: its `DownloadManager` fetches each parser at first use
  from the network, which these machines (and an editor offline) do not have;
- the per-language wheels are the grammars' own releases from the tree-sitter organisation, abi3
  wheels of 66-345 KB (about 1.2 MB for all seven), each exposing `language()` for
  `tree_sitter.Language`, and all load in tree-sitter 0.26 (ABI 14 and 15). Their node types are
  the grammars' documented `node-types.json`, which `table.py` names.

Python stays on the paper-compatible path (`server.fidelity.text.tokens`); `detect` tells the two apart
and reports an unknown language as unsupported (None), never as Python.
"""

from server.fidelity.lang.analysis import LangAnalysis, analyze_lang
from server.fidelity.lang.complexity import cognitive, cyclomatic
from server.fidelity.lang.distance import VARIANTS, distance, distances, raw_tokens, token_distance, variant_tokens
from server.fidelity.lang.facts import (
    Binding,
    Comment,
    Guard,
    Import,
    bindings,
    comments,
    guards,
    imports,
    is_placeholder,
    unwraps,
)
from server.fidelity.lang.functions import LangFunction, clear_metrics, file_complexity, first_function, functions
from server.fidelity.lang.lex import LangLexed, clear_cache, lex
from server.fidelity.lang.parse import ErrorRegion, Source, parse
from server.fidelity.lang.same import Statement, canonical, same_text_tree, same_tree, statements, statements_at
from server.fidelity.lang.table import LANGUAGES, PYTHON, Lang, by_name, detect


def clear_caches() -> None:
    """Drop the per-unit token cache and the per-function complexity cache."""
    clear_cache()
    clear_metrics()


__all__ = [
    "LANGUAGES",
    "PYTHON",
    "VARIANTS",
    "Binding",
    "Comment",
    "ErrorRegion",
    "Guard",
    "Import",
    "Lang",
    "LangAnalysis",
    "LangFunction",
    "LangLexed",
    "analyze_lang",
    "Source",
    "Statement",
    "bindings",
    "by_name",
    "canonical",
    "clear_caches",
    "cognitive",
    "comments",
    "cyclomatic",
    "detect",
    "distance",
    "distances",
    "file_complexity",
    "first_function",
    "functions",
    "guards",
    "imports",
    "is_placeholder",
    "lex",
    "parse",
    "raw_tokens",
    "same_text_tree",
    "same_tree",
    "statements",
    "statements_at",
    "token_distance",
    "unwraps",
    "variant_tokens",
]
