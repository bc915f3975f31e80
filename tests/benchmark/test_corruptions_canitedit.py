"""A minimal-fix suite made from CanItEdit's `after` solutions (a few problems here; the 200-task suite is
`python -m tools.bench.bench_overedit`): every kept task fails its tests and every gold patch passes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmark.build.corruptions import FAMILIES, invert
from benchmark.build.make_suite import make_suite, sources
from benchmark.run.testrun import run_tests
from sandbox import Sandbox, envs

pytestmark = pytest.mark.skipif(
    not envs.is_prepared("canitedit"), reason="sandbox suite env missing: run scripts/setup-sandbox"
)


def test_kept_tasks_fail_and_gold_patches_pass(shared_data: Path):
    srcs, errors = sources("canitedit", shared_data, limit=6)
    assert not errors and len(srcs) == 6 and all(s.kind == "script" and s.env == "canitedit" for s in srcs)

    async def go():
        box = Sandbox(workers=2)
        try:
            made = await make_suite(
                box,
                srcs,
                FAMILIES,
                max_corruptions=2,
                seed=11,
                variants=1,
                attempts=3,
                functions="all",
                timeout_s=20.0,
                concurrency=4,
            )
            checks = []
            for t in made.tasks:
                bad = await run_tests(box, t.corrupted_solution, t.test_code, kind=t.kind, env=t.env, timeout_s=20)
                good = await run_tests(
                    box, invert(t.corrupted_solution, t.corruptions), t.test_code, kind=t.kind, env=t.env, timeout_s=20
                )
                checks.append((bad.passed, good.passed))
            return made, checks
        finally:
            box.close()

    made, checks = asyncio.run(go())
    assert len(made.tasks) >= 4, made.problems()
    assert checks == [(False, True)] * len(made.tasks)
    assert len(made.tasks) + sum(1 for o in made.outcomes if not o.kept) == 6  # each problem kept or reported
    for o in made.outcomes:
        assert o.kept or o.notes
    assert {t.source for t in made.tasks} <= {s.task_id for s in srcs}
