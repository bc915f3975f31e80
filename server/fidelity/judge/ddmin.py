"""Which change units of an edit the tests need: delta debugging over units, and the reference-free excess.

In the editor there is no gold patch, so "excess over the smallest edit that does the job" needs an
estimate: the smallest sub-edit (a subset of the edit's units) that still passes a check (a test
command, a suite's hidden tests). It is found with Zeller and Hildebrandt's ddmin over unit indices;
the result is 1-minimal: leaving out any single remaining unit fails the check.

- D_min = d(minimal passing sub-edit, original), in the core's distance variants;
- reference-free excess = d(edit, original) - D_min (normalised, like the gold-based `excess`).

The check is injected (sync or async: `check(kept_units) -> True | False | None`, None meaning the
check could not run), so this module does no I/O. Each subset runs at most once (results are cached
per subset), at most `max_runs` checks run per analysis, and the candidates of one ddmin step are
probed `parallel` at a time in ddmin's own order, taking the first that passes: the result is the one
sequential ddmin finds, whatever the timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable, Generator, Sequence

import msgspec

from server.fidelity.metrics.distance import distances
from server.fidelity.text.analysis import analyze
from server.fidelity.text.textedits import apply_text_edits
from server.fidelity.units.classifier import build_units
from server.protocol.report import Distance, TextEdit

Outcome = bool | None  # True: passes; False: fails; None: unresolved (the check itself could not run)
Check = Callable[[frozenset[int]], Outcome | Awaitable[Outcome]]
OnProbe = Callable[["Probe", int, int], None]  # (probe, runs so far, max runs)

# status: minimal  - `needed` is 1-minimal (every unit in it is needed given the others)
#         budget   - the run budget ended the search: `needed` passes but may not be minimal
#         full_fails - the whole edit fails the check: nothing to conclude
#         unresolved - the check could not run on the whole edit (say, the sandbox failed)
#         no_hunks - the edit changes nothing
STATUSES = ("minimal", "budget", "full_fails", "unresolved", "no_hunks")


class Probe(msgspec.Struct, frozen=True):
    hunks: list[int]  # the units kept in this run (the others left out)
    passed: bool | None


class NecessityResult(msgspec.Struct, frozen=True):
    status: str
    hunks: int  # number of units in the edit
    needed: list[int]  # the smallest passing subset found; every unit when nothing passes
    unnecessary: list[int]  # the units the check passes without (all of them left out at once)
    runs: int  # checks run (cache hits not counted)
    max_runs: int
    cache_hits: int
    unresolved: int  # runs whose check could not run (counted as not passing)
    one_minimal: bool
    probes: list[Probe]  # every run, in the order started


class ExcessEstimate(msgspec.Struct, frozen=True):
    distance: dict[str, Distance]  # d(edit, original) per variant
    d_min: dict[str, Distance]  # d(minimal passing sub-edit, original)
    excess: dict[str, float]  # distance - d_min, normalised


def edits_by_unit(original: str, edited: str) -> list[list[TextEdit]]:
    """The edit's change units, each as its own minimal text edits: `[h.edits for h in measure(...).hunks]`.

    ddmin runs over these units: a rename is one unit over all its occurrences, and a fix and an
    unrequested change on one line are two, so leaving one out never takes the other with it."""
    if original == edited:
        return []
    return [edits for _, edits in build_units(analyze(original), analyze(edited), None)]


def sub_edit(
    original: str, edits: Sequence[TextEdit | Sequence[TextEdit]], keep: frozenset[int] | Sequence[int]
) -> str:
    """The original with only the units in `keep` applied (a unit: one text edit or a list of them)."""
    chosen: list[TextEdit] = []
    for i in sorted(keep):
        unit = edits[i]
        if isinstance(unit, TextEdit):
            chosen.append(unit)
        else:
            chosen.extend(unit)
    return apply_text_edits(original, chosen)


def reference_free_excess(original: str, edited: str, minimal: str) -> ExcessEstimate:
    """d(edited, original) - d(minimal, original) in every variant (normalised). The whole edit passes
    too, so where the sub-edit is farther from the original than the edit itself (a normaliser of another
    length, a statement left as `pass`) the edit is the smallest and the excess is 0, never negative."""
    full, reduced = distances(original, edited), distances(original, minimal)
    least = {v: min(full[v], reduced[v], key=lambda d: d.normalized) for v in full}
    return ExcessEstimate(
        distance=full, d_min=least, excess={v: full[v].normalized - least[v].normalized for v in full}
    )


def _split(items: list[int], n: int) -> list[list[int]]:
    return [items[len(items) * i // n : len(items) * (i + 1) // n] for i in range(n)]


def _ddmin_steps(hunks: list[int]) -> Generator[list[frozenset[int]], int | None, None]:
    """ddmin as a sequence of steps: each yields the candidates to try in ddmin's order (subsets,
    then complements) and receives the index of the first that passes, or None."""
    current, n = hunks, 2
    while len(current) >= 2:
        parts = _split(current, n)
        candidates = [frozenset(p) for p in parts]
        if n > 2:  # with two parts the complements are the parts again
            whole = frozenset(current)
            candidates += [whole - frozenset(p) for p in parts]
        hit = yield candidates
        if hit is not None:
            current = sorted(candidates[hit])
            n = 2 if hit < len(parts) else max(n - 1, 2)
        elif n >= len(current):
            return
        else:
            n = min(len(current), 2 * n)


class _BudgetSpent(Exception):
    pass


class _Search:
    """The search as a generator of batches to run; the drivers run them (sync or async)."""

    def __init__(
        self,
        n_units: int,
        max_runs: int,
        parallel: int,
        known: dict[frozenset[int], Outcome] | None,
        on_probe: OnProbe | None,
    ) -> None:
        if n_units < 0:
            raise ValueError(f"n_units must be >= 0, got {n_units}")
        if max_runs < 1:
            raise ValueError(f"max_runs must be >= 1, got {max_runs}")
        if parallel < 1:
            raise ValueError(f"parallel must be >= 1, got {parallel}")
        self.n, self.max_runs, self.parallel = n_units, max_runs, parallel
        self.cache: dict[frozenset[int], Outcome] = dict(known or {})
        self.on_probe = on_probe
        self.runs = self.hits = self.unresolved = 0
        self.probes: list[Probe] = []

    def _record(self, subsets: list[frozenset[int]], outcomes: Sequence[Outcome]) -> None:
        if len(outcomes) != len(subsets):
            raise ValueError(f"expected {len(subsets)} outcomes, got {len(outcomes)}")
        for subset, outcome in zip(subsets, outcomes, strict=True):
            passed = None if outcome is None else bool(outcome)
            self.cache[subset] = passed
            self.runs += 1
            self.unresolved += passed is None
            probe = Probe(hunks=sorted(subset), passed=passed)
            self.probes.append(probe)
            if self.on_probe is not None:
                self.on_probe(probe, self.runs, self.max_runs)

    def _first_pass(
        self, candidates: list[frozenset[int]]
    ) -> Generator[list[frozenset[int]], list[Outcome], int | None]:
        """Probe `candidates` in order, `parallel` at a time; the index of the first that passes."""
        for start in range(0, len(candidates), self.parallel):
            batch = candidates[start : start + self.parallel]
            todo = [s for s in dict.fromkeys(batch) if s not in self.cache]
            self.hits += len(batch) - len(todo)
            todo = todo[: self.max_runs - self.runs]
            if todo:
                self._record(todo, (yield todo))
            for i, subset in enumerate(batch):
                if subset not in self.cache:  # no budget left to run it: the search ends here
                    raise _BudgetSpent
                if self.cache[subset]:
                    return start + i
        return None

    def steps(self) -> Generator[list[frozenset[int]], list[Outcome], NecessityResult]:
        full, empty = frozenset(range(self.n)), frozenset[int]()
        if self.n == 0:
            return self._result("no_hunks", [])
        first = [full, empty] if self.parallel > 1 else [full]
        with contextlib.suppress(_BudgetSpent):
            yield from self._first_pass(first)  # result read from the cache below
        if self.cache.get(full) is None:
            return self._result("unresolved" if full in self.cache else "budget", sorted(full))
        if not self.cache[full]:
            return self._result("full_fails", sorted(full))
        current = sorted(full)
        try:
            if empty not in self.cache:
                yield from self._first_pass([empty])
            if self.cache[empty]:
                return self._result("minimal", [])
            ddmin = _ddmin_steps(current)
            candidates = next(ddmin)
            while True:
                hit = yield from self._first_pass(candidates)
                if hit is not None:
                    current = sorted(candidates[hit])
                candidates = ddmin.send(hit)
        except StopIteration:
            return self._result("minimal", current)
        except _BudgetSpent:
            return self._result("budget", current)

    def _result(self, status: str, needed: list[int]) -> NecessityResult:
        conclusive = status in ("minimal", "budget")
        kept = set(needed)
        return NecessityResult(
            status=status,
            hunks=self.n,
            needed=needed,
            unnecessary=[i for i in range(self.n) if i not in kept] if conclusive else [],
            runs=self.runs,
            max_runs=self.max_runs,
            cache_hits=self.hits,
            unresolved=self.unresolved,
            # a run that could not run proves nothing: with one, "needed" is not shown to be minimal
            one_minimal=status == "minimal" and self.unresolved == 0,
            probes=self.probes,
        )


def find_needed_units_sync(
    n_units: int,
    check: Callable[[frozenset[int]], Outcome],
    *,
    max_runs: int = 64,
    parallel: int = 1,
    known: dict[frozenset[int], Outcome] | None = None,
    on_probe: OnProbe | None = None,
) -> NecessityResult:
    """`find_needed_units` with a synchronous check, called one subset at a time."""
    steps = _Search(n_units, max_runs, parallel, known, on_probe).steps()
    outcomes: list[Outcome] | None = None
    while True:
        try:
            batch = steps.send(outcomes)  # type: ignore[arg-type]  # the first send must be None
        except StopIteration as done:
            return done.value
        outcomes = [check(s) for s in batch]


async def _call(check: Check, subset: frozenset[int]) -> Outcome:
    outcome = check(subset)
    if inspect.isawaitable(outcome):
        outcome = await outcome
    return outcome


async def find_needed_units(
    n_units: int,
    check: Check,
    *,
    max_runs: int = 64,
    parallel: int = 4,
    known: dict[frozenset[int], Outcome] | None = None,
    on_probe: OnProbe | None = None,
) -> NecessityResult:
    """A smallest subset of units `0..n_units-1` that passes `check`, by ddmin.

    The whole edit and the empty edit (the original) are probed first: a whole edit that fails ends the
    analysis (`full_fails`); an original that passes needs no unit at all. `known` seeds the cache
    (say, the whole edit's verdict from an earlier run). Cancelling the returned coroutine cancels the
    checks in flight.
    """
    steps = _Search(n_units, max_runs, parallel, known, on_probe).steps()
    outcomes: list[Outcome] | None = None
    while True:
        try:
            batch = steps.send(outcomes)  # type: ignore[arg-type]
        except StopIteration as done:
            return done.value
        tasks = [asyncio.ensure_future(_call(check, s)) for s in batch]
        try:
            outcomes = list(await asyncio.gather(*tasks))
        finally:
            for t in tasks:
                t.cancel()
