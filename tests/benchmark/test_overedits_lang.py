"""The over-edit corpus for JavaScript, TypeScript, Java and C++ (issue 18): transforms, generator, CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import msgspec
import pytest

from benchmark.build.corruptions.choice import Chooser
from benchmark.build.overedits import corpus, lang_make, lang_sources, make
from benchmark.build.overedits.lang_sources import LangPair, inject_bug
from benchmark.build.overedits.lang_transforms import KINDS, TRANSFORMS
from benchmark.build.overedits.transforms import apply
from benchmark.studies.overedits import classify
from server.fidelity.lang import by_name, functions, parse

JS = """const fs = require('fs');

/**
 * Sums the positive items, scaled.
 */
function total(items, scale) {
  // nothing to add
  if (items.length === 0) {
    return 0;
  }
  let sum = 0;
  for (const x of items) {
    sum = sum + helper(x, 1);
  }
  const label = 'sum';
  return sum * scale + 1;
}

function helper(x, y) {
  return x > 0 ? x * y : 0;
}

console.log(total([1, -2, 3], 2));
"""
TS = (
    JS.replace("function total(items, scale)", "function total(items: number[], scale: number): number")
    .replace("function helper(x, y)", "function helper(x: number, y: number): number")
    .replace("const fs = require('fs');", "import * as fs from 'fs';")
)
JAVA = """import java.util.*;

public class Main {
    /** Sums the positive items, scaled. */
    static int total(int[] items, String name, int scale) {
        // nothing to add
        if (items.length == 0) {
            return 0;
        }
        int sum = 0;
        for (int x : items) {
            sum = sum + helper(x, 1);
        }
        return sum * scale + name.length();
    }

    static int helper(int x, int y) {
        return x > 0 ? x * y : 0;
    }

    public static void main(String[] args) {
        System.out.println(total(new int[] {1, -2, 3}, "ab", 2));
    }
}
"""
CPP = """#include <iostream>
#include <vector>
using namespace std;

/// Sums the positive items, scaled.
int total(const vector<int>& items, int scale) {
    // nothing to add
    if (items.empty()) {
        return 0;
    }
    int sum = 0;
    for (int x : items) {
        sum = sum + helper_of(x, 1);
    }
    return sum * scale + 1;
}

int helper_of(int x, int y) {
    return x > 0 ? x * y : 0;
}

