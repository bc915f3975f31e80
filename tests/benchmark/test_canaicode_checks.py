"""can-ai-code, the pure parts: interview loading, prompts, the name/args regex, check scoring, recorded
eval files. The published eval files store every check's value and points, so the scoring is checked
against all of them here without running anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark.suites.canaicode import checks, recorded
from benchmark.suites.canaicode.function import function_info, render_call
from benchmark.suites.canaicode.interview import Check, load_interview, parse_interview_file
from benchmark.suites.canaicode.prompts import PromptError, render
from benchmark.suites.canaicode.reference import reference_answer
from benchmark.suites.canaicode.suite import known_names


@pytest.fixture(scope="module")
def eval_files(canaicode_root: Path) -> list[tuple[Path, list[dict]]]:
    files = sorted((canaicode_root / "results_sample").glob("eval_*.ndjson"))
    assert len(files) == 6
    return [(f, [json.loads(line) for line in f.read_text().splitlines() if line.strip()]) for f in files]


def test_sets_have_the_published_sizes_and_weights(canaicode_root: Path) -> None:
    sizes = {}
    for s in ("junior-dev", "junior-v2", "senior"):
        qs = load_interview(canaicode_root, s)
        assert all(q.error is None for q in qs), [q.error for q in qs if q.error]
        sizes[s] = (len(qs), sum(q.total for q in qs))
    assert sizes == {"junior-dev": (12, 65), "junior-v2": (14, 91), "senior": (3, 74)}  # SPEC 3.6, per language
    vm = {q.name: q for q in load_interview(canaicode_root, "senior")}["VMAssemblerSimple"]
    assert [c.weight for c in vm.checks] == [1, 1, 1, 6, 4, 6, 8]  # merged from the `.SimpleChecks` anchor


def test_prompts_and_check_order_are_the_published_ones(canaicode_root: Path, eval_files) -> None:
    n = 0
    for path, rows in eval_files:
        interview = path.name.split("_")[1]
        questions = {q.name: q for q in load_interview(canaicode_root, interview)}
        for r in rows:
            q = questions[r["name"]]
            assert render(canaicode_root / "prompts_params", "chat-simple", r["language"], q.fields) == r["prompt"]
            assert [c.assert_ for c in q.checks] == [c["assert"] for c in r["checks"]]
            assert q.total == r["total"]
            n += 1
    assert n == 102


def test_stored_values_score_to_the_stored_points(canaicode_root: Path, eval_files) -> None:
    """Every stored check value, scored by us, gets the stored points; the rows sum to the stored totals."""
    scored = 0
    for path, rows in eval_files:
        questions = {q.name: q for q in load_interview(canaicode_root, path.name.split("_")[1])}
        for r in rows:
            q = questions[r["name"]]
            points = 0
            for check, stored in zip(q.checks, r["checks"], strict=True):
                s = checks.score(check, stored["got"])
                assert s.points == stored["status"], (r["name"], r["language"], stored)
                points += s.points
                scored += 1
            assert points == r["passed"] and ("PASS" if points == r["total"] else "FAIL") == r["status"]
    assert scored > 500


def check(expected, *, weight: int = 1, any_of: list | None = None) -> Check:
    if any_of is not None:
        return Check(name="c", assert_="f.call()", eq_any=any_of, weight=weight)
    return Check(name="c", assert_="f.call()", eq=expected, has_eq=True, weight=weight)


def test_scalar_dict_and_eq_any_semantics() -> None:
    assert checks.score(check(True), True).passed and checks.score(check(True), 1).passed  # bool is int upstream
    assert not checks.score(check(5), "5").passed
    assert checks.score(check(None, any_of=["Clark Kent", "Kal-El"]), "Kal-El").points == 1
    assert checks.score(check(None, any_of=["Clark Kent"]), None).points == 0
    d = check({"a": 1, "b.c": 2, "d": 3}, weight=4)
    s = checks.score(d, {"a": 1, "b.c": 2, "d": 0, "extra": 9})  # extra keys are not counted
    assert (s.passed, s.ratio, s.points) == (False, 2 / 3, 2)  # floor(4 x 2/3)
    assert checks.score(d, {"a": 1, "b.c": 2, "d": 3, "x": 1}).points == 4
    assert checks.score(d, [1, 2, 3]).points == 0
    assert checks.score(check(1.5), 1.5).passed  # no float branch upstream: compared with ==


def test_list_leniency_pads_one_none_and_keeps_the_better_side() -> None:
    fib = check([0, 1, 1, 2, 3], weight=5)
    assert checks.score(fib, [0, 1, 1, 2, 3]).points == 5
    assert checks.score(fib, [0, 1, 1, 2, 3, 5]).points == 4  # one extra at the end: 5 of 6 positions
    assert checks.score(fib, [1, 1, 2, 3]).points == 4  # missing first element: padded at the start
    assert checks.score(fib, [0, 1, 1, 2]).points == 4  # missing last element: padded at the end
    assert checks.score(fib, (0, 1, 1, 2, 3)).points == 0  # not a list
    assert checks.score(fib, [0, 1, 9, 2, 3]).points == 4  # same length: positionwise
    # upstream's 2024 code kept the *worse* padding (`if errors_pre > errors`): a named mode
    ten = check([0, 1, 1, 2, 3], weight=10)
    assert checks.score(ten, [1, 1, 2, 3]).points == 8 and checks.score(ten, [0, 1, 1, 2]).points == 8
    assert checks.score(ten, [1, 1, 2, 3], padding="worse").points == 2  # 1 of 5 positions
    assert checks.score(ten, [0, 1, 1, 2], padding="worse").points == 2
    assert checks.score(check([], weight=3), []).points == 3
    with pytest.raises(ValueError, match="unknown list padding"):
        checks.score(fib, [], padding="best")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("language", "code", "expected"),
    [
        ("python", "def gcd(a: int, b=0) -> int:\n    return a", ("gcd", ["a", "b=0"])),
        ("python", "import math\n\ndef  glork (bork):\n  pass\ndef other(x):\n  pass", ("glork ", ["bork"])),
        ("python", "def meaning_of_life():\n    return 42", ("meaning_of_life", [])),
        ("python", "class A:\n    def __init__(self, x):\n        pass", ("__init__", ["self", "x"])),
        ("python", "print('no function here')", None),
        ("javascript", "function fib(n) {\n  return n;\n}", ("fib", ["n"])),
        ("javascript", "function* gen(a, b) {\n  yield a;\n}", ("gen", ["a", "b"])),
        (
            "javascript",
            "const flatten = (obj, prefix = '') => {\n  return obj;\n};",
            ("flatten", ["obj", "prefix = ''"]),
        ),
        ("javascript", "const f = x => x + 1;", None),
    ],
)
def test_function_name_and_args_regex(language: str, code: str, expected) -> None:
    assert function_info(language, code) == expected


def test_calls_are_written_with_json_literals() -> None:
    assert render_call("f", ({"a": 1, "b": [True, None]}, "x")) == 'f({"a": 1, "b": [true, null]},"x")'
    assert render_call("things", ()) == "things()"


MALFORMED = """\
.Shared: &Shared
    ok:
        assert: "f.call(1)"
        eq: 1
