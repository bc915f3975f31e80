"""`python -m benchmark.studies.overedits.real`: real completions through the real language server (a scripted
endpoint answers each one), the server's flags measured against human labels.

The crafted set's expected figures are computed here from its labels and the flags the server returned,
with line sets (not the module's range arithmetic); the shared set is checked for well-formed figures
that agree with its labels, not for values (the classifier is being changed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from benchmark.datadir import run_script
from benchmark.studies.overedits.real import RealReport, main, render_text
from benchmark.studies.overedits.real_score import Change, Unit, meets

ROOT = Path(__file__).resolve().parents[2]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, RealReport]:
    rc = main([*argv, "--format", "json", "--concurrency", "3"])
    out = capsys.readouterr().out
    return rc, msgspec.json.decode(out, type=RealReport)


# ---- the matching rule, on its own --------------------------------------------------------------


def _unit(lines: tuple[int, int], new_lines: tuple[int, int]) -> Unit:
    return Unit(index=0, lines=lines, new_lines=new_lines, kinds=["logic"], flagged=True, severity=2, message="")


def _change(lines: list[tuple[int, int]], new_lines: list[tuple[int, int]]) -> Change:
    return Change(desc="", lines=lines, new_lines=new_lines, kind="logic", requested=False)


def test_units_and_changes_meet_on_a_common_line_of_either_side():
    inserted = _change([(10, 9)], [(10, 12)])  # three lines inserted before line 10
    assert meets(_unit((10, 9), (12, 12)), inserted)  # a unit adding one of those lines
    assert not meets(_unit((10, 9), (13, 14)), inserted)  # another insertion at the same place
    assert meets(_unit((9, 10), (9, 13)), inserted)  # a wider unit around it
    deleted = _change([(20, 22)], [(25, 24)])  # lines 20-22 deleted
    assert meets(_unit((22, 22), (25, 24)), deleted)  # by the lines it removes
    assert not meets(_unit((23, 23), (25, 25)), deleted)  # the next line, changed
    several = _change([(5, 5), (9, 9)], [(5, 5), (9, 9)])  # a rename at two places
    assert meets(_unit((9, 9), (9, 9)), several) and not meets(_unit((7, 7), (7, 7)), several)


# ---- a crafted set through the real server ------------------------------------------------------


def _entry(problem: dict, key: str, after: str, changes: list[dict], kind: str = "descriptive") -> dict:
    return {
        "key": key,
        "model": key.split("/")[0],
        "archive": "crafted",
        "member": key.split("#")[0],
        "sample": 0,
        "problem_id": problem["id"],
        "name": problem["name"],
        "instruction_kind": kind,
        "tests": "OK",
        "selection": "low",
        "instruction": problem[f"instruction_{kind}"],
        "before": problem["before"],
        "after": after,
        "gold": problem["after"],
        "changes": changes,
    }


def _c(lines: list, new_lines: list, kind: str, requested: bool | str, desc: str, **extra: bool) -> dict:
    return {"desc": desc, "lines": lines, "new_lines": new_lines, "kind": kind, "requested": requested, **extra}


def crafted(problem: dict) -> list[dict]:
    """Three completions of CanItEdit 115 (the fix: `combination(n + r - 1, n)` on line 14), labelled
    by hand with the line ranges of a difflib line diff."""
    before = problem["before"]
    fixed = before.replace("combination(n + r - 1, r)", "combination(n + r - 1, n)")
    assert fixed != before
    over = (
        fixed.replace("import math\n", "import math\nimport os\n")
        .replace(
            "return int(math.factorial(n) / math.factorial(n - r))", "return math.factorial(n) // math.factorial(n - r)"
        )
        .replace("product", "prod")
        .replace("def arrangement_unlimited_rep", "CACHE = {}\n\n\ndef arrangement_unlimited_rep")
    )
    # a blank line dropped (trivial) and a rename the labeller took as asked for (a flag on it is false)
    other = fixed.replace("    return int(n ** r)\n\n\n", "    return int(n ** r)\n\n").replace("product", "total")
    return [
        _entry(problem, "model-a/clean#0", fixed, [_c([[14, 14]], [[14, 14]], "logic", True, "the fix")]),
        _entry(
            problem,
            "model-b/over#0",
            over,
            [
                _c([[2, 1]], [[2, 2]], "import_change", False, "unused import os"),
                _c([[4, 4]], [[5, 5]], "logic", False, "permutation divides with //"),
                _c([[14, 14]], [[18, 18]], "logic", True, "the fix"),
                _c([[17, 17], [20, 20], [22, 22]], [[21, 21], [24, 24], [26, 26]], "rename", False, "product -> prod"),
                _c([[8, 7]], [[9, 11]], "logic", False, "a module-level cache nothing uses"),
            ],
        ),
        _entry(
            problem,
            "model-a/other#0",
            other,
            [
                _c([[12, 12]], [[12, 11]], "formatting_only", False, "blank line dropped", trivial=True),
                _c([[14, 14]], [[13, 13]], "logic", True, "the fix"),
                _c([[17, 17], [20, 20], [22, 22]], [[16, 16], [19, 19], [21, 21]], "rename", True, "product -> total"),
            ],
            kind="lazy",
        ),
    ]


def _lines(spans: list) -> set[int]:
    return {n for s, e in spans for n in range(s, e + 1)}


def hit(u: Unit, c: dict) -> bool:
    return bool(_lines([u.new_lines]) & _lines(c["new_lines"]) or _lines([u.lines]) & _lines(c["lines"]))


def unrequested(c: dict) -> bool:
    return c["requested"] is False and not c.get("trivial")


def _expected(entries: list[dict], units: dict[str, list[Unit]], level: str) -> dict[str, tuple[int, int]]:
    """The four figures from the labels and the server's flags, with line sets."""

    prec = [0, 0]
    rec = [0, 0]
    fa = [0, 0]
    det = [0, 0]
    for e in entries:
        shown = [u for u in units[e["key"]] if u.flagged and (level == "any" or (u.severity or 2) <= 2)]
        scored = []
        for u in shown:
            met = [c for c in e["changes"] if hit(u, c)]
            if not met or any(c["requested"] != "unsure" and not c.get("trivial") for c in met):
                scored.append(u)
        wanted = [c for c in e["changes"] if unrequested(c)]
        prec[0] += sum(any(hit(u, c) for c in wanted) for u in scored)
        prec[1] += len(scored)
        rec[0] += sum(any(hit(u, c) for u in scored) for c in wanted)
        rec[1] += len(wanted)
        if wanted:
            det[0] += any(hit(u, c) for u in scored for c in wanted)
            det[1] += 1
        else:
            fa[0] += bool(scored)
            fa[1] += 1
    return {
        "precision": (prec[0], prec[1]),
        "recall": (rec[0], rec[1]),
        "false_alarms": (fa[0], fa[1]),
        "detection": (det[0], det[1]),
    }


