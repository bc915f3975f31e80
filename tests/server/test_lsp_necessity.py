"""editFidelity.analyzeNecessity end to end: the real server (pytest-lsp client as the editor), the
scripted backend, a workspace on disk whose unittest suite runs in the real sandbox."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import pytest
from lsp_helpers import attach_editor, backend_entry, code_actions, execute, wait_for
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from server.fidelity import apply_text_edits, measure
from server.lsp.necessity.environment import PYTEST
from tools.doubles.scripted import Step, fenced

MODULE = """def clamp(x, lo, hi):
    return max(lo, min(x, hi))


def mean_above(values, limit):
    chosen = [v for v in values if v < limit]
    return sum(chosen) / len(chosen) if chosen else 0.0


def double(x):
    return x * 2
"""
# three hunks: a guard nobody asked for, the fix, a reformat
EDITED = (
    MODULE.replace(
        "    return max(lo, min(x, hi))",
        '    if lo > hi:\n        raise ValueError("lo must not exceed hi")\n    return max(lo, min(x, hi))',
    )
    .replace("if v < limit", "if v > limit")
    .replace("x * 2", "x*2")
)
FIXED_ONLY = MODULE.replace("if v < limit", "if v > limit")

TESTS = """import unittest

from pkg.stats import clamp, double, mean_above


class StatsTests(unittest.TestCase):
    def test_mean_above(self):
        self.assertEqual(mean_above([1, 5, 20], 4), 12.5)

    def test_clamp_and_double(self):
        self.assertEqual(clamp(5, 0, 3), 3)
        self.assertEqual(double(4), 8)

    def test_writes_into_its_copy(self):
        with open("ran-here.txt", "w") as fh:
            fh.write("the tests ran in this directory")
"""
SLOW_TESTS = """import time
import unittest


class Slow(unittest.TestCase):
    def test_sleeps(self):
        time.sleep(40)
