"""The language layer's detection, tokens, parse errors and distance variants, for every language."""

from __future__ import annotations

import pytest

import server.fidelity.lang as L
from server.fidelity.lang.lex import clear_cache
from server.fidelity.text.tokens import Lexed


@pytest.mark.parametrize(
    "language_id, path, expected",
    [
        ("javascript", None, "javascript"),
        ("javascriptreact", None, "javascript"),
        ("typescript", None, "typescript"),
        ("typescriptreact", None, "tsx"),
        ("java", None, "java"),
        ("c", None, "c"),
        ("cpp", None, "cpp"),
        ("c++", None, "cpp"),
        ("go", None, "go"),
        ("rust", None, "rust"),
        (None, "src/a.mjs", "javascript"),
        (None, "x/B.java", "java"),
        (None, "k.tsx", "tsx"),
        (None, "m.ts", "typescript"),
        (None, "lib.rs", "rust"),
        (None, "main.go", "go"),
        (None, "a.hpp", "cpp"),
        (None, "a.h", "c"),
        (None, "A.CPP", "cpp"),
        # the languageId wins over the extension
        ("typescript", "a.js", "typescript"),
    ],
)
def test_detect_supported(language_id: str | None, path: str | None, expected: str) -> None:
    found = L.detect(language_id, path)
    assert isinstance(found, L.Lang) and found.name == expected


@pytest.mark.parametrize("language_id, path", [("python", None), ("python3", None), (None, "a.py"), (None, "t.pyi")])
def test_detect_python_keeps_its_own_path(language_id: str | None, path: str | None) -> None:
    assert L.detect(language_id, path) == L.PYTHON


@pytest.mark.parametrize(
    "language_id, path",
    [
        ("haskell", None),
        ("haskell", "a.js"),
        (None, "a.hs"),
        (None, "Makefile"),
        (None, ".js"),
        (None, None),
        ("plaintext", "notes.txt"),
    ],
)
def test_detect_unknown_is_unsupported_never_python(language_id: str | None, path: str | None) -> None:
    assert L.detect(language_id, path) is None


def test_every_language_loads_and_every_named_node_type_exists() -> None:
    """A row naming a node type its grammar does not have would silently never match."""
    from server.fidelity.lang.parse import language

    fields = (
        "comments",
        "atomic",
        "functions",
        "lambdas",
        "classes",
        "imports",
        "ifs",
        "loops",
        "switches",
        "cases",
        "catches",
        "ternaries",
        "jumps",
        "gotos",
        "tries",
        "declarators",
        "else_clauses",
        "preproc_ifs",
        "parens",
        "strings",
        "identifiers",
    )
    for lang in L.LANGUAGES:
        lg = language(lang)
        for f in fields:
            for kind in getattr(lang, f):
                assert lg.id_for_node_kind(kind, True) or lg.id_for_node_kind(kind, False), (lang.name, f, kind)


