"""How well the core's change units separate a fix from what nobody asked for, on a labelled corpus.

    python -m benchmark.studies.overedits.classify CORPUS.jsonl [--misses N] [--judge core|aware]

For each candidate: `measure(original, candidate, target=...)`; a unit is labelled by the recorded
changes it overlaps (in the candidate's characters). Per kind: precision (units given the kind that
overlap a change of that kind) and recall (changes of that kind overlapped by a unit given it).
"fix kept": no flagged unit (`unrequested`, no instruction) overlaps the gold fix. "revert = gold":
applying only the units not flagged gives the gold fix's tokens exactly.
`--judge aware` also judges every unit against the candidate's instruction (`server.fidelity.judge.flags`, the
judge the server and the suites use): a unit the judge finds requested loses its unrequested kinds, and
the two tables are printed side by side (every change in the corpus is unrequested, so a change the
judge lets through is a miss of its kind).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

from benchmark.build.overedits import lang_make
from benchmark.build.overedits.corpus import Candidate, load_corpus, new_spans
from server.fidelity import apply_text_edits, measure, paper_tokens
from server.fidelity.judge.flags import judge_units
from server.fidelity.text import pyast
from server.protocol.report import UNREQUESTED_KINDS, FidelityReport

JUDGES = ("core", "aware")


def _views(c: Candidate, report: FidelityReport, judge: str) -> list[tuple[list[str], bool]]:
    """Per unit: the kinds it is given and whether it is flagged, by the core alone or by the
    instruction-aware judge. A unit the judge lets through (requested) loses its unrequested kinds; a
    flagged one keeps the core's kinds (the judge's message names only the kinds it cites, but the whole
    unit is still flagged, which is what the question "did real over-edits stop being flagged" asks)."""
    if judge == "core":
        return [(list(h.kinds), h.unrequested) for h in report.hunks]
    verdicts = judge_units(report, c.instruction, original=c.original, edited=c.candidate)
    return [
        (list(h.kinds) if v.flagged else [k for k in h.kinds if k not in UNREQUESTED_KINDS], v.flagged)
        for h, v in zip(report.hunks, verdicts, strict=True)
    ]


def _widen(text: str, spans: list[tuple[int, int]], slide: bool = False) -> list[tuple[int, int]]:
    """A deletion has no extent: place it anywhere in the whitespace around it. With `slide` (a recorded
    change, matched to units by kind), an insertion next to a copy of itself (`(` before `(`) is equally
    any of the copies: a diff may align it with either."""
    out = []
    for s, e in spans:
        if s == e:
            while s > 0 and text[s - 1] in " \t\n\r":
                s -= 1
            while e < len(text) and text[e] in " \t\n\r":
                e += 1
        elif slide:  # the union of the windows the span slides to while the text repeats
            s0, e0 = s, e
            while s > 0 and text[s - 1] == text[e0 - 1 - (s0 - s)]:
                s -= 1
            while e < len(text) and text[e] == text[s0 + (e - e0)]:
                e += 1
        out.append((s, e))
    return out


def _holds(unit: tuple[int, int], fix: tuple[int, int]) -> bool:
    """Does a unit's text hold part of the fix? A deletion of the fix must lie strictly inside it."""
    (s1, e1), (s2, e2) = unit, fix
    if s2 == e2:
        return s1 < s2 < e1
    return s1 < e2 and s2 < e1


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    (s1, e1), (s2, e2) = a, b
    if s1 == e1 or s2 == e2:  # a deletion: touching counts
        return s1 <= e2 and s2 <= e1
    return s1 < e2 and s2 < e1