Good:
    Signature: "f(n)"
    Input: "with input n"
    Output: "n"
    Checks:
        <<: *Shared
NoAssert:
    Signature: "f(n)"
    Input: "with input n"
    Output: "n"
    Checks:
        broken:
            eq: 1
BadWeight:
    Signature: "f(n)"
    Input: "x"
    Output: "y"
    Checks:
        heavy:
            assert: "f.call(1)"
            eq: 1
            weight: "lots"
NotPython:
    Signature: "f(n)"
    Input: "x"
    Output: "y"
    Checks:
        typo:
            assert: "f.call(1"
            eq: 1
NoSignature:
    Input: "x"
    Output: "y"
    Checks:
        ok:
            assert: "f.name"
            eq: "f"
"""


def test_malformed_questions_are_reported_one_by_one(tmp_path: Path) -> None:
    folder = tmp_path / "custom"
    folder.mkdir()
    (folder / "a.yaml").write_text(MALFORMED)
    (folder / "b.yaml").write_text("Broken: [unclosed\n")
    qs = {q.name: q for q in load_interview(tmp_path, "custom")}
    assert qs["Good"].error is None and qs["Good"].total == 1
    assert "check 'broken' has no `assert` expression" in qs["NoAssert"].error
    assert "`weight` must be a non-negative integer (got 'lots')" in qs["BadWeight"].error
    assert "`assert` is not a Python expression" in qs["NotPython"].error
    assert "lacks Signature" in qs["NoSignature"].error
    assert qs["b"].error.startswith("custom/b.yaml: cannot load the YAML")
    assert all(q.error.startswith("custom/") for n, q in qs.items() if n != "Good")
    assert [q.name for q in parse_interview_file("custom", folder / "a.yaml")] == [
        "Good",
        "NoAssert",
        "BadWeight",
        "NotPython",
        "NoSignature",
    ]


def test_unknown_template_is_a_clear_error(canaicode_root: Path) -> None:
    with pytest.raises(PromptError, match="prompt template 'nope' not found"):
        render(canaicode_root / "prompts_params", "nope", "python", {})
    v2 = render(
        canaicode_root / "prompts_params",
        "chat-simple-v2",
        "javascript",
        {"Signature": "f()", "Input": "i", "Output": "o"},
    )
    assert "Do not return any HTML elements" in v2 and v2.startswith(
        "Write a javascript function f() i that returns o."
    )


def test_recorded_file_problems_keep_their_lines(canaicode_root: Path, tmp_path: Path) -> None:
    good = json.dumps(
        {
            "name": "GCDZeroShot",
            "language": "python",
            "code": "def gcd(a, b): return 1",
            "status": "FAIL",
            "passed": 3,
            "total": 9,
        }
    )
    lines = [
        good,
        "{not json",
        json.dumps({"name": "GCDZeroShot", "language": "rust", "code": ""}),
        json.dumps({"name": "NoSuchQuestion", "language": "python", "code": "x"}),
        good,
    ]
    path = tmp_path / "eval_junior-v2_python_chat-simple_none_greedy_m_1.ndjson"
    path.write_text("\n".join(lines))
    ev = recorded.load(path)
    ev.bind(known_names(canaicode_root))
    assert ev.interview == "junior-v2" and list(ev.rows) == ["junior-v2/GCDZeroShot/python"]
    assert ev.get("junior-v2/GCDZeroShot", "python") == ["def gcd(a, b): return 1"]
    assert ev.verdict("junior-v2/GCDZeroShot", "python", 0) is False
    messages = sorted(p.message for p in ev.problems)
    assert messages == [
        "line 2: not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        "line 3: GCDZeroShot: unknown language 'rust'",
        "line 4: NoSuchQuestion: no such question in junior-v2",
        "line 5: GCDZeroShot (python) repeats line 1",
    ]
    assert ev.get(recorded.problem_id(2), "python") == [""]  # reaches the suite, which reports the error


def test_every_question_has_a_reference_answer(canaicode_root: Path) -> None:
    for s in ("junior-dev", "junior-v2", "senior"):
        for q in load_interview(canaicode_root, s):
            for lang in ("python", "javascript"):
                code = reference_answer(q, lang)
                assert code is not None and function_info(lang, code)[0] == q.signature.split("(")[0]
