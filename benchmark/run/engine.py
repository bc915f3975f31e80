"""The replay engine: every (task, condition, sample) goes through the real language server
(`editFidelity.requestEdit`), its edits are applied to the document as an editor would, the result
runs in the sandbox, and one `SampleRecord` is appended as soon as it is complete.

One sample's failure is one record, never the end of the run: a backend failure is `backend_error` /
`no_code` (as the server reports it), a failure of the server itself (an internal error, the process
exiting or hanging: `ServerError`) is `server_error` (the server is restarted by `LocalSessions`), a
failure of the sandbox or the judge is `sandbox_error`. Samples that ended in a retryable error run once
more at the end of the run (`retries`). The run ends early only on what no sample can survive
(`RunAborted`: the model endpoint gone for good, a results file that cannot be written;
`ServerUnavailable`: no language server can be started), in one line, with every record kept.

Timing-sensitive tasks (`Suite.timing_sensitive`) are judged alone (no other program of the run beside
them) until two runs agree, at most three, and the majority counts; the votes are stored, so a split vote
reaches the report as a flaky verdict. Whether to run again depends on this run's runs only.

Concurrency: at most `concurrency` requests in flight towards the server/backend; sandbox runs go to
the sandbox's own worker pool (`workers` slots, one uid each) and overlap with the requests.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import msgspec

from benchmark.run import preflight
from benchmark.run.answer_sources import Backend
from benchmark.run.local_sessions import Asker, LocalSessions, Sessions
from benchmark.run.records import RunConfig, SampleRecord, is_error, unit_views
from benchmark.run.reference_free import reference_free_metrics
from benchmark.run.session import ServerError
from benchmark.run.store import ResultsStore, retryable
from benchmark.suite import Answer, Suite, Task, Verdict
from sandbox.singleflight import SingleFlight
from server.fidelity.judge.flags import WARNING, is_warning, split_flags
from server.protocol.commands import ProposalRecord

logger = logging.getLogger(__name__)

# the endpoint is asked whether it is still there after this many connection failures in a row, up to
# `ENDPOINT_PROBES` times this far apart (a server that restarts in that time keeps the run going)
ENDPOINT_FAILURES = 16
ENDPOINT_PROBES = 4
ENDPOINT_PROBE_S = 15.0


class RunAborted(Exception):
    """What no sample can survive (the model endpoint gone for good, a results file that cannot be written):
    the run ends in one line, the records kept so far stay, and `--resume` goes on from them."""


@dataclass(frozen=True)
class Job:
    """One request: a (task, condition) and the samples it answers (several with the endpoint's `n`)."""

    task: Task
    condition: str
    samples: tuple[int, ...]

    @property
    def sample(self) -> int:
        return self.samples[0]


@dataclass
class Progress:
    total: int
    done: int = 0
    passed: int = 0
    errors: int = 0  # samples whose latest record is an error (a retry that succeeds takes one off)
    started: float = field(default_factory=time.monotonic)
    on_update: Callable[[Progress], None] | None = None
    input_kinds: frozenset[str] = frozenset()

    def add(self, rec: SampleRecord, *, retried: bool = False) -> None:
        self.done += 1
        self.passed += rec.passed
        self.errors += is_error(rec, self.input_kinds) - retried
        self.update()

    def update(self) -> None:
        if self.on_update:
            self.on_update(self)


class Gate:
    """Ordinary judgements share the sandbox; a timing-sensitive re-run has it alone (writer first)."""

    def __init__(self) -> None:
        self._cond = asyncio.Condition()
        self._readers = 0
        self._writer = False
        self._waiting = 0

    @asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        async with self._cond:
            await self._cond.wait_for(lambda: not self._writer and not self._waiting)
            self._readers += 1
        try:
            yield
        finally:
            async with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        async with self._cond:
            self._waiting += 1
            try:
                await self._cond.wait_for(lambda: not self._writer and self._readers == 0)
            finally:
                self._waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            async with self._cond:
                self._writer = False
                self._cond.notify_all()


def plan(
    suite: Suite,
    tasks: Sequence[Task],
    conditions: list[str],
    samples: int,
    backend_name: str,
    done: set[tuple],
    *,
    per_request: int = 1,
) -> list[Job]:
    """The jobs for the samples not yet done; up to `per_request` samples of one prompt share a request."""
    jobs = []
    for t in tasks:
        for c in suite.dataset.task_conditions(t, conditions):
            todo = [s for s in range(samples) if (t.task_id, c, backend_name, s) not in done]
            for i in range(0, len(todo), max(per_request, 1)):
                jobs.append(Job(t, c, tuple(todo[i : i + max(per_request, 1)])))
    return jobs


def flag_counts(proposal: ProposalRecord) -> tuple[int, int | None, int | None]:
    """(flagged units, of them at warning severity, at hint severity) as the server judged them: its
    `flaggedHunks` and `hunkSeverities`, and each of its `flaggedStatements` (an unrequested statement
    inside a unit that holds a requested change) as a unit of its own (None, None without a report, an answer
    that is not an edit, or without severities: an older server's answer)."""
    flagged = set(proposal.flagged_hunks)
    statements = [s.severity for s in proposal.flagged_statements]
    severities = proposal.hunk_severities
    if proposal.report is None or not severities and flagged:
        return len(flagged) + len(statements), None, None
    warn, hint = split_flags(
        [*(i in flagged for i in range(len(severities))), *(True for _ in statements)], [*severities, *statements]
    )
    return len(flagged) + len(statements), warn, hint


def flag_kinds(proposal: ProposalRecord) -> dict[str, int] | None:
    """Flagged units at warning severity per unrequested kind, as the server judged them: each flagged hunk
    under the kinds of its `hunkUnrequested`, each of its `flaggedStatements` under its own kinds (a unit of
    two kinds counts under both); None without a report (an answer that is not an edit) or without
    `hunkUnrequested` beside the severities (an older server's answer)."""
    kinds, severities = proposal.hunk_unrequested, proposal.hunk_severities
    if proposal.report is None or len(kinds) < len(severities):
        return None
    out: Counter[str] = Counter()
    for i in set(proposal.flagged_hunks):
        if i < len(kinds) and is_warning(severities[i] if i < len(severities) else WARNING):
            out.update(set(kinds[i]))
    for s in proposal.flagged_statements:
        if is_warning(s.severity):
            out.update(set(s.kinds))
    return dict(sorted(out.items()))


def score(suite_name: str, job: Job, sample: int, answer: Answer, backend_name: str) -> SampleRecord:
    """The record of a proposal before the sandbox: the completion and the fidelity numbers, read from
    the server's report (measured against the gold edit sent along with the request: nothing here
    re-measures)."""
    t, proposal = job.task, answer.proposal
    rec = SampleRecord(
        suite=suite_name,
        task_id=t.task_id,
        task=t.name,
        condition=job.condition,
        backend=backend_name,
        sample=sample,
        outcome="fail",
    )
    if proposal.status != "ok":
        kind = proposal.error_kind
        # "internal": the server's own code failed on this request (a bug or a crash in it), not the backend
        rec.outcome = (
            "no_code" if kind in ("no_code", "empty") else "server_error" if kind == "internal" else "backend_error"
        )
        rec.error = (proposal.error or "")[:500]
        rec.error_kind = proposal.error_kind
        return rec
    rec.completion = answer.completion
    report = proposal.report
    if report is not None:
        dist = report.distance.get("no_comments")
        if dist is not None:
            rec.distance, rec.distance_tokens = dist.normalized, dist.tokens
        rec.excess_lev = (report.excess or {}).get("no_comments")
        paper = report.complexity.get("paper")
        gold = (report.gold_complexity or {}).get("paper")
        if paper is not None:
            rec.cc_delta = paper.delta
            if paper.after is not None and gold is not None and gold.after is not None:
                rec.added_cc = paper.after - gold.after
        rec.hunks = len(report.hunks)
        rec.identical = report.identical
    rec.flagged_hunks, rec.flagged_warning, rec.flagged_hint = flag_counts(proposal)
    rec.flagged_warning_kinds = flag_kinds(proposal)
    rec.units = unit_views(proposal)  # what the report's sample browser shows
    return rec


class Engine:
    def __init__(
        self,
        config: RunConfig,
        suite: Suite,
        tasks: Sequence[Task],
        backend: Backend,
        store: ResultsStore,
        box: Any,
        *,
        concurrency: int = 8,
        progress: Callable[[Progress], None] | None = None,
        server_command: list[str] | None = None,
        necessity_runs: int = 0,
        retries: int = 1,
    ) -> None:
        self.config = config
        self.suite = suite
        self.tasks = tasks
        self.backend = backend
        self.store = store
        self.box = box
        self.concurrency = concurrency
        self.on_progress = progress
        self.server_command = server_command
        # > 0: for each passing completion, which hunks its tests need (at most this many test runs)
        self.necessity_runs = necessity_runs if suite.necessity else 0
        self.timings = {"server_s": 0.0, "sandbox_s": 0.0, "scoring_s": 0.0}
        # identical programs of a task run once per run (recorded runs repeat many completions)
        self._verdicts: SingleFlight[tuple[str, str, str], Verdict] = SingleFlight(keep=True)
        self._gate = Gate()
        self.retries = retries  # passes over the samples that ended in a retryable error
        self.reused = 0
        self._refused = 0  # connection failures of the backend in a row (`_watch_endpoint`)
        self.endpoint_failures = ENDPOINT_FAILURES
        self.endpoint_probes = ENDPOINT_PROBES
        self.endpoint_probe_s = ENDPOINT_PROBE_S
        # where a program is judged: the suite's judge on this machine's sandbox, or (--ray) a cluster's
        # task with the same inputs and the same Verdict back; likewise the necessity analysis' sub-edits
        self.judge: Callable[[Task, str, str], Awaitable[Verdict]] = self._local_judge
        self.passes: Callable[[Task, str, str], Awaitable[bool | None]] = self._local_passes
        # where requests go (--ray-sessions: language servers on the cluster's nodes), and the address the
        # backend's own endpoints listen on (those servers must reach it)
        self.sessions: Sessions = LocalSessions(suite, server_command)
        self.serve_host = "127.0.0.1"

    async def run(self) -> Progress:
        per_request = self.backend.samples_per_request(self.config.samples)
        jobs = plan(
            self.suite,
            self.tasks,
            self.config.conditions,
            self.config.samples,
            self.config.backend,
            self.store.done,
            per_request=per_request,
        )
        progress = Progress(
            total=sum(len(j.samples) for j in jobs),
            on_update=self.on_progress,
            input_kinds=self.suite.input_error_kinds,
        )
        progress.update()
        if not jobs:
            return progress
        log = self.store.run_dir / "server.log"
        with self.backend.serving(
            self.config.samples, self.concurrency, self.config.style, host=self.serve_host
        ) as backends:
            async with self.sessions(backends, log) as session:
                await self._passes(session, jobs, progress)
        return progress

    async def _passes(self, session: Asker, jobs: list[Job], progress: Progress) -> None:
        """The planned jobs, then up to `retries` passes over the samples of this run that ended in a
        retryable error (a backend that dropped a request, a sandbox hiccup on a loaded machine)."""
        await self._all(session, jobs, progress)
        planned = {(j.task.task_id, j.condition, s) for j in jobs for s in j.samples}
        by_id = {t.task_id: t for t in self.tasks}
        for _ in range(self.retries):
            failed = [r for r in self.store.records if retryable(r) and (r.task_id, r.condition, r.sample) in planned]
            if not failed:
                return
            self.store.retry(r.key for r in failed)
            for r in failed:  # a verdict cached for an identical program must not answer the retry
                self._verdicts.forget(self._key(by_id[r.task_id], r.condition, r.completion or ""))
            groups: dict[tuple[str, str], list[int]] = {}
            for r in failed:
                groups.setdefault((r.task_id, r.condition), []).append(r.sample)
            again = [Job(by_id[tid], cond, tuple(sorted(samples))) for (tid, cond), samples in groups.items()]
            progress.total += len(failed)
            await self._all(session, again, progress, retried=True)

    async def _all(self, session: Asker, jobs: list[Job], progress: Progress, *, retried: bool = False) -> None:
        sem = asyncio.Semaphore(self.concurrency)
        tasks = [asyncio.create_task(self._one(session, sem, job)) for job in jobs]
        try:
            for fut in asyncio.as_completed(tasks):
                for rec in await fut:
                    self._store(rec)
                    progress.add(rec, retried=retried)
                    await self._watch_endpoint(rec)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _store(self, rec: SampleRecord) -> None:
        try:
            self.store.append(rec)
        except OSError as exc:  # the disk is full (or gone): no later sample can be kept either
            raise RunAborted(f"cannot write {self.store.path}: {exc.strerror or exc} (free some space)") from None

    async def _watch_endpoint(self, rec: SampleRecord) -> None:
        """Many connection failures in a row: ask the endpoint itself; one that stays silent through
        `ENDPOINT_PROBES` probes is gone for good, which no sample can survive (the run ends)."""
        if rec.outcome != "backend_error" or rec.error_kind != "connection":
            self._refused = 0
            return
        self._refused += 1
        if self._refused < self.endpoint_failures:
            return
        for probe in range(self.endpoint_probes):
            try:
                await asyncio.to_thread(preflight.check_backend, self.backend)
                self._refused = 0
                return
            except preflight.PreflightError as exc:
                if probe == self.endpoint_probes - 1:
                    raise RunAborted(f"the model endpoint is gone: {exc}") from None
                await asyncio.sleep(self.endpoint_probe_s)

    def _key(self, task: Task, condition: str, completion: str) -> tuple[str, str, str]:
        return (task.task_id, condition if self.suite.judge_by_condition else "", completion)

    async def _judge(self, task: Task, condition: str, completion: str) -> tuple[Verdict, bool]:
        key = self._key(task, condition, completion)
        reused = key in self._verdicts
        self.reused += reused
        judged = self._voted if self.suite.scorer.timing_sensitive(task) else self._shared_judged
        return await self._verdicts.run(key, lambda: judged(task, condition, completion)), reused

    async def _shared_judged(self, task: Task, condition: str, completion: str) -> Verdict:
        async with self._gate.shared():
            return await self._judged(task, condition, completion)

    async def _voted(self, task: Task, condition: str, completion: str) -> Verdict:
        """A timing-sensitive task's verdict: judged alone (no other program of the run beside it) until two
        runs agree, at most three, and the majority counts, with every vote kept. The rule looks at this
        run's own runs only, never at a recorded verdict, so agreement with a recorded run is not flattered."""
        runs: list[Verdict] = []
        while len(runs) < 3 and not (len(runs) == 2 and runs[0].passed == runs[1].passed):
            async with self._gate.exclusive():
                v = await self._judged(task, condition, completion)
            if v.sandbox_error is not None and not v.passed:
                if not runs:
                    return v  # the sandbox failed: an error of this sample, not a vote
                break
            runs.append(v)
        votes = [r.passed for r in runs]
        passed = sum(votes) * 2 > len(votes) if len(votes) % 2 else runs[-1].passed  # a tie: the last run
        if len(set(votes)) > 1:
            logger.warning("flaky verdict of %s (%s): votes %s", task.task_id, condition, votes)
        return msgspec.structs.replace(next(r for r in runs if r.passed == passed), votes=votes)

    async def _judged(self, task: Task, condition: str, completion: str) -> Verdict:
        """The suite's verdict; a judge that fails is a sandbox error of this sample (retried on --resume),
        not the end of the run."""
        try:
            return await self.judge(task, condition, completion)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.exception("judging %s (%s)", task.task_id, condition)
            return Verdict(
                passed=False, exec_status="error", sandbox_error=f"judge failed: {type(exc).__name__}: {exc}"[:500]
            )

    async def _local_judge(self, task: Task, condition: str, completion: str) -> Verdict:
        return await self.suite.scorer.judge(self.box, task, condition, completion)

    async def _local_passes(self, task: Task, condition: str, text: str) -> bool | None:
        return await self.suite.scorer.passes(self.box, task, condition, text)

    async def _necessity(self, task: Task, condition: str, completion: str) -> dict[str, Any]:
        """The reference-free excess of a passing completion: ddmin over its hunks against the tests."""
        t0 = time.perf_counter()

        async def passes(text: str) -> bool | None:
            async with self._gate.shared():
                return await self.passes(task, condition, text)

        try:
            return await reference_free_metrics(
                task.before, completion, passes, max_runs=self.necessity_runs, parallel=2, full_passed=True
            )
        except Exception as exc:  # noqa: BLE001  # the analysis is an extra: its failure costs its numbers only
            logger.warning("necessity analysis of %s: %s", task.task_id, exc)
            return {"necessity_status": "error", "necessity_error": str(exc)[:300]}
        finally:
            self.timings["necessity_s"] = self.timings.get("necessity_s", 0.0) + time.perf_counter() - t0

    def _completion_metrics(self, job: Job, completion: str) -> dict[str, Any]:
        try:
            return self.suite.scorer.completion_metrics(job.task, job.condition, completion)
        except Exception as exc:  # noqa: BLE001  # an extra: its failure costs its numbers only, not the sample
            logger.warning("completion metrics of %s: %s", job.task.task_id, exc)
            return {"completion_metrics_error": f"{type(exc).__name__}: {exc}"[:300]}

    def _record(self, job: Job, **fields: Any) -> SampleRecord:
        t = job.task
        fields.setdefault("sample", job.sample)
        return SampleRecord(
            suite=self.suite.name,
            task_id=t.task_id,
            task=t.name,
            condition=job.condition,
            backend=self.config.backend,
            **fields,
        )

    async def _one(self, session: Asker, sem: asyncio.Semaphore, job: Job) -> list[SampleRecord]:
        t = job.task
        slot = self.backend.slot(job.sample)
        style = self.suite.styles.get(job.condition)
        async with sem:
            with self.backend.staged(self.suite, t, job.condition, job.sample) as ready:
                if not ready:
                    return [
                        self._record(
                            job,
                            outcome="backend_error",
                            error_kind="missing",
                            error="the recorded run has no completion for this sample",
                        )
                    ]
                t0 = time.perf_counter()
                try:
                    got = await session.ask(
                        t,
                        job.condition,
                        slot,
                        style=style,
                        n=len(job.samples),
                        name=f"{t.task_id}-{job.condition}-{job.sample}".replace("/", "_"),
                    )
                except ServerError as exc:  # the server failed these samples (not the backend): their records
                    logger.warning("%s (%s): %s", t.task_id, job.condition, exc)
                    error = " ".join(str(exc).split())[:500]
                    return [
                        self._record(job, sample=s, outcome="server_error", error_kind=exc.kind, error=error)
                        for s in job.samples
                    ]
                server_s = time.perf_counter() - t0
        answers = got if isinstance(got, list) else [got]
        if len(answers) == 1 and len(job.samples) > 1:  # one error for the whole request: every sample has it
            answers = answers * len(job.samples)
        recs = await asyncio.gather(
            *(
                self._finish(job, sample, answer, server_s / len(job.samples))
                for sample, answer in zip(job.samples, answers, strict=True)
            )
        )
        return list(recs)

    async def _finish(self, job: Job, sample: int, answer: Answer, server_s: float) -> SampleRecord:
        t = job.task
        t0 = time.perf_counter()
        rec = score(self.suite.name, job, sample, answer, self.config.backend)
        report = answer.proposal.report
        if rec.completion is not None and report is not None:
            rec.metrics = {
                **rec.metrics,
                **self.suite.scorer.report_metrics(t, report),
            }  # e.g. overedit's gold distances
        if rec.completion is not None:  # e.g. overedit's normalised flags
            rec.metrics = {**rec.metrics, **await asyncio.to_thread(self._completion_metrics, job, rec.completion)}
        scoring_s = time.perf_counter() - t0
        rec.server_ms = server_s * 1000.0
        if (recorded := self.backend.recorded_verdict(t.task_id, job.condition, sample)) is not None:
            rec.recorded_pass, missing = recorded
            if missing is not None:
                rec.recorded_missing = missing
        if rec.completion is not None:
            v, reused = await self._judge(t, job.condition, rec.completion)
            v.fill(rec)
            rec.votes = v.votes
            rec.sandbox_ms, rec.reused_verdict = (0.0 if reused else v.sandbox_ms), reused
            if v.sandbox_error is not None and not v.passed:
                rec.outcome, rec.error, rec.error_kind = "sandbox_error", v.sandbox_error, v.error_kind
            elif v.sandbox_error is not None:  # passed, but a follow-up run (coverage) failed
                rec.outcome, rec.error, rec.error_kind = "pass", v.sandbox_error, v.error_kind
            else:
                rec.outcome = "pass" if v.passed else "fail"
            if self.necessity_runs and rec.passed:
                rec.metrics = {**rec.metrics, **await self._necessity(t, job.condition, rec.completion)}
        rec.scoring_ms = scoring_s * 1000.0
        self.timings["server_s"] += server_s
        self.timings["sandbox_s"] += rec.sandbox_ms / 1000.0
        self.timings["scoring_s"] += scoring_s
        return rec
