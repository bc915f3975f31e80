"""The judge: builds cached by source, tests run on the sandbox's slots, judgements and repeated measurements."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from sandbox.judge.build import build, run_command
from sandbox.judge.model import Build, Checker, JudgeLimits, Judgement, Program, TestCase, TestResult, Usage
from sandbox.judge.verdicts import compare, first_failure, run_result
from sandbox.singleflight import SingleFlight

if TYPE_CHECKING:
    from sandbox.core import Sandbox


class Judge:
    """Judges programs in a `sandbox.Sandbox`; compiled builds are cached by source (LRU)."""

    def __init__(self, box: Sandbox, *, cache_size: int = 256) -> None:
        self.box = box
        self.cache_size = cache_size
        # a sandbox hiccup (judge_error) is not remembered
        self._builds: SingleFlight[str, Build] = SingleFlight(
            keep=lambda b: b.verdict != "judge_error", max_entries=cache_size
        )
        self.compiles = 0  # compile steps actually run (the rest came from the cache)

    # -- building --------------------------------------------------------------------------------

    async def build(self, program: Program) -> Build:
        key = hashlib.sha256(msgspec.json.encode(program)).hexdigest()
        return await self._builds.run(key, lambda: build(self.box, program, on_compile=self._counted))

    def _counted(self) -> None:
        self.compiles += 1

    # -- running ---------------------------------------------------------------------------------

    async def run_one(
        self, built: Build, test: TestCase, limits: JudgeLimits, name: str = "", *, trusted_input: bool = False
    ) -> TestResult:
        """Run a built program on one input; `accepted` here means it ran cleanly (no comparison). When
        the harness cannot read the input as the function's arguments, that is the test's fault
        (`judge_error`), unless the input is `trusted_input` (a reference read it), then the program's:
        its signature does not fit the task (`runtime_error`)."""
        wall = limits.time_s * limits.wall_factor + 1.0
        kwargs: dict[str, Any] = {
            "stdin": test.input,
            "timeout_s": wall,
            "memory_mb": limits.memory_mb,
            "output_limit": limits.output_kb * 1024,
        }
        entry, command = run_command(built, limits)
        if command is not None:
            kwargs["command"] = command
        res = await self.box.arun(built.files, entry, language=built.language, **kwargs)
        return run_result(res, limits, name or test.name, trusted_input=trusted_input)

    async def judge(
        self,
        program: Program,
        tests: Sequence[TestCase],
        limits: JudgeLimits | None = None,
        *,
        checker: Checker = "numbers",
        trusted_inputs: bool = False,
    ) -> Judgement:
        """Compile once, run the tests (concurrently, on the sandbox's slots), compare; the verdict is
        the first test's, in order, that was not accepted (tests after a failing batch do not run).
        `trusted_inputs`: see `run_one`."""
        limits = limits or JudgeLimits()
        built, j = await self._compiled(program)
        if built.verdict is not None:
            return j
        if not tests:
            j.verdict, j.detail = "judge_error", "no test cases"
            return j
        # In batches as wide as the sandbox's pool, stopping after a failing batch: a program that
        # loops forever costs one batch of timeouts, not one per test.
        width = max(1, int(getattr(self.box, "workers", 1) or 1))
        results: list[TestResult] = []
        for start in range(0, len(tests), width):
            batch = list(enumerate(tests))[start : start + width]
            done = await asyncio.gather(
                *(
                    self.run_one(built, t, limits, t.name or f"test {i + 1}", trusted_input=trusted_inputs)
                    for i, t in batch
                )
            )
            for (_, t), r in zip(batch, done, strict=True):
                compare(t, r, checker)
            results += done
            if any(r.verdict != "accepted" for r in done):
                break
        j.tests = results
        return first_failure(j)

    async def _compiled(self, program: Program) -> tuple[Build, Judgement]:
        """The program's build and the judgement it starts: the build's verdict when it cannot run, else
        "accepted" until a test says otherwise."""
        built = await self.build(program)
        j = Judgement(
            verdict="accepted",
            language=built.language,
            shape=built.shape,
            entry=built.entry,
            compile_output=built.compile_output,
        )
        if built.verdict is not None:
            j.verdict, j.detail = built.verdict, built.detail
        return built, j

    async def outputs(self, program: Program, inputs: Sequence[str], limits: JudgeLimits | None = None) -> Judgement:
        """Run a program on inputs and collect its outputs (e.g. a reference solution's); each test's
        verdict says whether it ran cleanly."""
        limits = limits or JudgeLimits()
        built, j = await self._compiled(program)
        if built.verdict is not None:
            return j
        j.tests = list(
            await asyncio.gather(
                *(self.run_one(built, TestCase(input=x), limits, f"test {i + 1}") for i, x in enumerate(inputs))
            )
        )
        return first_failure(j)

    async def measure(
        self,
        programs: Sequence[Program],
        tests: Sequence[TestCase],
        limits: JudgeLimits | None = None,
        *,
        repeats: int = 5,
    ) -> list[Usage]:
        """Each program's CPU time and peak memory over the tests, `repeats` times, the programs
        interleaved within each repeat and the runs one at a time (drift and load hit all alike)."""
        if repeats < 1:
            raise ValueError("measure needs at least one repeat")
        limits = limits or JudgeLimits()
        builds = [await self.build(p) for p in programs]
        usages = [Usage(cpu_s=[], memory_mb=[]) for _ in programs]
        for _ in range(repeats):
            for built, usage in zip(builds, usages, strict=True):
                if built.verdict is not None:
                    usage.failures += 1
                    continue
                cpu, mem, clean = 0.0, 0.0, True
                for t in tests:
                    r = await self.run_one(built, t, limits)
                    cpu += r.cpu_s
                    mem = max(mem, r.memory_mb)
                    clean = clean and r.verdict == "accepted"
                usage.cpu_s.append(cpu)
                usage.memory_mb.append(mem)
                usage.failures += not clean
        return usages