"""
COMMAND = "python -m unittest discover -s tests -t ."


def workspace(tmp_path: Path, tests: dict[str, str]) -> Path:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "tests").mkdir()
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "pkg" / "stats.py").write_text(MODULE)
    (ws / "tests" / "__init__.py").write_text("")
    for name, text in tests.items():
        (ws / "tests" / name).write_text(text)
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD.py").write_text("raise SystemExit('dot folders are never copied')\n")
    return ws


async def start(lsp: LanguageClient, ws: Path, settings: dict):
    editor = attach_editor(lsp)
    await lsp.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"editFidelity": settings},
            root_uri=ws.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
        )
    )
    return editor


def settings(backend, **necessity) -> dict:
    backend.scripts["three-hunks"] = [Step(content=lambda req: fenced(EDITED))]
    return {
        "backends": [backend_entry(backend, "three-hunks")],
        "testCommand": COMMAND,
        "necessity": {"maxRuns": 16, "parallel": 2, "timeoutS": 30, **necessity},
    }


async def propose(lsp: LanguageClient, editor, uri: str) -> dict:
    editor.open(uri, MODULE)
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": uri, "version": 1, "instruction": "fix the filter"})
    [p] = result["proposals"]
    assert p["status"] == "ok" and len(p["edits"]) == 3
    return p


async def test_needed_hunks_diagnostics_and_keep_action(lsp, backend, tmp_path):
    ws = workspace(tmp_path, {"test_stats.py": TESTS})
    editor = await start(lsp, ws, settings(backend))
    uri = (ws / "pkg" / "stats.py").as_uri()
    p = await propose(lsp, editor, uri)

    res = await execute(lsp, "editFidelity.analyzeNecessity", {"id": p["id"]})
    assert res["status"] == "minimal" and res["oneMinimal"], res["message"]
    assert res["needed"] == [1] and res["unnecessary"] == [0, 2]
    assert res["runs"] == len(res["probes"]) <= res["maxRuns"] == 16
    assert {tuple(r["hunks"]): r["passed"] for r in res["probes"]}[(0, 1, 2)] is True
    assert {tuple(r["hunks"]): r["passed"] for r in res["probes"]}[()] is False
    assert res["isolation"] in ("bwrap", "unshare", "docker")
    assert res["unrequested"] == []  # the guard is flagged already; the reformat is nothing tests could need
    assert res["files"] == 4  # pkg/__init__, pkg/stats, tests/__init__, tests/test_stats; not .git
    assert res["testCommand"] == COMMAND.split()
    # D_min is the fix alone: one token; the reference-free excess is what the rest adds
    full, fix_only = measure(MODULE, EDITED), measure(MODULE, FIXED_ONLY)
    assert res["dMin"]["raw"] == {"tokens": 1, "normalized": fix_only.distance["raw"].normalized}
    for v in ("raw", "no_comments"):
        assert res["excessRefFree"][v] == pytest.approx(full.distance[v].normalized - fix_only.distance[v].normalized)
    # the runs used copies: nothing was written into the workspace
    assert not (ws / "ran-here.txt").exists() and not (ws / "tests" / "ran-here.txt").exists()
    # progress while the tests ran
    reports = next(r for r in lsp.progress_reports.values() if r and "tests need" in (r[0].title or ""))
    assert reports[0].cancellable and reports[-1].kind == "end"
    assert sum(1 for r in reports if r.kind == "report" and (r.message or "").startswith("run ")) == res["runs"]

    # diagnostics on the two hunks the tests do not need
    def necessity_diags():
        return [d for d in lsp.diagnostics.get(uri, []) if d.code == "unnecessary-for-tests"]

    diags = await wait_for(necessity_diags)
    assert sorted(d.data["hunk"] for d in diags) == [0, 2]
    assert all("the tests still pass without this hunk" in d.message and "[three-hunks]" in d.message for d in diags)
    guard = next(d for d in diags if d.data["hunk"] == 0)
    assert guard.range.start.line == 1  # the line the guard goes in front of

    # the code action keeps only the needed unit: applyProposal with its own edits, the rest dropped
    actions = await code_actions(lsp, uri, guard.range, [guard])
    [keep] = [a for a in actions if a["title"].startswith("[three-hunks] Keep only the needed hunks")]
    assert "(1 of 3" in keep["title"] and keep["diagnostics"]
    command = keep["command"]
    assert command["arguments"][0] == {"id": p["id"], "hunks": [1], "rest": "reject"}
    applied = await execute(lsp, command["command"], command["arguments"][0])
    assert applied["applied"] is True and applied["hunks"] == [1]
    [request] = editor.apply_requests
    assert request.edit.document_changes[0].text_document.version == 1  # versioned for the proposal
    assert editor.texts[uri] == FIXED_ONLY
    await wait_for(lambda: not necessity_diags())  # the proposal no longer matches the buffer
    again = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"]})
    assert again["applied"] is False and again["reason"] in ("closed", "stale")  # the rest was dropped


async def test_run_budget_and_bad_requests(lsp, backend, tmp_path):
    ws = workspace(tmp_path, {"test_stats.py": TESTS})
    editor = await start(lsp, ws, settings(backend, maxRuns=3, parallel=1))
    uri = (ws / "pkg" / "stats.py").as_uri()
    p = await propose(lsp, editor, uri)
    res = await execute(lsp, "editFidelity.analyzeNecessity", {"id": p["id"]})
    assert res["status"] == "budget" and res["runs"] == 3 and not res["oneMinimal"]
    assert 1 in res["needed"] and "run budget (3) spent" in res["message"]
    # whatever the budget found passes: its sub-edit is the whole proposal minus the hunks left out
    kept = apply_text_edits(MODULE, measure(MODULE, EDITED).unit_edits(res["needed"]))
    assert "v > limit" in kept

    with pytest.raises(Exception, match="no proposal with id 'nope'"):
        await execute(lsp, "editFidelity.analyzeNecessity", {"id": "nope"})
    with pytest.raises(Exception, match="missing `id`"):
        await execute(lsp, "editFidelity.analyzeNecessity", {})
    # a stale proposal: the buffer moved on
    editor.replace_all(uri, MODULE + "\n# edited\n")
    with pytest.raises(Exception, match="document changed since the proposal"):
        await execute(lsp, "editFidelity.analyzeNecessity", {"id": p["id"]})


async def test_documented_pytest_command_runs_in_the_servers_environment(lsp, backend, tmp_path):
    """`python -m pytest ...` (the documented command) needs pytest: the server's own test environment has it."""
    ws = workspace(tmp_path, {"test_stats.py": TESTS})
    editor = await start(lsp, ws, {**settings(backend), "testCommand": "python -m pytest -q -p no:cacheprovider tests"})
    p = await propose(lsp, editor, (ws / "pkg" / "stats.py").as_uri())
    res = await execute(lsp, "editFidelity.analyzeNecessity", {"id": p["id"]})
    assert res["status"] == "minimal", res["message"]
    assert res["needed"] == [1] and res["unnecessary"] == [0, 2]
    assert res["environment"].startswith("necessity-") and res["requirements"] == [PYTEST]