SAMPLES = {
    "javascript": (
        "const s = `a ${b} c`; // note\nlet r = /x+/g; /* multi\nline */ f('q');\n",
        ["const", "s", "=", "`a ${b} c`", ";", "let", "r", "=", "/x+/g", ";", "f", "(", "'q'", ")", ";"],
        ["// note", "/* multi\nline */"],
    ),
    "typescript": ("let x: string = 'a'; // c\n", ["let", "x", ":", "string", "=", "'a'", ";"], ["// c"]),
    "tsx": (
        'const a = <div className="k">{x}</div>;\n',
        ["const", "a", "=", "<", "div", "className", "=", '"k"', ">", "{", "x", "}", "</", "div", ">", ";"],
        [],
    ),
    "java": (
        "/** Doc. */\nclass A { String s = \"x y\"; char c = 'z'; }\n",
        ["class", "A", "{", "String", "s", "=", '"x y"', ";", "char", "c", "=", "'z'", ";", "}"],
        ["/** Doc. */"],
    ),
    "c": (
        '#include <stdio.h>\n// c\nint main(void) { return puts("hi"); }\n',
        ["#include", "<stdio.h>", "int", "main", "(", "void", ")", "{", "return", "puts", "(", '"hi"', ")", ";", "}"],
        ["// c"],
    ),
    "cpp": ('auto s = R"(a "raw" b)"; /* x */\n', ["auto", "s", "=", 'R"(a "raw" b)"', ";"], ["/* x */"]),
    "go": (
        "package m\n\n// Doc\nvar s = `raw\nstring`\n",
        ["package", "m", "var", "s", "=", "`raw\nstring`"],
        ["// Doc"],
    ),
    "rust": (
        "/// Doc\nfn f<'a>(s: &'a str) -> char { /* a /* nested */ b */ 'c' }\n",
        ["fn", "f", "<", "'a", ">", "(", "s", ":", "&", "'a", "str", ")", "->", "char", "{", "'c'", "}"],
        ["/// Doc", "/* a /* nested */ b */"],
    ),
}


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_tokens_are_leaves_with_comments_aside_and_literals_whole(lang: str) -> None:
    text, tokens, comments = SAMPLES[lang]
    lexed = L.lex(L.parse(text, L.by_name(lang)))
    assert lexed.strings == tokens
    assert [c for _, c in lexed.comments] == comments
    # every interval points at its own text
    for s, start, end in zip(lexed.strings, lexed.starts, lexed.ends):
        assert text[start:end] == s
    for (_, c), (start, end) in zip(lexed.comments, lexed.comment_spans):
        assert text[start:end] == c
    # rows agree with the text (1-based, `\n` only)
    for s, start, row, end_row in zip(lexed.strings, lexed.starts, lexed.rows, lexed.end_rows):
        assert row == text.count("\n", 0, start) + 1
        assert end_row == row + s.count("\n")


def test_lexed_mirrors_the_python_lexed_shape() -> None:
    lexed = L.lex(L.parse("int x = 1; // c\n", L.by_name("c")))
    plain = lexed.as_lexed()
    assert isinstance(plain, Lexed)
    assert plain == Lexed(["int", "x", "=", "1", ";"], [1] * 5, [1] * 5, [(1, "// c")], True)
    assert lexed.kinds == ["primitive_type", "identifier", "=", "number_literal", ";"]


def test_non_ascii_offsets_are_characters() -> None:
    text = 'const é = "ü"; // ß\nlet 名 = é;\n'
    lexed = L.lex(L.parse(text, L.by_name("javascript")))
    for s, start, end in zip(lexed.strings, lexed.starts, lexed.ends):
        assert text[start:end] == s
    assert lexed.rows[-1] == 2
    assert text[slice(*lexed.comment_spans[0])] == "// ß"


def test_tokens_are_the_same_from_the_unit_cache_and_after_an_incremental_parse() -> None:
    members = "\n".join(f"  int f{i}(int a) {{ return a + {i}; }} // m{i}" for i in range(200))
    text = f"class A {{\n{members}\n}}\n"
    lang = L.by_name("java")
    clear_cache()
    cold = L.lex(L.parse(text, lang))
    warm = L.lex(L.parse(text, lang))
    assert cold == warm
    edited = text.replace("return a + 100;", "return a - 100;")
    first = L.parse(text, lang)
    incremental = L.parse(edited, lang, previous=first)
    fresh = L.parse(edited, lang)
    assert str(incremental.tree.root_node) == str(fresh.tree.root_node)
    assert L.lex(incremental) == L.lex(fresh)
    clear_cache()
    assert L.lex(L.parse(edited, lang)) == L.lex(fresh)


