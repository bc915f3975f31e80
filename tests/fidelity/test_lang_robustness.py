"""Any text, however broken, gives every fact of the language layer without raising."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import server.fidelity.lang as L
from tools.bench.bench_lang import UNITS, make_text

SOURCES = {name: make_text(name, 40) for name in UNITS}


def _all_facts(src: L.Source) -> None:
    lexed = L.lex(src)
    assert len(lexed.strings) == len(lexed.rows) == len(lexed.kinds) == len(lexed.starts)
    L.functions(src)
    L.file_complexity(src)
    L.comments(src)
    L.imports(src)
    L.guards(src)
    L.unwraps(src)
    L.bindings(src)
    L.statements(src)
    for v in L.VARIANTS:
        L.variant_tokens(src, v)
    assert all(0 <= e.start <= e.end <= len(src.text) for e in src.errors)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lang=st.sampled_from(sorted(UNITS)), cut=st.integers(0, 10_000), length=st.integers(0, 40), junk=st.text(max_size=8)
)
def test_broken_edits_never_raise(lang: str, cut: int, length: int, junk: str) -> None:
    text = SOURCES[lang]
    cut %= len(text)
    broken = text[:cut] + junk + text[cut + length :]
    a = L.parse(text, L.by_name(lang))
    L.functions(a)
    b = L.parse(broken, L.by_name(lang), previous=a)
    _all_facts(b)
    fresh = L.parse(broken, L.by_name(lang))
    assert L.lex(b) == L.lex(fresh)  # the incremental parse agrees with a fresh one
    assert L.functions(b) == L.functions(fresh)
    L.distances(a, b)
    start = min(cut, len(broken))
    L.same_tree(a, (cut, cut + length), b, (start, start + len(junk)))


@settings(max_examples=40, deadline=None)
@given(lang=st.sampled_from(sorted(UNITS)), text=st.text(max_size=200))
def test_any_text_never_raises(lang: str, text: str) -> None:
    _all_facts(L.parse(text, L.by_name(lang)))


EDITS = ("digit", "comment line", "rename", "delete line", "duplicate line")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lang=st.sampled_from(sorted(UNITS)), at=st.integers(0, 10_000), edit=st.sampled_from(EDITS))
def test_functions_reused_from_the_previous_text_are_the_fresh_ones(lang: str, at: int, edit: str) -> None:
    """After an edit, the functions of the untouched top-level units come from the previous text
    (shifted); they must be exactly what a fresh parse finds."""
    text = SOURCES[lang]
    at %= len(text)
    line = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at) + 1 or len(text)
    if edit == "digit":
        j = text.find("0", at)
        edited = text if j < 0 else text[:j] + "7" + text[j + 1 :]
    elif edit == "comment line":
        edited = text[:line] + "// note\n" + text[line:]
    elif edit == "rename":
        j = text.find("total", at)
        edited = text if j < 0 else text[:j] + "sum" + text[j + 5 :]
    elif edit == "delete line":
        edited = text[:line] + text[end:]
    else:
        edited = text[:end] + text[line:end] + text[end:]
    a = L.parse(text, L.by_name(lang))
    L.functions(a)
    b = L.parse(edited, L.by_name(lang), previous=a)
    assert L.functions(b) == L.functions(L.parse(edited, L.by_name(lang)))