@pytest.mark.parametrize(
    ("command", "line", "hint"),
    [
        ("python -m nosuch_runner_zz -q", "No module named nosuch_runner_zz", "editFidelity.necessity.packages"),
        ("python -m pkg.nosuch", None, None),  # a workspace module: the proposal could matter, not a start failure
        ("nosuch-tool-zz --check", "nosuch-tool-zz", "editFidelity.testCommand"),
        ("python tests/missing_runner.py", "can't open file", "necessity.include"),
    ],
)
async def test_a_command_that_cannot_start_is_not_the_proposals_fault(lsp, backend, tmp_path, command, line, hint):
    ws = workspace(tmp_path, {"test_stats.py": TESTS})
    editor = await start(lsp, ws, {**settings(backend), "testCommand": command})
    uri = (ws / "pkg" / "stats.py").as_uri()
    p = await propose(lsp, editor, uri)
    res = await execute(lsp, "editFidelity.analyzeNecessity", {"id": p["id"]})
    if line is None:
        assert res["status"] == "full_fails", res["message"]
        return
    assert res["status"] == "command_failed", res["message"]
    assert line in res["message"] and hint in res["message"] and "cannot start" in res["message"]
    assert res["needed"] == [] and res["unnecessary"] == []
    assert not [d for d in lsp.diagnostics.get(uri, []) if d.code == "unnecessary-for-tests"]


async def test_packages_are_validated(lsp, backend, tmp_path):
    ws = workspace(tmp_path, {"test_stats.py": TESTS})
    cfg = settings(backend, packages=["--index-url=http://127.0.0.1:9/simple", "numpy"])
    await start(lsp, ws, cfg)
    listed = await execute(lsp, "editFidelity.listBackends", {})
    assert any(
        "necessity.packages: '--index-url=http://127.0.0.1:9/simple' is not a pip requirement" in pr
        for pr in listed["problems"]
    ), listed["problems"]


async def test_a_package_pip_cannot_install_is_one_clear_line(lsp, backend, tmp_path):
    ws = workspace(tmp_path, {"test_stats.py": TESTS})
    missing = tmp_path / "no_such_dist-1.0-py3-none-any.whl"  # a local file that is not there: no index asked
    editor = await start(lsp, ws, settings(backend, packages=[f"no_such_dist @ {missing.as_uri()}"]))
    p = await propose(lsp, editor, (ws / "pkg" / "stats.py").as_uri())
    with pytest.raises(Exception, match="could not make the test environment") as info:
        await execute(lsp, "editFidelity.analyzeNecessity", {"id": p["id"]})
    assert "\n" not in str(info.value) and "check editFidelity.necessity.packages" in str(info.value)


async def test_no_test_command_is_a_clear_error(lsp, backend, tmp_path):
    ws = workspace(tmp_path, {"test_stats.py": TESTS})
    cfg = settings(backend)
    del cfg["testCommand"]
    editor = await start(lsp, ws, cfg)
    p = await propose(lsp, editor, (ws / "pkg" / "stats.py").as_uri())
    with pytest.raises(Exception, match="no test command: set editFidelity.testCommand"):
        await execute(lsp, "editFidelity.analyzeNecessity", {"id": p["id"]})