@pytest.mark.parametrize(
    "lang, text",
    [
        ("javascript", "function f(a) {\n  if (a {\n    return 1;\n  }\n}\nfunction g() { return 2; }\n"),
        ("java", "class A {\n  int f() { return 1 }\n  int g() { return 2; }\n}\n"),
        ("go", "package m\nfunc f() {\n\tx := \n}\nfunc g() int { return 1 }\n"),
        ("rust", "fn f() {\n    let x = ;\n}\nfn g() -> i32 { 1 }\n"),
        ("cpp", "int f() {\n  return (1 + ;\n}\nint g() { return 2; }\n"),
    ],
)
def test_parse_errors_are_reported_as_regions_not_failures(lang: str, text: str) -> None:
    src = L.parse(text, L.by_name(lang))
    assert src.has_error and src.errors
    for err in src.errors:
        assert 1 <= err.start_line <= err.end_line <= 3, err  # the damage is in the first function
        assert 0 <= err.start <= err.end <= len(text)
    # the rest still tokenises and the healthy function is still found
    assert L.lex(src).strings
    fns = {f.name: f for f in L.functions(src)}
    assert "g" in fns and not fns["g"].broken
    assert all(f.broken for f in fns.values() if f.start <= src.errors[0].start_line <= f.end)


def test_distance_variants() -> None:
    lang = L.by_name("java")
    a = L.parse("/** Doc. */\nclass A {\n  int f(int x) { // one\n    return x + 1;\n  }\n}\n", lang)
    b = L.parse("class A {\n  int f(int x) {\n      return x + 2;\n  }\n}\n", lang)
    d = L.distances(a, b)
    no_comment_tokens = L.lex(a).strings
    assert d["no_comments"] == (1, 1 / len(no_comment_tokens))
    assert d["raw"] == (3, 3 / (len(no_comment_tokens) + 2))  # two comments deleted, one token changed
    body = L.variant_tokens(a, "body_no_comments")
    assert body == ["return", "x", "+", "1", ";", "}", "}"]
    assert d["body_no_comments"] == (1, 1 / len(body))
    # layout alone is no distance in any variant
    c = L.parse("/** Doc. */ class A { int f(int x) { // one\n return x + 1; } }", lang)
    assert all(v == (0, 0.0) for v in L.distances(a, c).values())
    with pytest.raises(ValueError, match="unknown distance variant"):
        L.variant_tokens(a, "nope")


def test_body_variant_is_the_whole_text_without_a_function_and_empty_texts_are_zero() -> None:
    lang = L.by_name("javascript")
    a = L.parse("const x = 1;\n", lang)
    assert L.variant_tokens(a, "body_no_comments") == L.lex(a).strings
    empty = L.parse("", lang)
    assert L.distance(empty, empty) == (0, 0.0)
    assert L.distance(empty, a) == (5, 1.0)


def test_body_variant_takes_the_shallowest_function() -> None:
    code = "class K { m() { return 1; } }\nfunction top() { return 2; }\n"
    src = L.parse(code, L.by_name("javascript"))
    assert L.first_function(src).name == "top"
    assert L.variant_tokens(src, "body_no_comments") == ["return", "2", ";", "}"]


def test_parsing_in_threads_gives_the_same_results() -> None:
    """Parsers and query cursors are per thread: concurrent measurements do not interfere."""
    from concurrent.futures import ThreadPoolExecutor

    lang = L.by_name("typescript")
    texts = [
        f"function f{i}(a: number): number {{\n  if (a > {i}) {{ return a; }}\n  return {i};\n}}\n" * 50
        for i in range(8)
    ]
    expected = [(L.lex(L.parse(t, lang)).strings, [f.cognitive for f in L.functions(L.parse(t, lang))]) for t in texts]
    L.clear_caches()

    def run(t: str) -> tuple[list[str], list[int]]:
        src = L.parse(t, lang)
        L.guards(src)
        return L.lex(src).strings, [f.cognitive for f in L.functions(src)]

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(run, texts * 3)) == expected * 3


@pytest.mark.parametrize(
    "lang, text, bad",
    [
        ("cpp", "int main() { @ return 0; }\n", "@"),
        ("java", "class A { int f() { return 1 ¤ } }\n", "¤"),
        ("go", "package m\nvar x = 1 $ 2\n", "$"),
    ],
)
def test_a_character_no_grammar_rule_accepts_is_an_error_token(lang: str, text: str, bad: str) -> None:
    src = L.parse(text, L.by_name(lang))
    lexed = L.lex(src)
    assert (bad, "ERROR") in list(zip(lexed.strings, lexed.kinds))
    assert any(e.start <= text.index(bad) < max(e.end, e.start + 1) for e in src.errors)
