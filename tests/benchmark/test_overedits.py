"""The labelled over-edit corpus and the classifier benchmark (issue 17)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from benchmark.build.overedits.corpus import Candidate
from benchmark.build.overedits.make import Pair, _run_all, candidates_for
from benchmark.build.overedits.transforms import KINDS
from benchmark.studies.overedits.classify import evaluate
from sandbox import envs

ORIGINAL = '''import math


def task_func(numbers, scale=1):
    """Mean of the numbers, scaled."""
    # nothing to average
    if len(numbers) == 0:
        return 0.0
    total = 0
    for value in numbers:
        total = total + value
    result = total * scale / len(numbers) + 1
    return round(result, 2)
'''
GOLD = ORIGINAL.replace("len(numbers) + 1", "len(numbers)")
TESTS = "assert task_func([1, 2, 3]) == 2.0\nassert task_func([]) == 0.0\nassert task_func([2, 4], 2) == 6.0\n"
PAIR = Pair("made/mean", ORIGINAL, GOLD, TESTS, "script", "base")


def corpus(seed: int = 5, per_task: int = 30) -> list[Candidate]:
    return candidates_for(PAIR, "made", seed, per_task)


def test_generation_is_seeded_and_reproducible():
    first, again, other = corpus(5), corpus(5), corpus(6)
    encode = msgspec.json.encode
    assert [encode(c) for c in first] == [encode(c) for c in again]
    assert [encode(c) for c in first] != [encode(c) for c in other]
    families = {ch.family for c in first for ch in c.changes}
    assert len(families) >= 10, families
    assert all(1 <= len(c.changes) <= 4 for c in first)


def test_every_change_is_recorded_where_it_landed():
    for c in corpus():
        assert c.gold == GOLD and c.original == ORIGINAL
        for ch in c.changes:
            assert tuple(ch.kinds) == KINDS[ch.family]
            if ch.family.startswith("rename"):
                new_names = {c.candidate[s:e] for s, e in ch.spans}
                assert len(new_names) == 1 and new_names.isdisjoint({"numbers", "total", "value", "result", "scale"})
            if ch.family == "unused_import":
                ((s, e),) = ch.spans
                assert c.candidate[s:e].startswith("import ")
        # the fix (dropping `+ 1`) is where the spans say: on the line of the mean
        assert "+ 1" not in c.candidate and c.fix_spans
        for s, e in c.fix_spans:
            line = c.candidate[c.candidate.rfind("\n", 0, s) + 1 : c.candidate.find("\n", e)]
            assert "/ len(" in line and c.candidate[s:e].strip() in ("", ")"), (line, c.candidate[s:e])


def test_classifier_keeps_the_fix_on_the_made_corpus():
    result = evaluate(corpus())
    assert result["fix_kept"] == 1.0, result["misses"][:5]
    assert result["revert_gold"] >= 0.95, result["misses"][:5]
    for kind, row in result["kinds"].items():
        assert row["precision"] is None or row["precision"] >= 0.9, (kind, row, result["misses"][:8])


@pytest.mark.skipif(not envs.is_prepared("base"), reason="sandbox env missing: run scripts/setup-sandbox")
def test_candidates_pass_their_tests_in_the_sandbox(tmp_path: Path):
    cands = corpus(per_task=6)
    cache = tmp_path / "cache.json"
    ran = asyncio.run(_run_all(cands, cache, workers=2, timeout_s=20))
    assert all(c.tests_passed is not None for c in ran)
    # a guard that returns None on None keeps these tests passing; every made change preserves behaviour
    assert sum(c.tests_passed for c in ran) >= len(ran) - 1
    again = asyncio.run(_run_all(cands, cache, workers=2, timeout_s=20))  # answered from the cache
    assert [c.tests_passed for c in again] == [c.tests_passed for c in ran]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    run = subprocess.run(
        [sys.executable, "-m", "benchmark.studies.overedits.classify", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "error:" in run.stderr
    run = subprocess.run(
        [sys.executable, "-m", "benchmark.build.overedits"], capture_output=True, text=True, check=False
    )
    assert run.returncode == 2 and "usage:" in run.stderr
    # make: an unknown source is not read as the over-editing suite; nothing is written for a bad request
    for argv, said in (
        (["--from", "nosuch"], "unknown source 'nosuch'"),
        (["--per-task", "0"], "--per-task"),
        (["--out", str(tmp_path / "no" / "c.jsonl")], "no folder"),
    ):
        out = ["--out", str(tmp_path / "c.jsonl")] if "--out" not in argv else []
        run = subprocess.run(
            [sys.executable, "-m", "benchmark.build.overedits", "make", *out, *argv],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 2 and said in run.stderr and "Traceback" not in run.stderr, (argv, run.stderr)
    assert not (tmp_path / "c.jsonl").exists()


@pytest.mark.skipif(not envs.is_prepared("base"), reason="sandbox env missing: run scripts/setup-sandbox")
def test_necessity_over_units_finds_the_fix_alone():
    from benchmark.studies.necessity.overedits import study

    cands = [c for c in corpus(per_task=8) if all(ch.family != "none_guard" for ch in c.changes)][:3]
    pairs = asyncio.run(study(cands, max_runs=24, workers=2, timeout_s=20))
    assert len(pairs) == len(cands)
    # ddmin over units keeps only the fix: the reference-free excess is the gold-based one
    assert all(abs(ref - gold) < 1e-9 for ref, gold in pairs), pairs


def test_instruction_aware_judge_keeps_unasked_over_edits_flagged():
    generic = candidates_for(
        msgspec.structs.replace(PAIR, instruction="What is wrong? Fix and complete my function."), "made", 5, 30
    )
    assert all(c.instruction for c in generic)
    core, aware = evaluate(generic), evaluate(generic, "aware")
    # nothing in a generic fix request asks for a rename, a guard or a reformat: the same units stay flagged
    for kind, row in core["kinds"].items():
        assert aware["kinds"][kind]["recall"] == row["recall"], (kind, aware["misses"][:8])
    assert aware["fix_kept"] == 1.0
    # an instruction that asks for validation lets the added guards through: the aware judge is really on
    asks = [
        msgspec.structs.replace(c, instruction="Fix the mean and raise a ValueError on invalid input.") for c in generic
    ]
    told = evaluate(asks, "aware")
    assert told["kinds"]["defensive"]["recall"] < core["kinds"]["defensive"]["recall"]
    assert told["kinds"]["rename"]["recall"] == core["kinds"]["rename"]["recall"]


def test_aware_judge_needs_instructions(tmp_path: Path):
    old = tmp_path / "old.jsonl"
    old.write_bytes(msgspec.json.encode(corpus(per_task=1)[0]) + b"\n")  # made without an instruction
    run = subprocess.run(
        [sys.executable, "-m", "benchmark.studies.overedits.classify", str(old), "--judge", "aware"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "no instruction" in run.stderr
    run = subprocess.run(
        [sys.executable, "-m", "benchmark.studies.overedits.classify", str(old)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0 and "fix kept" in run.stdout


def test_lines_inserted_above_the_target_are_outside_it():
    from server.fidelity import measure

    original = "def gcd(a, b):\n    return a if b == 0 else gcd(a % b, b)\n\ndef lcm(a, b):\n    return a * b\n"
    edited = "import json\n" + original.replace("gcd(a % b, b)", "gcd(b, a % b)")
    kinds = [h.kinds for h in measure(original, edited, target=range(1, 3)).hunks]
    assert ["import_change", "outside_target"] in kinds and ["logic"] in kinds, kinds
    # the same insertion is inside a target that is the whole file (nothing precedes line 1)
    assert not any("outside_target" in h.kinds for h in measure(original, edited, target=range(1, 7)).hunks)
    # lines inserted inside the target stay inside it
    body = original.replace("    return a if", "    a = abs(a)\n    return a if")
    assert not any("outside_target" in h.kinds for h in measure(original, body, target=range(1, 3)).hunks)


def test_an_insertion_beside_a_copy_of_itself_matches_either_copy():
    from benchmark.studies.overedits.classify import _widen

    text = "    return ((a * b) / gcd(a, b))"
    assert _widen(text, [(11, 12)], slide=True) == [(11, 13)]  # the second `(` may be the inserted one
    assert _widen(text, [(11, 12)]) == [(11, 12)]  # a unit's own span is where the core put it
