"""The replay engine: every (task, condition, sample) goes through the real language server
(`editFidelity.requestEdit`), its edits are applied to the document as an editor would, the result
runs in the sandbox, and one `SampleRecord` is appended as soon as it is complete.

Backend failures are records (outcome `backend_error`/`no_code`, as the server reports them); a failure
of the server itself (`ServerError`) ends the run, so that `--resume` runs those samples again.

Concurrency: at most `concurrency` requests in flight towards the server/backend; sandbox runs go to
the sandbox's own worker pool (`workers` slots, one uid each) and overlap with the requests.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

from benchmark import canitedit
from benchmark.backends import Backend, Replay
from benchmark.canitedit import Problem
from benchmark.endpoint import ReplayEndpoint
from benchmark.records import RunConfig, SampleRecord
from benchmark.session import ServerSession
from benchmark.store import ResultsStore
from server.fidelity import TextEdit, apply_text_edits, measure


@dataclass(frozen=True)
class Job:
    problem: Problem
    condition: str
    sample: int


@dataclass
class Gold:
    """The gold patch's own numbers (pure core, computed once per task)."""

    distance: float
    cc_after: float | None


@dataclass
class Progress:
    total: int
    done: int = 0
    passed: int = 0
    started: float = field(default_factory=time.monotonic)
    on_update: Callable[[Progress], None] | None = None

    def add(self, rec: SampleRecord) -> None:
        self.done += 1
        self.passed += rec.passed
        if self.on_update:
            self.on_update(self)


def plan(problems: list[Problem], conditions: list[str], samples: int, backend_name: str,
         done: set[tuple]) -> list[Job]:
    jobs = []
    for p in problems:
        for c in conditions:
            for s in range(samples):
                if (p.task_id, c, backend_name, s) not in done:
                    jobs.append(Job(p, c, s))
    return jobs


def gold_numbers(problem: Problem) -> Gold:
    rep = measure(problem.before, problem.after)
    return Gold(distance=rep.distance["no_comments"].normalized, cc_after=rep.complexity["paper"].after)


def _edits(proposal: dict) -> list[TextEdit]:
    return msgspec.convert(proposal.get("edits") or [], list[TextEdit])


def score(job: Job, proposal: dict, gold: Gold, backend_name: str) -> SampleRecord:
    """The record of a proposal before the sandbox: the edited document and the fidelity numbers."""
    p = job.problem
    rec = SampleRecord(suite=canitedit.NAME, task_id=p.task_id, task=p.name, condition=job.condition,
                       backend=backend_name, sample=job.sample, outcome="fail")
    if proposal.get("status") != "ok":
        rec.outcome = "no_code" if proposal.get("errorKind") in ("no_code", "empty") else "backend_error"
        rec.error = (proposal.get("error") or "")[:500]
        rec.error_kind = proposal.get("errorKind")
        return rec
    completion = apply_text_edits(p.before, _edits(proposal))
    rec.completion = completion
    report = proposal.get("report") or {}
    dist = ((report.get("distance") or {}).get("no_comments") or {})
    rec.distance = dist.get("normalized")
    rec.distance_tokens = dist.get("tokens")
    server_excess = (report.get("excess") or {}).get("no_comments")
    if server_excess is not None:
        rec.excess_lev = server_excess  # the server measured against the gold edit we sent along
    elif rec.distance is not None:
        rec.excess_lev = rec.distance - gold.distance
    paper = ((report.get("complexity") or {}).get("paper") or {})
    rec.cc_delta = paper.get("delta")
    if paper.get("after") is not None and gold.cc_after is not None:
        rec.added_cc = paper["after"] - gold.cc_after
    rec.hunks = len(report.get("hunks") or [])
    rec.flagged_hunks = len(proposal.get("flaggedHunks") or [])
    rec.identical = bool(report.get("identical"))
    return rec


