"""`python -m benchmark.build.overedits make --from codeeditorbench-cpp|codeeditorbench-java|canaicode-js|canaicode-ts`:
the labelled over-edit corpus for the other languages (`lang_sources.py` for the programs,
`lang_transforms.py` for the changes), written as the Python corpus is (`corpus.Candidate`, with its
`language`), so `python -m benchmark.studies.overedits.classify` reads both.

Tests (`--tests`): JavaScript candidates run their can-ai-code question's checks through node in the
sandbox; C++ and Java candidates run their CodeEditorBench task's tests through the suite's judge
(compiled with g++ / javac in the sandbox). A program whose tests belong to another problem (a switch
task's similar solution) and TypeScript (types erased, so the JavaScript run stands for it; there
is no TypeScript compiler here) have none: `tests_passed` stays None for them, and so do the candidates
of a gold the judge rejects itself (a published program that fails its own tests here).

The per-language table (C++ and Java have 10 and 6 programs in the sample set: more candidates each):
    python -m benchmark.build.overedits make --from codeeditorbench-cpp,codeeditorbench-java --per-task 16 --tests --out ceb.jsonl
    python -m benchmark.build.overedits make --from canaicode-js,canaicode-ts --per-task 4 --tests --out cac.jsonl
    cat ceb.jsonl cac.jsonl > lang.jsonl && python -m benchmark.studies.overedits.classify lang.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from pathlib import Path

import msgspec

from benchmark.build.corruptions.choice import Chooser
from benchmark.build.overedits import lang_sources
from benchmark.build.overedits.corpus import Candidate, Change, new_spans
from benchmark.build.overedits.lang_sources import LangPair
from benchmark.build.overedits.lang_transforms import KINDS, TRANSFORMS
from benchmark.build.overedits.transforms import EntryLost, Replacement, stack_changes
from benchmark.datadir import data_dir
from benchmark.suites import codeeditorbench as ceb
from benchmark.suites.canaicode.evaluate import evaluate
from benchmark.suites.canaicode.interview import InterviewQuestion, load_interview
from benchmark.suites.codeeditorbench import Task
from benchmark.suites.codeeditorbench.suite import Judging
from sandbox import Sandbox
from server.fidelity import apply_text_edits, measure
from server.fidelity.lang import Source, by_name, comments, functions, parse, raw_tokens
from server.fidelity.lang.functions import LangFunction

# pairs that could not be told apart: a removed comment next to a placeholder comment just added
_CONFLICTS = (
    frozenset(("comment_removed", "lazy_placeholder")),
    frozenset(("doc_comment_removed", "lazy_placeholder")),
)
_TREE_KINDS = frozenset({"formatting_only", "comment_only", "comment_removed"})


def entry_lines(src: Source, fn: LangFunction) -> tuple[int, int]:
    """1-based first and last line of a function, its doc comment right above included (the
    function's own, as a Python docstring is inside its function)."""
    start = fn.start
    for c in reversed(comments(src)):
        if c.doc and c.end_line in (start - 1, start) and c.end <= fn.start_char:
            start = c.start_line
            break
    return start, fn.end


def function_span(text: str, language: str, qualname: str) -> tuple[int, int]:
    """Character interval of function `qualname` (its doc comment included), whole lines; the whole
    text when it is not there."""
    src = parse(text, by_name(language))
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    for f in functions(src):
        if f.qualname == qualname:
            first, last = entry_lines(src, f)
            return starts[first - 1], starts[min(last, len(starts) - 1)]
    return 0, len(text)


def tokens_equal(a: str, b: str, language: str) -> bool:
    """The same code and comment tokens (what "revert unrequested = gold" compares)."""
    lang = by_name(language)
    return raw_tokens(parse(a, lang)) == raw_tokens(parse(b, lang))


def minimal_gold(pair: LangPair) -> tuple[str, list[tuple[int, int]]]:
    """The gold without its layout and comment changes (a real pair's solution may differ from the
    incorrect one in more than the fix), and the fix's intervals in it."""
    report = measure(pair.original, pair.gold, language=pair.language)
    edits = [e for h in report.hunks if not set(h.kinds) <= _TREE_KINDS for e in h.edits]
    return apply_text_edits(pair.original, edits), new_spans(pair.original, edits, edits)


def _entry(pair: LangPair, gold: str) -> tuple[LangFunction, tuple[int, int]] | None:
    """The innermost named function holding the whole fix, and its original lines [start, stop)."""
    report = measure(pair.original, gold, language=pair.language)
    lines = [ln for h in report.hunks for ln in (h.start_line, h.end_line)]
    src = parse(pair.original, by_name(pair.language))
    holding = [
        f for f in functions(src) if f.kind != "lambda" and lines and all(f.start <= ln <= f.end for ln in lines)
    ]
    if not holding:
        return None
    fn = max(holding, key=lambda f: f.depth)
    if [f.qualname for f in functions(src)].count(fn.qualname) > 1:
        return None  # an overload: the entry's name would not say which
    first, last = entry_lines(src, fn)
    return fn, (first, last + 1)


def candidates_for(pair: LangPair, source: str, seed: int, per_task: int) -> list[Candidate]:
    lang = by_name(pair.language)
    if parse(pair.original, lang).errors or parse(pair.gold, lang).errors:
        return []
    gold, fix = minimal_gold(pair)
    found = _entry(pair, gold)
    if found is None or not fix:
        return []
    entry, target = found
    if any(h.unrequested for h in measure(pair.original, gold, target=range(*target), language=pair.language).hunks):
        return []  # the gold edit is itself more than a plain logic change
    whole_file = target[0] == 1 and target[1] >= pair.original.count("\n") + 2
    families = [f for f in sorted(TRANSFORMS) if not (whole_file and f == "outside_target")]
    out: list[Candidate] = []

    def propose(family: str, text: str, ch: Chooser) -> list[Replacement] | None:
        src = parse(text, lang)
        fn = next((f for f in functions(src) if f.qualname == entry.qualname), None)
        if fn is None:
            raise EntryLost
        return TRANSFORMS[family](text, src, fn, ch)

    for n in range(per_task):
        ch = Chooser(seed, f"{source}/{pair.task_id}/{n}")
        # touching the fix counts as on it: `2` -> `1)` would merge into one token run
        text, fix_spans, changes = stack_changes(
            gold, fix, families, ch, propose, lambda t: not parse(t, lang).errors, _CONFLICTS, touching_fix=True
        )
        if not changes:
            continue
        out.append(
            Candidate(
                id=f"{source}/{pair.task_id}#{n}",
                task_id=pair.task_id,
                source=source,
                original=pair.original,
                gold=gold,
                candidate=text,
                tests=pair.tests,
                test_kind=pair.test_kind,
                env=None,
                target=target,
                entry=entry.qualname,
                fix_spans=fix_spans,
                instruction=pair.instruction,
                language=pair.language,
                changes=[Change(f, list(KINDS[f]), list(s)) for f, s in changes],
            )
        )
    return out


# ------------------------------------------------------------------ tests (optional, cached)


def _key(c: Candidate) -> str:
    return hashlib.sha256(json.dumps([c.language, c.candidate, c.tests, c.test_kind]).encode()).hexdigest()


class _Runner:
    """Runs one candidate's tests: can-ai-code checks (JavaScript) or the CodeEditorBench judge."""

    def __init__(self, data: str | None, box: Sandbox) -> None:
        self.data, self.box = data, box
        self._questions: dict[str, InterviewQuestion] | None = None
        self._tasks: dict[str, Task] | None = None
        self._suite: Judging | None = None

    async def passed(self, c: Candidate) -> bool | None:
        spec = json.loads(c.tests)
        if c.test_kind == "canaicode":
            if self._questions is None:
                root = data_dir(self.data) / "canaicode"
                self._questions = {q.task_id: q for i in ("junior-v2", "senior") for q in load_interview(root, i)}
            q = self._questions.get(spec["question"])
            if q is None:
                return None
            ev = await evaluate(q, "javascript", c.candidate, self.box)
            if ev.sandbox_error:
                raise SystemExit(f"error: the sandbox could not run the checks: {ev.sandbox_error}")
            return ev.status == "PASS"
        if c.test_kind == "codeeditorbench":
            if self._tasks is None or self._suite is None:
                self._tasks = {t.task_id: t for t in ceb.load(self.data)}
                self._suite = Judging(opt_repeats=1)
            task = self._tasks.get(spec["task"])
            if task is None or (task.kind == "switch" and spec["program"] == "before"):
                return None  # the similar problem's solution: the task's tests are another problem's
            # judged as a debug answer in the candidate's language: the same problem and tests, no OptScore runs
            task = msgspec.structs.replace(task, kind="debug", answer_language=c.language)
            verdict = await self._suite._judge(self.box, task, c.candidate)
            if verdict.exec_status == "judge_error":
                raise SystemExit(f"error: the judge failed on {c.id}: {verdict.sandbox_error}")
            return verdict.passed
        return None


async def run_tests(cands: list[Candidate], cache_path: Path, data: str | None, workers: int) -> list[Candidate]:
    cache: dict[str, bool | None] = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    box = Sandbox(workers=workers)
    runner = _Runner(data, box)
    gate = asyncio.Semaphore(workers)
    try:

        async def run(c: Candidate) -> bool | None:
            key = _key(c)
            if key not in cache:
                async with gate:
                    cache[key] = await runner.passed(c)
            return cache[key]

        async def one(c: Candidate) -> Candidate:
            # a gold that fails its own tests here (a published program the judge rejects) says
            # nothing about its candidates: they stay unjudged
            gold = await run(msgspec.structs.replace(c, candidate=c.gold))
            return msgspec.structs.replace(c, tests_passed=None if not gold else await run(c))

        done = await asyncio.gather(*(one(c) for c in cands))
    finally:
        box.close()
        cache_path.write_text(json.dumps(cache))
    return list(done)


def main(args: argparse.Namespace) -> int:
    """The `make` command for a `lang_sources.SOURCES` source (arguments parsed by `make.main`)."""
    unknown = [s for s in args.source.split(",") if s not in lang_sources.SOURCES]
    if unknown:
        print(
            f"error: unknown source {', '.join(map(repr, unknown))} next to the other languages' sources: "
            f"choose from {', '.join(lang_sources.SOURCES)}",
            file=sys.stderr,
        )
        return 2
    cands: list[Candidate] = []
    pairs: list[LangPair] = []
    for source in args.source.split(","):  # several sources: one corpus
        try:
            got = lang_sources.load(source, args.data, args.limit, args.seed)
        except Exception as exc:  # noqa: BLE001 - a data problem is one line, not a traceback
            print(f"error: cannot load {source!r}: {exc}", file=sys.stderr)
            return 2
        pairs += got
        cands += [c for p in got for c in candidates_for(p, source, args.seed, args.per_task)]
    print(
        f"{len({(c.source, c.task_id) for c in cands})} of {len(pairs)} programs give candidates (the others: a gold edit "
        "the core flags on its own, no named function around the fix)",
        file=sys.stderr,
    )
    if args.tests:
        cands = asyncio.run(run_tests(cands, args.out.with_suffix(".testcache.json"), args.data, args.workers))
        ran = [c for c in cands if c.tests_passed is not None]
        print(
            f"{sum(bool(c.tests_passed) for c in ran)} of {len(ran)} candidates with tests pass them "
            f"({len(cands) - len(ran)} have none here or a gold that fails them, kept unjudged)",
            file=sys.stderr,
        )
        cands = [c for c in cands if c.tests_passed is not False]
    args.out.write_bytes(b"".join(msgspec.json.encode(c) + b"\n" for c in cands))
    print(f"wrote {len(cands)} candidates from {len(pairs)} programs to {args.out}", file=sys.stderr)
    return 0
