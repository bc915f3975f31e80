"""BICS haystack generator on the real snippet table: our seven inserters, the paper's builder, its labels,
token counts and lengths, checked against the text, the interpreter and whole-text token counts."""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

import pytest

from benchmark.suites.bics import BUG_TYPES, haystack, snippets, verify
from benchmark.suites.bics.inserters import Bugged, insert_bug, places, syntax_error_line
from benchmark.suites.bics.suite import GridSpecError, Haystacks, make, parse_grid

DATA = Path(os.environ.get("EDIT_FIDELITY_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")
pytestmark = pytest.mark.skipif(not (DATA / "bics" / snippets.CSV_NAME).exists(), reason=f"no BICS data at {DATA}")


@pytest.fixture(scope="module")
def table() -> snippets.SnippetTable:
    return snippets.load(DATA)


# what each bug does to its line: (characters removed, characters added)
def _line_change(before: str, after: str) -> tuple[str, str]:
    i = 0
    while i < min(len(before), len(after)) and before[i] == after[i]:
        i += 1
    j = 0
    while j < min(len(before), len(after)) - i and before[-1 - j] == after[-1 - j]:
        j += 1
    return before[i : len(before) - j], after[i : len(after) - j]


def _shape_ok(bug_type: str, removed: str, added: str) -> bool:
    if bug_type == "missing_colon":
        return (removed, added) == (":", "")
    if bug_type == "missing_parenthesis":
        return (removed, added) == (")", "")
    if bug_type == "missing_quotation":
        return removed in ("'", '"') and added == ""
    if bug_type == "missing_comma":
        return (removed, added) == (",", "")
    if bug_type == "mismatched_quotation":
        return {removed, added} == {"'", '"'}
    if bug_type == "mismatched_bracket":
        return removed in ")]}" and added in ")]}" and removed != added
    import keyword

    # an identifier replaced by a keyword (the common prefix/suffix may eat part of either name)
    return keyword.iskeyword(added) or any(keyword.iskeyword(k) and added in k for k in keyword.kwlist)


@pytest.mark.parametrize("bug_type", BUG_TYPES)
def test_inserter_edits_one_line_and_the_interpreter_points_at_it(table, bug_type):
    rng = random.Random(f"inserter:{bug_type}")
    pool = [s for s in rng.sample(table.snippets, 150) if places(s.code, bug_type)][:60]
    inserted = 0
    for s in pool:
        bugged = insert_bug(s.code, bug_type, rng)
        if bugged is None:
            continue
        inserted += 1
        assert syntax_error_line(bugged.code) == bugged.line
        old, new = s.code.split("\n"), bugged.code.split("\n")
        changed = [i + 1 for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
        assert changed == [bugged.line]
        removed, added = _line_change(old[bugged.line - 1], new[bugged.line - 1])
        assert _shape_ok(bug_type, removed, added), (bug_type, old[bugged.line - 1], new[bugged.line - 1])
    assert inserted >= 0.75 * len(pool) and len(pool) >= 20  # most snippets with a place for the bug take it


def test_inserters_on_new_code():
    rng = random.Random(1)
    code = 'def greet(name, times):\n    return ["hi " + name] * times\n'
    assert insert_bug(code, "missing_colon", rng) == Bugged(
        code=code.replace(":", "", 1), line=1, bug_type="missing_colon"
    )
    b = insert_bug("x = [1, 2, 3]\n", "missing_comma", rng)
    assert b.line == 1 and b.code in ("x = [1 2, 3]\n", "x = [1, 2 3]\n")
    # no place the interpreter would reject: no bug rather than a wrong label
    assert insert_bug("x = 1\n", "missing_quotation", rng) is None
    assert insert_bug('words = ["a", "b"]\n', "missing_comma", rng) is None  # "a" "b" is valid Python
    with pytest.raises(ValueError, match="unknown bug type"):
        insert_bug(code, "missing_semicolon", rng)


def test_interpreter_line_equals_label_per_bug_type(table):
    """Acceptance: for every type, >= 96% of generated haystacks that raise a SyntaxError raise it at the label
    (our inserters: each insertion is verified, and the haystack around it must not move the error)."""
    raised, agree = Counter(), Counter()
    for bug_type in BUG_TYPES:
        for trial in range(16):
            h = haystack.build(
                table,
                length=(300, 700, 1500)[trial % 3],
                depth=(0.0, 0.3, 0.6, 1.0)[trial % 4],
                trial=trial,
                seed=11,
                source="inserted",
                bug_type=bug_type,
            )
            line = syntax_error_line(h.code)
            if line is not None:
                raised[bug_type] += 1
                agree[bug_type] += line == h.label_line
    for bug_type in BUG_TYPES:
        assert raised[bug_type] == 16  # every inserted bug is a syntax error
        assert agree[bug_type] / raised[bug_type] >= 0.96, (bug_type, agree[bug_type], raised[bug_type])


def test_the_papers_prebugged_labels_mostly_agree_with_the_interpreter(table):
    """The `dataset` source uses the paper's own labels; on the whole table, >= 96% per type where the bug
    raises a SyntaxError (the full-grid haystack figures: `python -m benchmark.suites.bics check`)."""
    for bug_type in BUG_TYPES:
        entries = [s.bugged[bug_type] for s in table.with_bug(bug_type)]
        lines = [(syntax_error_line(e.code), e.line) for e in entries]
        raising = [(got, label) for got, label in lines if got is not None]
        assert len(raising) >= 0.95 * len(entries) > 1000
        assert sum(got == label for got, label in raising) >= 0.96 * len(raising), bug_type


def test_label_formula_on_1000_seeded_haystacks(table):
    """The paper's label formula against the text itself: the one line that differs from the haystack with
    the clean snippet put back, on 1,000 haystacks of mixed sizes, depths and both bug sources."""
    rng = random.Random(2024)
    wrong = []
    for i in range(1000):
        source = haystack.SOURCES[i % 2]
        h = haystack.build(
            table,
            length=rng.choice((60, 150, 400, 900, 2000)),
            depth=rng.choice((0, 0.1, 0.5, 0.9, 1)),
            trial=i,
            seed=3,
            source=source,
        )
        if verify.label_by_text(table, h) != h.label_line:
            wrong.append((i, source, h.label_line, verify.label_by_text(table, h)))
        # the numbered text shows the bug line at the label, numbered as the paper numbers it
        width = len(str(len(h.code.split("\n"))))
        assert (
            h.numbered.split("\n")[h.label_line - 1]
            == f"{h.label_line:<{width}}| {h.bug_snippet.split(chr(10))[h.bug_line_in_snippet - 1]}"
        )
    assert not wrong, wrong[:5]


def test_token_counts_exact_and_lengths_within_one_snippet(table):
    cells = [(L, D) for L in (500, 1000, 2000) for D in (0.0, 0.25, 0.5, 0.75, 1.0)] + [(8000, 1.0), (15500, 0.5)]
    for source in haystack.SOURCES:
        for trial, (length, depth) in enumerate(cells):
            h = haystack.build(table, length=length, depth=depth, trial=trial, source=source)
            c = verify.check(table, h)
            assert c.tokens_exact and c.within_one_snippet, (source, length, depth, h.tokens, h.next_tokens)
            assert c.label_by_text == h.label_line


def test_deterministic_with_a_seed_in_any_order(table):
    cells = [(500, 0.5, 0), (1000, 0.25, 3), (2000, 1.0, 7)]
    first = [haystack.build(table, length=L, depth=D, trial=t, seed=5, source="inserted") for L, D, t in cells]
    again = [
        haystack.build(table, length=L, depth=D, trial=t, seed=5, source="inserted") for L, D, t in reversed(cells)
    ]
    assert first == list(reversed(again))
    other = haystack.build(table, length=500, depth=0.5, trial=0, seed=6, source="inserted")
    assert other.code != first[0].code
    # the paper's depths: the bug snippet sits at the start for depth 0, near the end for depth 1
    h0 = haystack.build(table, length=2000, depth=0.0, trial=1)
    h1 = haystack.build(table, length=2000, depth=1.0, trial=1)
    assert h0.bug_index == 0 and h0.label_line == h0.bug_line_in_snippet
    assert h1.bug_index >= len(h1.snippet_rows) - 2


def test_grid_defaults_and_specs(table, monkeypatch):
    g = haystack.Grid()
    assert (g.lengths, g.depths, g.trials) == ((500, 1000, 2000, 4000, 8000, 15500), (0.0, 0.25, 0.5, 0.75, 1.0), 25)
    spec = parse_grid("lengths=300,600; depths=0,1; trials=2; seed=9; bug_types=missing_colon")
    assert (spec.lengths, spec.depths, spec.trials, spec.seed, spec.bug_types) == (
        (300, 600),
        (0.0, 1.0),
        2,
        9,
        ("missing_colon",),
    )
    for bad, message in (
        ("lengths=a", "invalid literal"),
        ("depths=1.5", "depths must lie in"),
        ("trials=0", ">= 1"),
        ("colour=red", "unknown key"),
        ("bug_types=typo", "unknown bug types"),
        ("seed", "KEY=VALUE"),
    ):
        with pytest.raises(GridSpecError, match=message):
            parse_grid(bad)
    tasks = Haystacks(haystack.Grid()).load(DATA, 30)  # trial first: one pass over the 6 x 5 grid
    assert sorted((t.length, t.depth) for t in tasks) == sorted((L, D) for L in g.lengths for D in g.depths)
    suite = make({"lengths": "300", "depths": "0.5", "trials": "3", "seed": "4"})  # --suite-option KEY=VALUE
    tasks = suite.dataset.load(DATA, None)
    assert [t.task_id for t in tasks] == ["s4-300-0.5-0", "s4-300-0.5-1", "s4-300-0.5-2"]
    assert all(t.haystack("dataset").bug_type in BUG_TYPES for t in tasks)


def test_bad_rows_are_reported_one_by_one_and_the_rest_loads():
    good = {
        "output": "def f(x):\n    return x",
        "output_missing_colon": "def f(x)\n    return x",
        "bug_line_number_missing_colon": "1",
    }
    rows = [
        good,
        {"output": "print 'python 2'"},
        {"output": "a = 1\r\nb = 2"},
        {"output": "from __future__ import annotations\nx = 1"},
        {"output": "x = 1\n"},
        {**good, "bug_line_number_missing_colon": "first"},
        {**good, "bug_line_number_missing_colon": "7"},
        {"prompt": "no output column"},
    ]
    t = snippets.parse_rows(rows)
    assert [s.row for s in t.snippets] == [0, 5, 6]
    assert t.snippets[0].bugged["missing_colon"].line == 1 and not t.snippets[1].bugged
    assert t.problems == [
        "row 1: does not compile (SyntaxError at line 1)",
        "row 2: contains a line break other than \\n",
        "row 3: has a __future__ import",
        "row 4: ends with a line break",
        "row 5: missing_colon: bug line 'first' is not a number",
        "row 6: missing_colon: bug line 7 outside the snippet's 2 lines",
        "row 7: no `output` column",
    ]
    h = haystack.build(t, length=30, depth=0.5, source="dataset", bug_type="missing_colon")
    assert syntax_error_line(h.code) == h.label_line
    with pytest.raises(haystack.HaystackError, match="no pre-bugged missing_comma"):
        haystack.build(t, length=30, depth=0.5, source="dataset", bug_type="missing_comma")