class Engine:
    def __init__(self, config: RunConfig, problems: list[Problem], backend: Backend, store: ResultsStore, box, *,
                 concurrency: int = 8, progress: Callable[[Progress], None] | None = None,
                 server_command: list[str] | None = None) -> None:
        self.config = config
        self.problems = problems
        self.backend = backend
        self.store = store
        self.box = box
        self.concurrency = concurrency
        self.on_progress = progress
        self.server_command = server_command
        self.timings = {"server_s": 0.0, "sandbox_s": 0.0, "scoring_s": 0.0}
        self._gold: dict[str, asyncio.Future[Gold]] = {}
        # identical programs of a task run once per run (recorded runs repeat many completions)
        self._verdicts: dict[tuple[str, str], asyncio.Future[canitedit.Verdict]] = {}
        self.reused = 0

    async def run(self) -> Progress:
        jobs = plan(self.problems, self.config.conditions, self.config.samples, self.config.backend, self.store.done)
        progress = Progress(total=len(jobs), on_update=self.on_progress)
        if not jobs:
            return progress
        log = self.store.run_dir / "server.log"
        if isinstance(self.backend, Replay):
            with ReplayEndpoint(self.backend.book) as ep:
                backends = self.backend.server_backends(ep.base_url, self.config.samples, self.concurrency)
                async with ServerSession(backends, log_file=log, command=self.server_command) as session:
                    await self._all(session, jobs, progress)
        else:
            backends = self.backend.server_backends(self.concurrency, self.config.style)
            async with ServerSession(backends, log_file=log, command=self.server_command) as session:
                await self._all(session, jobs, progress)
        return progress

    async def _all(self, session: ServerSession, jobs: list[Job], progress: Progress) -> None:
        sem = asyncio.Semaphore(self.concurrency)
        tasks = [asyncio.create_task(self._one(session, sem, job)) for job in jobs]
        try:
            for fut in asyncio.as_completed(tasks):
                rec = await fut
                self.store.append(rec)
                progress.add(rec)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _gold_for(self, problem: Problem) -> Gold:
        fut = self._gold.get(problem.task_id)
        if fut is None:
            fut = asyncio.ensure_future(asyncio.to_thread(gold_numbers, problem))
            self._gold[problem.task_id] = fut
        return await fut

    async def _judge(self, problem: Problem, completion: str) -> tuple[canitedit.Verdict, bool]:
        key = (problem.task_id, completion)
        fut = self._verdicts.get(key)
        if fut is not None:
            self.reused += 1
            return await asyncio.shield(fut), True
        fut = asyncio.ensure_future(canitedit.judge(self.box, problem, completion))
        self._verdicts[key] = fut
        return await asyncio.shield(fut), False

    async def _one(self, session: ServerSession, sem: asyncio.Semaphore, job: Job) -> SampleRecord:
        p = job.problem
        instruction = p.instruction(job.condition)
        slot = self.backend.slot(job.sample)
        async with sem:
            handle = None
            if isinstance(self.backend, Replay):
                book = self.backend.book
                answer = self.backend.answer(p, job.condition, job.sample)
                if answer is None:
                    return SampleRecord(suite=canitedit.NAME, task_id=p.task_id, task=p.name, condition=job.condition,
                                        backend=self.config.backend, sample=job.sample, outcome="backend_error",
                                        error="the recorded run has no completion for this sample",
                                        error_kind="missing")
                handle = book.put(slot, p.before, instruction, answer)
            t0 = time.perf_counter()
            try:  # a ServerError (the server failed, not the backend) ends the run: nothing is stored for it
                proposal = await session.request_edit(p.before, instruction, slot, gold=p.after,
                                                      name=f"{p.task_id}-{job.condition}-{job.sample}")
            finally:
                if handle is not None:
                    book.drop(slot, handle)
            server_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        gold = await self._gold_for(p)
        rec = score(job, proposal, gold, self.config.backend)
        scoring_s = time.perf_counter() - t0
        rec.server_ms = server_s * 1000.0
        if isinstance(self.backend, Replay) and self.backend.recorded is not None:
            rec.recorded_pass = self.backend.recorded.verdict(p.task_id, job.condition, job.sample)
            rec.recorded_missing = self.backend.recorded.recorded_missing(p.task_id, job.condition, job.sample)
        if rec.completion is not None:
            v, reused = await self._judge(p, rec.completion)
            rec.exec_status, rec.exit_code, rec.stderr_tail = v.exec_status, v.exit_code, v.stderr_tail
            rec.sandbox_ms, rec.reused_verdict = (0.0 if reused else v.sandbox_ms), reused
            if v.sandbox_error is not None and not v.passed:
                rec.outcome, rec.error = "sandbox_error", v.sandbox_error
            elif v.sandbox_error is not None:  # passed, but the coverage run failed
                rec.outcome, rec.error = "pass", v.sandbox_error
            else:
                rec.outcome = "pass" if v.passed else "fail"
            rec.missing_lines, rec.differ_lines, rec.excess_code = v.missing_lines, v.differ_lines, v.excess_code
            rec.missing_statements, rec.excess_code_strict = v.missing_statements, v.excess_code_strict
        rec.scoring_ms = scoring_s * 1000.0
        self.timings["server_s"] += server_s
        self.timings["sandbox_s"] += rec.sandbox_ms / 1000.0
        self.timings["scoring_s"] += scoring_s
        return rec
