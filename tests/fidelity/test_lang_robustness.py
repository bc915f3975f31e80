"""Any text, however broken, gives every fact of the language layer without raising."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import server.fidelity.lang as L
from benchmark.bench_lang import UNITS, make_text

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
@given(lang=st.sampled_from(sorted(UNITS)), cut=st.integers(0, 10_000), length=st.integers(0, 40),
       junk=st.text(max_size=8))
def test_broken_edits_never_raise(lang: str, cut: int, length: int, junk: str) -> None:
    text = SOURCES[lang]
    cut %= len(text)
    broken = text[:cut] + junk + text[cut + length:]
    a = L.parse(text, L.by_name(lang))
    b = L.parse(broken, L.by_name(lang), previous=a)
    _all_facts(b)
    fresh = L.parse(broken, L.by_name(lang))
    assert L.lex(b) == L.lex(fresh)  # the incremental parse agrees with a fresh one
    L.distances(a, b)
    start = min(cut, len(broken))
    L.same_tree(a, (cut, cut + length), b, (start, start + len(junk)))


@settings(max_examples=40, deadline=None)
@given(lang=st.sampled_from(sorted(UNITS)), text=st.text(max_size=200))
def test_any_text_never_raises(lang: str, text: str) -> None:
    _all_facts(L.parse(text, L.by_name(lang)))
