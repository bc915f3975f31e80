"""`edit-fidelity check --format sarif` and `--fail-on`, as CI runs them: the real console script on real
files and git repositories; every log validated against the official SARIF 2.1.0 schema (vendored:
data/PROVENANCE.md)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urljoin

import jsonschema
import pytest
from agent_helpers import EXE, EXTRA, NEWTON, make_repo

from server import example

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"  # oasis-tcs/sarif-spec's file


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), "check", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@cache
def validator() -> jsonschema.Draft4Validator:
    data = SCHEMA.read_bytes()
    assert hashlib.sha256(data).hexdigest() == SCHEMA_SHA256, "the vendored SARIF schema was changed"
    schema = json.loads(data)
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    return jsonschema.Draft4Validator(schema)


def sarif(done: subprocess.CompletedProcess[str]) -> dict:
    log = json.loads(done.stdout)
    errors = sorted(validator().iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert len({r["id"] for r in rules}) == len(rules)
    for r in run_["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] in {"error", "warning", "note"} and r["message"]["text"]
    return run_


def located(run_: dict, result: dict) -> tuple[Path, dict]:
    """The file a result points at (its URI resolved against %SRCROOT%) and its region."""
    loc = result["locations"][0]["physicalLocation"]
    base = run_["originalUriBaseIds"][loc["artifactLocation"]["uriBaseId"]]["uri"]
    url = urljoin(base, loc["artifactLocation"]["uri"])
    assert url.startswith("file://")
    return Path(unquote(url.removeprefix("file://"))), loc["region"]


def test_two_files_one_result_per_flagged_unit_in_the_edited_file(tmp_path: Path):
    (tmp_path / "old.py").write_text(example.ORIGINAL)
    (tmp_path / "sub dir").mkdir()
    (tmp_path / "sub dir" / "new.py").write_text(example.OVER_EDITED)
    done = run("old.py", "sub dir/new.py", "--format", "sarif", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_ = sarif(done)
    # as many results as the report has units of an unrequested kind (the core's view: no instruction)
    report = json.loads(run("old.py", "sub dir/new.py", "--format", "json", cwd=tmp_path).stdout)
    unrequested = [h for h in report["hunks"] if h["unrequested"]]
    assert len(run_["results"]) == len(unrequested) == 5
    lines = example.OVER_EDITED.splitlines()
    for result in run_["results"]:
        path, region = located(run_, result)
        assert path == tmp_path / "sub dir" / "new.py"
        assert 1 <= region["startLine"] <= region["endLine"] <= len(lines)
    by_rule = {r["ruleId"]: r for r in run_["results"]}
    assert {"rename", "comment_removed", "defensive"} <= set(by_rule)
    renamed = next(r for r in run_["results"] if "renamed `scores` to `values`" in r["message"]["text"])
    _, region = located(run_, renamed)
    first = lines[region["startLine"] - 1]
    assert first[region["startColumn"] - 1 :].startswith("values")  # the rename's own columns (UTF-16, 1-based)
    assert renamed["properties"]["kinds"] == ["rename", "signature_change"] and renamed["level"] == "warning"
    assert run_["invocations"][0]["executionSuccessful"] is True
    assert run_["columnKind"] == "utf16CodeUnits"


def test_git_working_tree_files_statements_and_skipped_files(tmp_path: Path):
    root = tmp_path / "repo"
    make_repo(root, {"pkg/m.py": NEWTON, "gone.py": "x = 1\n", "blob.bin": b"\0\1", "same.py": "y = 1\n"})
    (root / "pkg" / "m.py").write_text(EXTRA)  # its only flag: a statement, a value never read
    (root / "gone.py").unlink()
    (root / "blob.bin").write_bytes(b"\0\2")
    (root / "fmt.py").write_text("def f(x):\n    return x\n")
    done = run("--git", "HEAD", "--format", "sarif", cwd=root / "pkg")  # from a subdirectory
    assert done.returncode == 0, done.stderr
    run_ = sarif(done)
    assert Path(unquote(run_["originalUriBaseIds"]["%SRCROOT%"]["uri"].removeprefix("file://"))) == root.resolve()
    [statement] = run_["results"]
    path, region = located(run_, statement)
    assert path == root.resolve() / "pkg" / "m.py"
    assert EXTRA.splitlines()[region["startLine"] - 1].strip() == "g = grad(x)"
    assert statement["ruleId"] == "added_code" and "never read" in statement["message"]["text"]
    notes = {n["message"]["text"] for n in run_["invocations"][0]["toolExecutionNotifications"]}
    assert any(n.startswith("blob.bin: not checked: ") and "binary" in n for n in notes), notes
    assert any(n.startswith("gone.py: not checked: deleted") for n in notes), notes


def test_fail_on_sets_the_exit_status_by_severity(tmp_path: Path):
    (tmp_path / "old.py").write_text(example.ORIGINAL)
    (tmp_path / "new.py").write_text(example.OVER_EDITED)  # five flagged units, warnings, no error
    (tmp_path / "spaced.py").write_text(example.ORIGINAL.replace("\n\n\n", "\n\n\n\n"))  # whitespace only: a hint
    for level, status in (("hint", 1), ("information", 1), ("warning", 1), ("error", 0)):
        done = run("old.py", "new.py", "--fail-on", level, cwd=tmp_path)
        assert done.returncode == status, (level, done.stderr)
        if status:
            [line] = done.stderr.splitlines()
            assert line.startswith(
                f"edit-fidelity check: 5 flagged changes at --fail-on {level} or louder; first: new.py:"
            )
        else:
            assert done.stderr == ""
    assert run("old.py", "spaced.py", "--fail-on", "warning", cwd=tmp_path).returncode == 0
    assert run("old.py", "spaced.py", "--fail-on", "hint", cwd=tmp_path).returncode == 1
    assert run("old.py", "old.py", "--fail-on", "hint", cwd=tmp_path).returncode == 0
    # the output is whatever --format says, the status comes on top
    done = run("old.py", "new.py", "--fail-on", "warning", "--format", "json", cwd=tmp_path)
    assert done.returncode == 1 and "hunks" in json.loads(done.stdout)
    done = run("old.py", "new.py", "--fail-on", "warning", "--format", "sarif", cwd=tmp_path)
    assert done.returncode == 1 and len(sarif(done)["results"]) == 5

    make_repo(tmp_path / "repo", {"m.py": example.ORIGINAL})
    (tmp_path / "repo" / "m.py").write_text(example.OVER_EDITED)
    assert run("--git", "HEAD", "--fail-on", "warning", cwd=tmp_path / "repo").returncode == 1
    assert run("--git", "HEAD", "--fail-on", "error", cwd=tmp_path / "repo").returncode == 0
    assert run("--example", "--fail-on", "warning", cwd=tmp_path).returncode == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--example", "--format", "sarif"], "--format sarif locates its results in files"),
        (["old.py", "new.py", "--fail-on", "loud"], "argument --fail-on: invalid choice: 'loud'"),
        (["old.py", "new.py", "--format", "sarif2"], "argument --format: invalid choice"),
    ],
)
def test_bad_options_are_one_line_and_status_2(tmp_path: Path, args: list[str], message: str):
    (tmp_path / "old.py").write_text("x = 1\n")
    (tmp_path / "new.py").write_text("x = 2\n")
    done = run(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert message in line