def processes_with(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        found.append(int(name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(
    os.geteuid() != 0, reason="the sandbox runs programs as per-slot uids (and can kill them) only as root"
)
async def test_cancel_kills_the_runs(lsp, backend, tmp_path):
    module = f"test_slow_{uuid.uuid4().hex[:12]}"  # a marker to find the runs' processes by
    ws = workspace(tmp_path, {f"{module}.py": SLOW_TESTS})
    cfg = settings(backend)
    cfg["testCommand"] = f"python -m unittest tests.{module}"
    editor = await start(lsp, ws, cfg)
    p = await propose(lsp, editor, (ws / "pkg" / "stats.py").as_uri())
    msg_id = f"necessity-{uuid.uuid4().hex}"
    fut = asyncio.ensure_future(
        lsp.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="editFidelity.analyzeNecessity", arguments=[{"id": p["id"]}]),
            msg_id=msg_id,
        )
    )
    await wait_for(lambda: len(processes_with(module)) >= 2, timeout=15)  # the whole edit and the original
    lsp.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    with pytest.raises(Exception, match="(?i)cancel"):
        await asyncio.wait_for(fut, 10)
    await wait_for(lambda: not processes_with(module), timeout=5)  # killed, not left to sleep 40 s
    # the server carries on
    result = await execute(lsp, "editFidelity.listBackends", {})
    assert result["backends"][0]["name"] == "three-hunks"


AVG = """def average(numbers):
    # Average of the numbers.
    # The caller passes a non-empty list.
    total = sum(numbers)
    return total / len(numbers) + 1
"""
# the fix (drop `+ 1`) on the line that also renames `numbers`, and the comments removed
AVG_OVER = """def average(values):
    total = sum(values)
    return total / len(values)
"""
AVG_FIX = AVG.replace("len(numbers) + 1", "len(numbers)")
AVG_TESTS = """import unittest

from pkg.stats import average


class AverageTests(unittest.TestCase):
    def test_average(self):
        self.assertEqual(average([1, 2, 3]), 2)
"""


async def test_necessity_over_units_separates_the_fix_from_the_rename_on_its_line(lsp, backend, tmp_path):
    ws = workspace(tmp_path, {"test_stats.py": AVG_TESTS})
    (ws / "pkg" / "stats.py").write_text(AVG)
    backend.scripts["avg-over"] = [Step(content=lambda req: fenced(AVG_OVER))]
    editor = await start(
        lsp,
        ws,
        {
            "backends": [backend_entry(backend, "avg-over")],
            "testCommand": COMMAND,
            "necessity": {"maxRuns": 16, "parallel": 2, "timeoutS": 30},
        },
    )
    uri = (ws / "pkg" / "stats.py").as_uri()
    editor.open(uri, AVG)
    [p] = (await execute(lsp, "editFidelity.requestEdit", {"uri": uri, "version": 1, "instruction": "fix average"}))[
        "proposals"
    ]
    hunks = p["report"]["hunks"]
    fix = next(i for i, h in enumerate(hunks) if h["kinds"] == ["logic"])
    assert len(hunks) == 3 and any(len(h["edits"]) == 3 for h in hunks)  # the rename: one unit, three edits
    res = await execute(lsp, "editFidelity.analyzeNecessity", {"id": p["id"]})
    assert res["status"] == "minimal", res["message"]
    # line-level hunks said "2 of 2 needed" with excess 0.0; over units only the fix is needed
    assert res["hunks"] == 3 and res["needed"] == [fix] and sorted(res["unnecessary"]) == sorted(set(range(3)) - {fix})
    fix_only = measure(AVG, AVG_FIX)
    assert res["dMin"]["raw"]["tokens"] == fix_only.distance["raw"].tokens == 2
    assert res["excessRefFree"]["no_comments"] > 0.1
    diags = await wait_for(lambda: [d for d in lsp.diagnostics.get(uri, []) if d.code == "unnecessary-for-tests"])
    assert sorted(d.data["hunk"] for d in diags) == sorted(res["unnecessary"])
    actions = await code_actions(lsp, uri, diags[0].range, diags[:1])
    [keep] = [a for a in actions if "Keep only the needed hunks" in a["title"]]
    assert (await execute(lsp, keep["command"]["command"], keep["command"]["arguments"][0]))["applied"] is True
    assert editor.texts[uri] == AVG_FIX  # the fix alone: the rename on its line left out


# the fix, and a rewrite of `double` that the tests pass without and "fix the filter" does not ask for
REWRITTEN = MODULE.replace("if v < limit", "if v > limit").replace("return x * 2", "return x + x")


async def test_an_unneeded_logic_change_nobody_asked_for_is_unrequested_on_the_tests_evidence(lsp, backend, tmp_path):
    ws = workspace(tmp_path, {"test_stats.py": TESTS})
    backend.scripts["rewrite"] = [Step(content=lambda req: fenced(REWRITTEN))]
    settings = {"backends": [backend_entry(backend, "rewrite")], "testCommand": COMMAND}
    editor = await start(lsp, ws, {**settings, "necessity": {"maxRuns": 16, "parallel": 2, "timeoutS": 30}})
    uri = (ws / "pkg" / "stats.py").as_uri()
    editor.open(uri, MODULE)
    args = {"uri": uri, "version": 1, "instruction": "fix the filter"}
    [p] = (await execute(lsp, "editFidelity.requestEdit", args))["proposals"]
    hunks = p["report"]["hunks"]
    assert [h["kinds"] for h in hunks] == [["logic"], ["logic"]] and p["flaggedHunks"] == []  # the words alone: no flag
    res = await execute(lsp, "editFidelity.analyzeNecessity", {"id": p["id"]})
    assert res["status"] == "minimal" and res["needed"] == [0] and res["unnecessary"] == [1], res["message"]
    [flag] = res["unrequested"]
    assert flag["hunk"] == 1 and flag["kinds"] == ["logic"] and flag["severity"] == 2
    assert "the tests pass without it" in flag["message"]

    diags = await wait_for(lambda: [d for d in lsp.diagnostics.get(uri, []) if d.code == "unrequested-for-tests"])
    [diag] = diags
    assert diag.severity == types.DiagnosticSeverity.Warning and diag.data["hunk"] == 1
    assert diag.range.start.line == hunks[1]["startLine"] - 1 and "[rewrite]" in diag.message
    assert not [d for d in lsp.diagnostics.get(uri, []) if d.code == "unnecessary-for-tests"]  # one diagnostic per unit

    # a request that names `double`: the tests need no change of it, so they cannot tell its ask from an extra
    args = {"uri": uri, "version": 1, "instruction": "fix the filter, and make `double` add x to itself"}
    [asked] = (await execute(lsp, "editFidelity.requestEdit", args))["proposals"]
    res = await execute(lsp, "editFidelity.analyzeNecessity", {"id": asked["id"]})
    assert res["unnecessary"] == [1] and res["unrequested"] == []


JS = """function average(numbers) {
  let total = 0;
  for (const n of numbers) {
    total += n;
  }
  return total / (numbers.length + 1);
}

module.exports = { average };
"""
JS_FIX = JS.replace("(numbers.length + 1)", "numbers.length")
# the fix, a rename of the parameter on its line and elsewhere, and a guard nobody asked for
JS_OVER = JS_FIX.replace("numbers", "values").replace(
    "  let total = 0;",
    '  if (!Array.isArray(values)) {\n    throw new TypeError("values must be an array");\n  }\n  let total = 0;',
)
JS_TEST = """const assert = require("assert");
const { average } = require("../src/stats.js");
assert.strictEqual(average([1, 2, 3]), 2);
console.log("ok");
"""


@pytest.mark.skipif(not __import__("shutil").which("node"), reason="node is not installed")
async def test_necessity_in_javascript_keeps_only_the_fix(lsp, backend, tmp_path):
    ws = tmp_path / "jsws"
    (ws / "src").mkdir(parents=True)
    (ws / "test").mkdir()
    (ws / "src" / "stats.js").write_text(JS)
    (ws / "test" / "stats.test.js").write_text(JS_TEST)
    backend.scripts["js-over"] = [Step(content=lambda req: f"Here is the code:\n\n```javascript\n{JS_OVER}```\n")]
    editor = await start(
        lsp,
        ws,
        {
            "backends": [backend_entry(backend, "js-over")],
            "testCommand": "node test/stats.test.js",
            "necessity": {"maxRuns": 16, "parallel": 2, "timeoutS": 30, "include": ["**/*.js"]},
        },
    )
    uri = (ws / "src" / "stats.js").as_uri()
    editor.open(uri, JS, language="javascript")
    [p] = (await execute(lsp, "editFidelity.requestEdit", {"uri": uri, "version": 1, "instruction": "fix average"}))[
        "proposals"
    ]
    hunks = p["report"]["hunks"]
    fix = next(i for i, h in enumerate(hunks) if h["kinds"] == ["logic"])
    assert any(h["renames"] == {"numbers": "values"} for h in hunks) and any("defensive" in h["kinds"] for h in hunks)
    res = await execute(lsp, "editFidelity.analyzeNecessity", {"id": p["id"]})
    assert res["status"] == "minimal", res["message"]
    assert res["needed"] == [fix] and sorted(res["unnecessary"]) == sorted(set(range(len(hunks))) - {fix})
