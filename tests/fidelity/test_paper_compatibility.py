"""Our fast implementations against the definitions they replace, on real code.

Each fast path (the 3.11 tokenizer port, chunked analysis, the direct complexity recursion, raw line
metrics) must give exactly what the paper's pipeline or radon gives, on the shared data sets and on
the standard library's own modules.
"""

from __future__ import annotations

import ast
import glob
import os
import random
import sys

import pytest
from radon.metrics import mi_visit
from radon.raw import analyze as radon_raw
from radon.visitors import ComplexityVisitor

from server.fidelity import normalize
from server.fidelity.text.analysis import Analysis
from server.fidelity.text.chunks import MIN_SPLIT_LINES
from server.fidelity.text.complexity import paper_cognitive, paper_cognitive_reference, sonar_cognitive
from server.fidelity.text.normalize import function_body
from server.fidelity.text.rawmetrics import raw_metrics
from server.fidelity.text.tokens import _lex_stdlib, lex

# Standard-library modules of moderate size: real, varied code, several above the chunking threshold.
STDLIB = [p for p in sorted(glob.glob(f"{sys.base_prefix}/lib/python3.*/*.py")) if 4_000 < os.path.getsize(p) < 30_000][
    :40
]


@pytest.fixture(scope="module")
def corpus(overedit_tasks, canitedit_problems) -> list[str]:
    texts = [t[k] for t in overedit_tasks for k in ("canonical_solution", "corrupted_solution")]
    texts += [p[k] for p in canitedit_problems for k in ("before", "after")]
    for path in STDLIB:
        with open(path, encoding="utf-8", errors="replace") as handle:
            texts.append(handle.read())
    return texts


def _mutations(texts: list[str], seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    pieces = ['"', "'", '"""', "(", ")", "\\", "$", "?", "#", "\t", "\f", "\r", "\r\n", 'f"{', "\\\n", "`", "\n  x"]
    out = []
    for text in texts:
        i = rnd.randrange(len(text) + 1)
        out.append(text[:i])
        out.append(text[:i] + rnd.choice(pieces) + text[i:])
        out.append(text[:i] + text[i + rnd.randrange(1, 30) :])
    return out


def test_lexer_matches_the_standard_tokenizer(corpus):
    texts = corpus + _mutations(corpus[:500])
    different = [t[:60] for t in texts if lex(t) != _lex_stdlib(t)]
    assert different == []


def test_lexer_fallback_is_the_papers_split():
    text = 'def f(:\n    x = """unterminated\n'
    assert lex(text).strings == text.split()
    assert not lex(text).ok


def test_fstrings_are_one_token():
    assert lex('x = f"a{b!r:>{w}}c"\n').strings == ["x", "=", 'f"a{b!r:>{w}}c"', "\n"]


def test_chunked_analysis_equals_whole_text_analysis(corpus):
    large = [t for t in corpus if t.count("\n") >= MIN_SPLIT_LINES]
    assert len(large) >= 20  # the stdlib modules are split into chunks
    for text in corpus:
        analysis = Analysis(text)
        assert analysis.lexed.strings == lex(text).strings
        normalized = normalize(text)
        assert analysis.normalized == normalized
        assert analysis.normalized_tokens == lex(normalized).strings
        assert analysis.body_tokens == lex(function_body(text)).strings
        try:
            tree = ast.parse(text)
        except SyntaxError:
            assert analysis.paper_cognitive is None
            continue
        assert analysis.paper_cognitive == paper_cognitive_reference(ast.parse(normalized))
        assert analysis.cyclomatic[0] == ComplexityVisitor.from_ast(tree).total_complexity
        assert analysis.maintainability == pytest.approx(round(mi_visit(text, True), 2), abs=0.005)
        whole = sonar_cognitive(text)
        assert analysis.sonar == (whole if whole is None else (whole[0], whole[1]))


def test_direct_complexity_recursion_equals_the_visitor(corpus):
    for text in corpus:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        assert paper_cognitive(tree) == paper_cognitive_reference(tree)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n", 2),
        ("for x in y:\n    if x:\n        pass\n", 3),
        ("while a and b:\n    x = c or d\n", 2),
        ("try:\n    pass\nexcept A:\n    if x:\n        pass\n", 3),
        ("x = [i for i in y if i if j]\n", 3),
        ("x = a if b else c\n", 1),
        ("def f():\n    def g():\n        if x:\n            pass\n", 1),
        ("with a:\n    if b:\n        pass\n", 2),
        # match cases: each adds 1 + nesting, and the generic visit walks the case bodies again
        ("match x:\n    case 1:\n        if y:\n            pass\n", 4),
    ],
)
def test_paper_mode_rules(code, expected):
    assert paper_cognitive(ast.parse(code)) == paper_cognitive_reference(ast.parse(code)) == expected


def test_raw_metrics_equal_radon(corpus):
    for text in corpus:
        try:
            expected = radon_raw(text)
        except (SyntaxError, ValueError, IndexError):
            continue
        fast = raw_metrics(text, lex(text))
        if fast is None:
            continue
        assert tuple(fast) == (expected.sloc, expected.lloc, expected.comments, expected.multi)
