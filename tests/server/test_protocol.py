"""The wire contract (server.protocol): dependency-free, decoded in one place with precise messages,
and the extension's generated copy (package.json's settings, protocol.generated.ts) kept current."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from server.fidelity.judge.flags import SEVERITY_DEFAULTS
from server.lsp.command_handler import register_commands
from server.lsp.handlers import COMMAND_HANDLERS
from server.lsp.progress import WorkDoneToken
from server.lsp.server import EditFidelityServer
from server.protocol import BUG_TYPES, COMMANDS, STYLES, Command, DecodeError, convert, generate
from server.protocol import settings as wire
from server.protocol.commands import (
    ApplyProposalArgs,
    CheckChangeArgs,
    IdArgs,
    RejectResult,
    RequestEditArgs,
    SelectResult,
)
from server.protocol.names import SEVERITY_NAMES

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = ROOT / "server" / "protocol"


def test_the_package_imports_only_msgspec_the_stdlib_and_itself():
    allowed = set(sys.stdlib_module_names) | {"msgspec", "server"}
    for path in PROTOCOL.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module]
            else:
                continue
            for mod in mods:
                assert mod.split(".")[0] in allowed, (path.name, mod)
                if mod.startswith("server"):
                    assert mod == "server.protocol" or mod.startswith("server.protocol."), (path.name, mod)


def test_generated_files_are_current():
    """What CI runs: the generator's --check fails, in one line, when a generated file is stale."""
    run = subprocess.run(
        [sys.executable, "-m", "server.protocol.generate", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr


def test_check_fails_in_one_line_when_stale(tmp_path):
    (tmp_path / "client-vscode" / "src").mkdir(parents=True)
    package = json.loads((ROOT / generate.PACKAGE).read_text())
    package["contributes"]["configuration"]["properties"].pop("editFidelity.thresholds.debounceMs")
    (tmp_path / generate.PACKAGE).write_text(json.dumps(package, indent=2) + "\n")
    (tmp_path / generate.TYPES).write_text((ROOT / generate.TYPES).read_text())
    run = subprocess.run(
        [sys.executable, "-m", "server.protocol.generate", "--check", "--root", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "stale client-vscode/package.json" in run.stderr, run.stderr
    # writing makes it current; the rest of package.json is kept as it was
    assert generate.main(["--root", str(tmp_path)]) == 0
    assert generate.main(["--check", "--root", str(tmp_path)]) == 0
    regenerated = json.loads((tmp_path / generate.PACKAGE).read_text())
    assert regenerated == json.loads((ROOT / generate.PACKAGE).read_text())


def test_names_are_the_ones_everybody_uses():
    from server.backends.locate import BUG_TYPES as parser_bug_types
    from server.backends.prompts import STYLES as prompt_styles
    from server.lsp import create_server

    assert set(create_server().protocol.fm.commands) == {c.value for c in Command}  # every one, and no other
    assert parser_bug_types is BUG_TYPES and prompt_styles is STYLES
    assert {k: SEVERITY_NAMES[v] for k, (v, _) in wire.SEVERITY_KINDS.items()} == SEVERITY_DEFAULTS
    assert set(COMMANDS) == set(Command)
    ts = (ROOT / generate.TYPES).read_text()
    for command in Command:
        assert f'"{command.value}"' in ts


class _WrongResult:
    """A rejectProposal handler that answers another command's result."""

    name = Command.REJECT_PROPOSAL

    async def run(self, ls: EditFidelityServer, args: IdArgs, work_done: WorkDoneToken) -> SelectResult:
        raise AssertionError("never called")


class _Reject:
    name = Command.REJECT_PROPOSAL

    async def run(self, ls: EditFidelityServer, args: IdArgs, work_done: WorkDoneToken) -> RejectResult:
        raise AssertionError("never called")


def test_command_handlers_are_held_to_the_table():
    """Every command's handler is registered by `COMMANDS`: one per command, its `run` taking the table's
    argument Struct and returning its result Struct, or the server does not start."""
    others = [h for h in COMMAND_HANDLERS if h.name != Command.REJECT_PROPOSAL]
    with pytest.raises(TypeError, match="must take IdArgs and return RejectResult"):
        register_commands(EditFidelityServer(), [*others, _WrongResult()])
    with pytest.raises(TypeError, match="one handler per command"):
        register_commands(EditFidelityServer(), others)
    with pytest.raises(TypeError, match="one handler per command"):
        register_commands(EditFidelityServer(), [*COMMAND_HANDLERS, _Reject()])
    ls = EditFidelityServer()
    register_commands(ls, [*others, _Reject()])
    assert list(ls.protocol.fm.commands) == [*(h.name.value for h in others), Command.REJECT_PROPOSAL.value]


@pytest.mark.parametrize(
    ("typ", "raw", "message"),
    [
        (RequestEditArgs, {"version": 1, "instruction": "x"}, "missing `uri`"),
        (
            RequestEditArgs,
            {"uri": "u", "version": 1.5, "instruction": "x"},
            "`version` must be an integer, got a number 1.5",
        ),
        (
            RequestEditArgs,
            {"uri": "u", "version": 1, "instruction": "x", "n": 0},
            "`n` must be between 1 and 64, got a number 0",
        ),
        (
            RequestEditArgs,
            {
                "uri": "u",
                "version": 1,
                "instruction": "x",
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0}},
            },
            "`range.end.character` must be a non-negative integer",
        ),
        (
            RequestEditArgs,
            {"uri": "u", "version": 1, "instruction": "x", "backends": ["a", 3]},
            "`backends` must be an array of strings",
        ),
        (ApplyProposalArgs, {"id": "p", "hunks": [0, 2, 0]}, "`hunks` has duplicates"),
        (ApplyProposalArgs, {"id": "p", "rest": "drop"}, "`rest` must be one of keep, reject, got a string 'drop'"),
        (CheckChangeArgs, {"uri": "u"}, 'missing `baseline` ("snapshot", "git" or {"text": ...})'),
        (CheckChangeArgs, {"uri": "u", "baseline": {"text": "x" * 20_000_001}}, "`baseline.text` is too long"),
        (wire.BackendEntry, {"name": "k", "apiKeyEnv": "sk-secret value"}, "`apiKeyEnv` must be the NAME"),
    ],
)
def test_decode_errors_name_the_field(typ, raw, message):
    with pytest.raises(DecodeError) as info:
        convert(raw, typ)
    assert message in str(info.value)
    assert "sk-secret" not in str(info.value)  # a key put where its variable's name belongs is never echoed


def test_integral_floats_are_integers_and_good_values_decode():
    args = convert(
        {
            "uri": "u",
            "version": 3.0,
            "instruction": "fix",
            "n": 2.0,
            "range": {"start": {"line": 1.0, "character": 0}, "end": {"line": 2, "character": 0}},
        },
        RequestEditArgs,
    )
    assert (args.version, args.n, args.range.start.line) == (3, 2, 1)
    assert isinstance(args.version, int) and isinstance(args.range.start.line, int)
    assert convert({"uri": "u", "baseline": "git"}, CheckChangeArgs).baseline == "git"
    assert convert({"uri": "u", "baseline": {"text": ""}}, CheckChangeArgs).baseline.text == ""


def test_the_report_is_camel_case_on_the_wire_data_keys_stay_and_a_client_decodes_it_back():
    import msgspec

    from server.fidelity import measure
    from server.protocol.report import VARIANTS, FidelityReport

    before = "def area(start_line, end_line):\n    return end_line - start_line\n"
    after = "def area(first_line, end_line):\n    return end_line - first_line + 1\n"
    report = measure(before, after, gold=after)
    wire = msgspec.to_builtins(report)
    assert wire["goldDistance"] == msgspec.to_builtins(report.gold_distance)
    assert wire["parseErrors"] == {"original": None, "edited": None}
    assert set(wire["distance"]) == set(VARIANTS) == {"raw", "no_comments", "body_no_comments"}
    renamed = next(h for h in wire["hunks"] if h["renames"])
    assert renamed["renames"] == {"start_line": "first_line"}  # identifiers are data: left as they are
    assert renamed["startLine"] == report.hunks[0].start_line and "start_line" not in renamed
    assert renamed["edits"][0].keys() == {"range", "newText"}
    assert "cognitive_before" not in wire["functions"][0] and "cognitiveBefore" in wire["functions"][0]
    assert all("reason" not in c for c in wire["complexity"].values())  # omitted when absent (Python)

    # one convention: no key on the wire is snake_case, except the data (variant names, identifiers)
    def keys(v):
        if isinstance(v, dict):
            for k, x in v.items():
                yield k, v
                yield from keys(x)
        elif isinstance(v, list):
            for x in v:
                yield from keys(x)

    assert [k for k, owner in keys(wire) if "_" in k and owner is not renamed["renames"] and k not in VARIANTS] == []
    # a client (the benchmark) decodes the reply once into the same Structs: equal, numbers kept as sent
    back = msgspec.convert(msgspec.json.decode(msgspec.json.encode(wire)), FidelityReport)
    assert back == report
    assert [type(c.before) for c in back.complexity.values()] == [type(c.before) for c in report.complexity.values()]
    assert isinstance(back.complexity["paper"].after, int)  # an int stays an int (3, not 3.0)