def test_a_crafted_set_gives_the_figures_its_labels_and_the_servers_flags_imply(tmp_path, capsys, canitedit_problems):
    problem = next(p for p in canitedit_problems if p["id"] == 115)
    entries = crafted(problem)
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(e) + "\n" for e in entries))
    rc, r = _run(capsys, str(labels))
    assert rc == 0 and r.failed == 0
    assert (r.completions, r.clean, r.over_edited, r.unrequested) == (3, 2, 1, 4)
    units = {e.key: e.units for e in r.entries}
    assert set(units) == {e["key"] for e in entries}
    # the server's units cover every labelled change: the proposal rebuilt `after` (else it would have failed)
    assert all(units[k] for k in units)
    # not vacuous: the server flags something in this set (the unused import or one of the renames)
    assert any(u.flagged for us in units.values() for u in us)
    for u in (u for us in units.values() for u in us if u.flagged and u.kinds == ["formatting_only"]):
        assert u.severity is not None and u.severity > 2  # a whitespace-only unit stays a hint
    for level in ("warning", "any"):
        got = getattr(r, level)
        want = _expected(entries, units, level)
        for name, (num, den) in want.items():
            ratio = getattr(got, name)
            assert (ratio.num, ratio.den) == (num, den), (level, name)
            assert ratio.value == (num / den if den else None)
        assert got.flagged_units == want["precision"][1]
    # misses: the unrequested changes no warning-severity unit meets; false flags: flagged units meeting none
    warned = [(k, u) for k, us in units.items() for u in us if u.flagged and (u.severity or 2) <= 2]
    by_key = {e["key"]: e for e in entries}
    missed = {
        (e["key"], c["desc"])
        for e in entries
        for c in e["changes"]
        if unrequested(c) and not any(k == e["key"] and hit(u, c) for k, u in warned)
    }
    assert {(m.key, m.desc) for m in r.misses} == missed
    for f in r.false_flags:
        u = _unit(f.lines, f.new_lines)
        assert not any(hit(u, c) for c in by_key[f.key]["changes"] if unrequested(c)) and f.message
    assert len(r.false_flags) == sum(u.flagged for us in units.values() for u in us) - (
        r.any.precision.num  # flagged units meeting an unrequested change (each is scored)
    )
    text = render_text(r)
    assert "unit precision" in text and f"{r.warning.recall}" in text and "per model" in text
    assert "per model" not in render_text(r, "kind") and "per labelled kind" not in render_text(r, "model")


