"""The sandbox environment of the overedit tasks: what `prepare` records as missing, and (where the
scientific stack is installed: `scripts/setup-sandbox --suite overedit`) tasks that need it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from benchmark.suites.overedit import Task, environment_gap, missing_imports
from benchmark.suites.overedit import make as overedit_suite
from sandbox import Sandbox, config, envs
from server.protocol.report import FidelityReport


def test_the_import_probe_names_what_does_not_import():
    failed = envs._failed_imports(config.base_python(), ("json", "edit_fidelity_no_such_module", "csv"))
    assert list(failed) == ["edit_fidelity_no_such_module"]
    assert failed["edit_fidelity_no_such_module"].startswith("ModuleNotFoundError")


def test_overedit_environment_is_declared_with_its_imports():
    suite = envs.SUITES["overedit"]
    assert {"pandas", "numpy", "matplotlib", "sklearn", "scipy", "seaborn"} <= set(suite.imports)
    assert any(r.startswith("tensorflow") for r in suite.optional)
    # the other suites' stamps do not change (their venvs are not rebuilt)
    assert not envs.SUITES["canitedit"].optional and not envs.SUITES["canitedit"].imports


def test_tasks_needing_a_missing_module_are_named(shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    (home / "envs" / "fake").mkdir(parents=True)
    (home / "envs" / "fake" / envs.MISSING_FILE).write_text(json.dumps({"tensorflow": "pip install failed: x"}))
    monkeypatch.setenv(config.HOME_ENV, str(home))
    assert envs.missing_modules("fake") == {"tensorflow": "pip install failed: x"}
    tasks = overedit_suite(env="fake").dataset.load(shared_data, None)
    needing = [t.task_id for t in tasks if missing_imports(t, "fake")]
    assert len(needing) == 1 and missing_imports(tasks[[t.task_id for t in tasks].index(needing[0])], "fake") == [
        "tensorflow"
    ]


def fidelity_report(task) -> FidelityReport:
    from server.fidelity import measure

    return measure(task.before, task.after, gold=task.after)


@pytest.mark.skipif(not envs.is_prepared("overedit"), reason="run scripts/setup-sandbox --suite overedit")
def test_scientific_tasks_pass_with_gold_and_fail_corrupted(shared_data: Path):
    suite = overedit_suite()
    tasks = [t for t in suite.dataset.load(shared_data, None) if t.task_id in ("BigCodeBench/36", "BigCodeBench/42")]
    assert len(tasks) == 2

    async def go():
        box = Sandbox(workers=2)
        try:
            return [
                (
                    await suite.scorer.judge(box, t, "generic", t.after),
                    await suite.scorer.judge(box, t, "generic", t.before),
                )
                for t in tasks
            ]
        finally:
            box.close()

    for gold, corrupted in asyncio.run(go()):
        assert gold.passed and gold.metrics["tests_run"] > 0
        assert not corrupted.passed and corrupted.metrics["failures"] + corrupted.metrics["errors"] > 0
    # the fidelity numbers come from the server's report of the repair, not from the judge
    assert all(suite.scorer.report_metrics(t, fidelity_report(t))["excess_lev"] == 0.0 for t in tasks)


def test_what_the_sandbox_lacks_is_told_apart_from_a_wrong_solution():
    from benchmark.run.testrun import missing_from, run_tests

    solution = (
        "import socket\n\ndef task_func(ip):\n    try:\n        return socket.gethostbyaddr(ip)[0]\n"
        "    except socket.herror:\n        return None\n"
    )
    tests = (
        "import unittest\nclass TestCases(unittest.TestCase):\n    def test_lookup(self):\n"
        "        self.assertEqual(task_func('8.8.8.8'), 'dns.google')\n"
    )
    nltk_text = "LookupError: \n  Resource \x1b[93mstopwords\x1b[0m not found.\n  Please use the NLTK Downloader"
    assert missing_from(nltk_text) == "nltk_data:stopwords"
    assert missing_from("ModuleNotFoundError: No module named 'tensorflow.keras'") == "tensorflow"
    envs.prepare("base", log=lambda m: None)

    async def go():
        box = Sandbox(workers=1)
        try:
            return (
                await run_tests(box, solution, tests, kind="unittest", env="base", timeout_s=20),
                await run_tests(
                    box,
                    "import json\n" + solution.replace("socket.gethostbyaddr(ip)[0]", "ip"),
                    tests,
                    kind="unittest",
                    env="base",
                    timeout_s=20,
                ),
            )
        finally:
            box.close()

    offline, wrong = asyncio.run(go())
    assert not offline.passed and offline.missing == "network" and "gethostbyaddr" in offline.detail
    task = Task(task_id="t", corrupted_solution=solution, canonical_solution=solution, test_code=tests)
    assert environment_gap(task, offline.missing) == "network"
    assert not wrong.passed and wrong.missing is None and wrong.failures == 1