def _function_span(text: str, name: str) -> tuple[int, int]:
    """Character interval of the top-level function `name` (decorators included) in `text`."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    for node in pyast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return starts[first - 1], starts[min(node.end_lineno or node.lineno, len(starts) - 1)]
    return 0, len(text)


def evaluate(cands: list[Candidate], judge: str = "core") -> dict:
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    fix_kept = revert_gold = 0
    misses: list[str] = []
    for c in cands:
        report = measure(c.original, c.candidate, target=range(*c.target), language=c.language)
        views = _views(c, report, judge)
        unit_spans = [_widen(c.candidate, new_spans(c.original, report.edits, h.edits)) for h in report.hunks]
        whole = c.target[0] <= 1 and c.target[1] >= c.original.count("\n") + 2
        lo, hi = (
            (0, len(c.candidate))
            if whole
            else _function_span(c.candidate, c.entry)
            if c.language == "python"
            else lang_make.function_span(c.candidate, c.language, c.entry)
        )
        # a change that reaches outside the target function is outside the target (a deletion at the
        # function's first character removed its own first lines: a doc comment above it)
        truth = [
            (
                tuple(ch.kinds)
                + (
                    ("outside_target",)
                    if "outside_target" not in ch.kinds
                    and ch.spans
                    and any((e <= lo if s < e else s < lo) or s >= hi for s, e in ch.spans)
                    else ()
                ),
                _widen(c.candidate, ch.spans, slide=True),
            )
            for ch in c.changes
        ]
        fix = list(c.fix_spans)
        truth.append((("logic",), _widen(c.candidate, fix)))
        for h, (hkinds, _), spans in zip(report.hunks, views, unit_spans):
            true_kinds = {k for kinds, tsp in truth if any(_overlaps(u, t) for u in spans for t in tsp) for k in kinds}
            for k in hkinds:
                if k in true_kinds:
                    tp[k] += 1
                else:
                    fp[k] += 1
                    misses.append(f"{c.id}: unit {hkinds} ({h.message}) where the truth is {sorted(true_kinds)}")
        for kinds, tsp in truth:
            for k in kinds:
                total[k] += 1
                if any(
                    k in hkinds and any(_overlaps(u, t) for u in spans for t in tsp)
                    for (hkinds, _), spans in zip(views, unit_spans)
                ):
                    found[k] += 1
                else:
                    misses.append(f"{c.id}: change {kinds} not found")
        flagged = [spans for (_, f), spans in zip(views, unit_spans) if f]
        if not any(_holds(u, t) for spans in flagged for u in spans for t in fix):
            fix_kept += 1
        else:
            misses.append(f"{c.id}: a flagged unit holds part of the fix")
        reverted = apply_text_edits(c.original, [e for h, (_, f) in zip(report.hunks, views) if not f for e in h.edits])
        if (
            paper_tokens(reverted) == paper_tokens(c.gold)
            if c.language == "python"
            else lang_make.tokens_equal(reverted, c.gold, c.language)
        ):
            revert_gold += 1
        else:
            misses.append(f"{c.id}: revert unrequested is not the gold fix")
    all_kinds = sorted(set(total) | set(tp) | set(fp))
    table = {
        k: {
            "precision": tp[k] / (tp[k] + fp[k]) if tp[k] + fp[k] else None,
            "recall": found[k] / total[k] if total[k] else None,
            "changes": total[k],
            "units": tp[k] + fp[k],
        }
        for k in all_kinds
    }
    n = len(cands)
    return {
        "candidates": n,
        "kinds": table,
        "fix_kept": fix_kept / n if n else None,
        "revert_gold": revert_gold / n if n else None,
        "misses": misses,
    }


def _cell(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmark.studies.overedits.classify",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--misses", type=int, default=0, help="print the first N misclassified units/changes")
    parser.add_argument(
        "--judge",
        choices=JUDGES,
        default="core",
        help="aware: also judge units against each candidate's instruction, tables side by side",
    )
    args = parser.parse_args(argv)
    if (cands := load_corpus(args.corpus)) is None:
        return 2
    if args.judge == "aware" and (missing := next((c.id for c in cands if c.instruction is None), None)):
        print(
            f"error: {args.corpus}: candidate {missing} has no instruction (an older corpus); "
            "regenerate it with `python -m benchmark.build.overedits make`",
            file=sys.stderr,
        )
        return 2
    judges = ("core",) if args.judge == "core" else ("core", "aware")
    results = {j: evaluate(cands, j) for j in judges}
    print(f"{len(cands)} candidates")
    head = "".join(
        f" {j + ' P':>9} {j + ' R':>8}" if len(judges) > 1 else f" {'precision':>9} {'recall':>7}" for j in judges
    )
    print(f"{'kind':<18}{head} {'changes':>8} {'units':>6}")
    kinds = sorted({k for r in results.values() for k in r["kinds"]})
    for k in kinds:
        rows = [r["kinds"].get(k, {"precision": None, "recall": None}) for r in results.values()]
        width = 8 if len(judges) > 1 else 7
        cells = "".join(f" {_cell(row['precision']):>9} {_cell(row['recall']):>{width}}" for row in rows)
        core = results["core"]["kinds"].get(k, {"changes": 0, "units": 0})
        print(f"{k:<18}{cells} {core['changes']:>8} {core['units']:>6}")
    for j, r in results.items():
        print(
            f"{j + ': ' if len(judges) > 1 else ''}fix kept: {_cell(r['fix_kept'])}   "
            f"revert unrequested = gold: {_cell(r['revert_gold'])}"
        )
    languages = sorted({c.language for c in cands})
    if languages != ["python"]:  # the core's table per language
        print(f"\n{'language':<12}{'kind':<18} {'precision':>9} {'recall':>7} {'changes':>8} {'units':>6}")
        for lang in languages:
            r = evaluate([c for c in cands if c.language == lang], "core")
            for k, row in r["kinds"].items():
                print(
                    f"{lang:<12}{k:<18} {_cell(row['precision']):>9} {_cell(row['recall']):>7} {row['changes']:>8} "
                    f"{row['units']:>6}"
                )
            print(
                f"{lang:<12}{r['candidates']} candidates, fix kept: {_cell(r['fix_kept'])}   "
                f"revert unrequested = gold: {_cell(r['revert_gold'])}"
            )
    for j, r in results.items():
        for line in r["misses"][: args.misses]:
            print(f"  {j + ': ' if len(judges) > 1 else ''}{line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