# ---- the shared set -----------------------------------------------------------------------------


def test_the_shared_set_is_measured_through_the_server(shared_data, capsys):
    path = shared_data / "real_edits" / "labels.jsonl"
    if not path.exists():
        pytest.skip("no real_edits labels in the shared data")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rc, r = _run(capsys, "--data", str(shared_data))
    assert rc == 0 and r.failed == 0 and r.labels == str(path)
    unreq = [[c for c in row["changes"] if c["requested"] is False and not c.get("trivial")] for row in rows]
    assert r.completions == len(rows) and r.over_edited == sum(bool(u) for u in unreq)
    assert r.clean == len(rows) - r.over_edited and r.unrequested == sum(map(len, unreq))
    for level in ("warning", "any"):
        f = getattr(r, level)
        assert f.precision.den == f.flagged_units and f.recall.den == r.unrequested
        assert f.false_alarms.den == r.clean and f.detection.den == f.flagged_over_edited.den == r.over_edited
        for ratio in (f.precision, f.recall, f.false_alarms, f.detection, f.flagged_over_edited):
            assert 0 <= ratio.num <= ratio.den and ratio.value == (ratio.num / ratio.den if ratio.den else None)
        assert f.detection.num <= f.flagged_over_edited.num
        # the per-model rows add up to the totals
        rows_f = [getattr(m, level) for m in r.by_model]
        for name in ("precision", "recall", "false_alarms", "detection"):
            assert sum(getattr(x, name).num for x in rows_f) == getattr(f, name).num
            assert sum(getattr(x, name).den for x in rows_f) == getattr(f, name).den
    assert r.any.flagged_units + r.any.unscored_units >= r.warning.flagged_units + r.warning.unscored_units
    assert r.any.recall.num >= r.warning.recall.num and r.any.detection.num >= r.warning.detection.num
    assert sum(m.completions for m in r.by_model) == r.completions
    assert sum(k.unrequested for k in r.by_kind) == r.unrequested
    assert sum(k.met_warning for k in r.by_kind) == r.warning.recall.num
    assert sum(k.met_any for k in r.by_kind) == r.any.recall.num
    assert len(r.misses) == r.unrequested - r.warning.recall.num
    flagged = sum(u.flagged for e in r.entries for u in e.units)
    assert flagged == r.any.flagged_units + r.any.unscored_units
    assert len(r.false_flags) == flagged - r.any.precision.num
    assert {e.key for e in r.entries} == {row["key"] for row in rows}
    line = next(x for x in render_text(r).splitlines() if x.startswith("unit recall"))
    assert str(r.warning.recall) in line and str(r.any.recall) in line