int main() {
    cout << total({1, -2, 3}, 2) << endl;
}
""".replace("/// Sums", "int helper_of(int x, int y);\n\n/// Sums")
PROGRAMS = {"javascript": JS, "typescript": TS, "java": JAVA, "cpp": CPP}
ENTRY = {"javascript": "total", "typescript": "total", "java": "Main.total", "cpp": "total"}
# families with no safe form in a language (see lang_transforms' docstring)
NOT_IN = {
    "java": {"quotes", "typeof_guard"},
    "cpp": {"quotes", "typeof_guard", "null_guard", "instanceof_guard", "require_non_null"},
    "javascript": {"require_non_null"},
    "typescript": {"require_non_null"},
}


def _entry(text: str, language: str):
    src = parse(text, by_name(language))
    return src, next(f for f in functions(src) if f.qualname == ENTRY[language])


@pytest.mark.parametrize("language", sorted(PROGRAMS))
def test_every_family_changes_the_program_and_it_still_parses(language: str) -> None:
    text = PROGRAMS[language]
    src, fn = _entry(text, language)
    assert not src.errors
    applied = set()
    for family, transform in sorted(TRANSFORMS.items()):
        reps = transform(text, src, fn, Chooser(3, family))
        if family in NOT_IN[language]:
            assert reps is None, family
            continue
        assert reps, f"{family} found nothing to change in the {language} program"
        new, spans = apply(text, reps, [])
        assert new != text and not parse(new, by_name(language)).errors, (family, new)
        assert [new[s:e] for s, e in spans] == [r[2] for r in sorted(reps)]  # spans: where the new text landed
        applied.add(family)
    assert applied == set(TRANSFORMS) - NOT_IN[language]


def test_language_forms() -> None:
    def one(language: str, family: str) -> str:
        src, fn = _entry(PROGRAMS[language], language)
        return apply(PROGRAMS[language], TRANSFORMS[family](PROGRAMS[language], src, fn, Chooser(1, "x")), [])[0]

    assert "} catch (...) {\n        throw;\n" in one("cpp", "try_catch")
    assert "} catch (RuntimeException e) {" in one("java", "try_catch")
    assert "Objects.requireNonNull(" in one("java", "require_non_null")  # `import java.util.*;`: the short name
    assert "#include <" in one("cpp", "unused_import").split("using namespace")[0]
    assert "= require('" in one("javascript", "unused_import").splitlines()[1]  # after the existing require
    assert "// " in one("java", "lazy_placeholder") and "/** Sums" not in one("java", "doc_comment_removed")
    assert "// nothing to add" in one("java", "doc_comment_removed")  # the doc comment went, not the comment
    renamed = one("java", "rename_parameter")
    assert "name.length()" not in renamed and ".length()" in renamed  # the variable, never the method


def test_a_rename_skips_members_and_shorthand_properties() -> None:
    text = "class A {\n  int n;\n  int f(int n) {\n    this.n = n;\n    return n;\n  }\n}\n"
    src, fn = parse(text, by_name("java")), None
    fn = next(f for f in functions(src) if f.name == "f")
    new = apply(text, TRANSFORMS["rename_parameter"](text, src, fn, Chooser(1, "x")), [])[0]
    assert "this.n = " in new and "this.n = n;" not in new and "int n;" in new
    js = "function f(a) {\n  const b = a + 1;\n  return {b};\n}\n"
    src = parse(js, by_name("javascript"))
    assert TRANSFORMS["rename_local"](js, src, functions(src)[0], Chooser(1, "x")) is None  # `{b}` names a key


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_javascript_candidates_behave_like_the_gold() -> None:
    """Real runs: every candidate of the program prints what the gold prints."""
    bug = inject_bug(JS, "javascript", Chooser(2, "bug"))
    assert bug is not None and bug != JS
    pair = LangPair(
        task_id="made/total",
        language="javascript",
        original=bug,
        gold=JS,
        tests="{}",
        test_kind="none",
        instruction=lang_sources.FIX_ASK,
    )
    cands = lang_make.candidates_for(pair, "made", 5, 24)
    assert {ch.family for c in cands for ch in c.changes} >= set(TRANSFORMS) - NOT_IN["javascript"]

    def run(code: str) -> str:
        return subprocess.run(["node", "-e", code], capture_output=True, text=True, timeout=30, check=True).stdout

    expected = run(JS)
    assert run(bug) != expected  # the injected bug is a bug
    for c in cands:
        assert run(c.candidate) == expected, (c.id, [ch.family for ch in c.changes])


def test_generation_is_seeded_and_records_spans() -> None:
    pairs = [
        LangPair(
            task_id=f"made/{lang}",
            language=lang,
            original=inject_bug(text, lang, Chooser(4, lang)) or "",
            gold=text,
            tests="{}",
            test_kind="none",
            instruction="Fix it.",
        )
        for lang, text in PROGRAMS.items()
    ]
    first = [c for p in pairs for c in lang_make.candidates_for(p, "made", 11, 6)]
    again = [c for p in pairs for c in lang_make.candidates_for(p, "made", 11, 6)]
    other = [c for p in pairs for c in lang_make.candidates_for(p, "made", 12, 6)]
    assert msgspec.json.encode(first) == msgspec.json.encode(again)
    assert msgspec.json.encode(first) != msgspec.json.encode(other)
    assert {c.language for c in first} == set(PROGRAMS)
    for c in first:
        # the fix is the one token the bug changed, where the gold has it (none where it deletes: `>=` -> `>`)
        ((s, e),) = c.fix_spans
        assert c.candidate[s:e] in c.gold and e - s <= 2
        for ch in c.changes:
            assert list(ch.kinds) == list(KINDS[ch.family])
            if ch.family == "unused_import":
                ((s, e),) = ch.spans
                assert c.candidate[s:e].strip().startswith(("import", "#include", "const"))
        # undoing every change gives the gold back (the spans of a pure insertion cover exactly it)
        insertions = [ch for ch in c.changes if ch.family in ("unused_import", "outside_target", "lazy_placeholder")]
        if len(insertions) == len(c.changes):
            text = c.candidate
            for s, e in sorted((sp for ch in insertions for sp in ch.spans), reverse=True):
                text = text[:s] + text[e:]
            assert text == c.gold


def _data() -> Path | None:
    root = os.environ.get("EDIT_FIDELITY_DATA")
    return Path(root) if root and (Path(root) / "canaicode").is_dir() else None


@pytest.mark.skipif(_data() is None, reason="EDIT_FIDELITY_DATA with the can-ai-code data is not set")
def test_make_and_classify_per_language(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "corpus.jsonl"
    assert make.main(["--from", "canaicode-js,canaicode-ts", "--limit", "4", "--per-task", "3", "--out", str(out)]) == 0
    cands = corpus.load_corpus(out)
    assert cands and {c.language for c in cands} == {"javascript", "typescript"}
    assert all(json.loads(c.tests)["question"] for c in cands)
    capsys.readouterr()
    assert classify.main([str(out)]) == 0
    printed = capsys.readouterr().out
    rows = [ln.split() for ln in printed.splitlines() if ln.startswith(("javascript ", "typescript "))]
    assert {r[0] for r in rows} == {"javascript", "typescript"} and any(r[1] == "rename" for r in rows)
    # an older corpus without the field still loads, as Python
    old = tmp_path / "old.jsonl"
    raw = msgspec.json.decode(out.read_bytes().splitlines()[0])
    raw.pop("language")
    old.write_bytes(msgspec.json.encode(raw) + b"\n")
    assert corpus.load_corpus(old)[0].language == "python"


def test_an_unknown_source_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        make.main(["--from", "canaicode-js", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "c.jsonl")]) == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("error: cannot load 'canaicode-js'") and err.count("\n") == 1
    assert make.main(["--from", "canaicode-js,bogus", "--out", str(tmp_path / "c.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown source 'bogus'") and err.count("\n") == 1