# ---- unusable input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("{not json", "line 2"),
        ('{"key": "k"}', "missing required field"),
        (None, "not a range"),
    ],
)
def test_a_malformed_labels_file_is_one_line_and_status_2(tmp_path, capsys, canitedit_problems, line, says):
    problem = next(p for p in canitedit_problems if p["id"] == 115)
    good = crafted(problem)[0]
    if line is None:  # a label past the end of `after`
        bad = dict(good, changes=[_c([[14, 14]], [[14, 99]], "logic", True, "the fix")])
        line = json.dumps(bad)
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(good) + "\n" + line + "\n")
    assert run_script(lambda: main([str(path)])) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err and str(path) in err and "Traceback" not in err


def test_the_module_reports_bad_input_without_a_traceback(tmp_path, capsys):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"key": 1}\n')
    p = subprocess.run(
        [sys.executable, "-m", "benchmark.studies.overedits.real", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr and p.stderr.startswith("real: error: ")
    assert f"{path} line 1: not a labelled completion: Expected `str`, got `int` - at `$.key`" in p.stderr
    # no labels where the data directory says: the fix in one line
    assert run_script(lambda: main(["--data", str(tmp_path / "nothing")])) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "real_edits/labels.jsonl" in err and "EDIT_FIDELITY_DATA" in err


# ---- with the tests -----------------------------------------------------------------------------


def test_with_the_tests_an_unneeded_rewrite_is_flagged_and_the_fix_is_not(
    tmp_path, capsys, canitedit_problems, shared_data
):
    """`--tests`: each proposal's necessity analysed by the server in the real sandbox (the `canitedit`
    environment), the CanItEdit tests run as the suite's judge runs them."""
    problem = next(p for p in canitedit_problems if p["id"] == 115)
    entries = crafted(problem)
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(e) + "\n" for e in entries))
    rc, r = _run(capsys, str(labels), "--tests", "--max-runs", "16", "--data", str(shared_data))
    assert rc == 0 and r.failed == 0 and r.tests is not None
    assert r.tests.statuses == {"minimal": 3}  # every completion's tests found the fix needed
    assert 0 < r.tests.runs <= 3 * 16
    _, words = _run(capsys, str(labels))
    assert words.warning == r.warning and words.any == r.any  # instruction only: the same figures either way
    over = next(e for e in r.entries if e.key == "model-b/over#0")
    # `//` for `int(... / ...)` in `permutation`: the instruction names another function (`target_scope`)
    slash = next(u for u in over.units if u.lines == (4, 4))
    assert slash.flagged and "points at `combination_unlimited_rep`" in slash.message
    # a module-level cache: the words alone cannot tell it from the fix; the tests pass without it
    cache = next(u for u in over.units if 9 <= u.new_lines[0] <= 11)
    assert not cache.flagged
    assert r.tests.flagged_by_tests >= 1 and r.tests.warning.recall.num > r.warning.recall.num
    missed = {(m.key, m.desc) for m in r.tests.misses}
    assert ("model-b/over#0", "a module-level cache nothing uses") not in missed
    assert ("model-b/over#0", "a module-level cache nothing uses") in {(m.key, m.desc) for m in r.misses}
    # the fix is needed by the tests: never flagged, on either footing
    assert not any("the fix" in f.meets[0] for f in r.tests.false_flags if f.meets)
    text = render_text(r)
    assert "with the tests (analyzeNecessity in the sandbox: minimal 3;" in text
    assert "misses (with the tests)" in text and "with tests, warning+" in text
