"""`edit-fidelity mcp` as an agent meets it: the real console script started by the MCP SDK's own client
over stdio, its tools, resource and prompt, real git repositories, and bad input answered with one tool
error while the server lives on."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import jsonschema
from agent_helpers import EXE, EXTRA, NEWTON, make_repo
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

from server import example
from server.fidelity import HUNK_KINDS


@asynccontextmanager
async def session(tmp_path: Path, cwd: Path | None = None) -> AsyncIterator[Client]:
    """A client of a fresh `edit-fidelity mcp` process; its stderr is checked for tracebacks at the end."""
    log = tmp_path / "mcp-stderr.log"
    with log.open("w") as err:
        params = StdioServerParameters(command=str(EXE), args=["mcp"], cwd=cwd or tmp_path)
        async with Client(stdio_client(params, errlog=err), read_timeout_seconds=120) as client:
            yield client
    assert "Traceback" not in log.read_text(), log.read_text()


def structured(result: CallToolResult) -> dict:
    assert not result.is_error, result.content
    data = result.structured_content
    assert data is not None
    assert json.loads(result.content[0].text) == data  # the same document as text, for text-only clients
    return data


async def test_tools_resource_and_prompt_describe_themselves(tmp_path: Path):
    async with session(tmp_path) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"check_edit", "check_git"}
        assert tools["check_edit"].input_schema["required"] == ["original", "edited"]
        assert {"instruction", "language", "path"} <= set(tools["check_edit"].input_schema["properties"])
        assert {"rev", "paths", "instruction", "repository"} == set(tools["check_git"].input_schema["properties"])
        for tool in tools.values():
            assert tool.annotations is not None and tool.annotations.read_only_hint
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        [resource] = (await client.list_resources()).resources
        kinds = (await client.read_resource(str(resource.uri))).contents[0]
        assert kinds.mime_type == "text/markdown"
        for kind in HUNK_KINDS:  # every kind the units can carry is explained
            assert f"| `{kind}` |" in kinds.text, kind
        [prompt] = (await client.list_prompts()).prompts
        text = (await client.get_prompt(prompt.name, {"task": "Fix the off-by-one in parse()"})).messages[0]
        assert "check_git" in text.content.text and "Fix the off-by-one in parse()" in text.content.text


async def test_check_edit_gives_units_severities_messages_and_flagged_statements(tmp_path: Path):
    async with session(tmp_path) as client:
        schema = {t.name: t.output_schema for t in (await client.list_tools()).tools}["check_edit"]
        plain = structured(
            await client.call_tool("check_edit", {"original": example.ORIGINAL, "edited": example.OVER_EDITED})
        )
        jsonschema.validate(plain, schema)
        assert plain["instruction"] is None and plain["language"] == "python"
        flagged = {k for u in plain["units"] if u["flagged"] for k in u["flaggedKinds"]}
        assert {"rename", "comment_removed", "defensive"} <= flagged
        assert plain["flagged"] == sum(u["flagged"] for u in plain["units"]) == plain["bySeverity"]["warning"]
        rename = next(u for u in plain["units"] if "renamed `scores` to `values`" in u["message"])
        assert rename["severity"] == "warning" and rename["lines"]["start"] == 4 and rename["tokensChanged"] >= 1
        fix = next(u for u in plain["units"] if u["kinds"] == ["logic"])
        assert not fix["flagged"] and fix["flaggedKinds"] == []
        assert plain["distance"]["tokens"] > 0 and 0 < plain["distanceNoComments"]["normalized"] < 1
        assert "flagged as not requested" in plain["summary"]

        # judged against the instruction: the rename it asks for is no longer flagged, the rest still is
        asked = structured(
            await client.call_tool(
                "check_edit",
                {
                    "original": example.ORIGINAL,
                    "edited": example.OVER_EDITED,
                    "instruction": "Rename `scores` to `values`, and let a score equal to the cutoff pass.",
                    "path": "stats.py",
                },
            )
        )
        renamed = next(u for u in asked["units"] if "renamed `scores` to `values`" in u["message"])
        assert "rename" not in renamed["flaggedKinds"]
        assert any("defensive" in u["flaggedKinds"] for u in asked["units"])

        # the fix's unit stays unflagged; the extra stop and the value never read are flagged on their lines
        fixed = structured(
            await client.call_tool(
                "check_edit",
                {"original": NEWTON, "edited": EXTRA, "instruction": "Fix `minimum` so that it converges."},
            )
        )
        jsonschema.validate(fixed, schema)
        assert not any(u["flagged"] for u in fixed["units"])
        lines = EXTRA.splitlines()
        by_line = {s["lines"]["start"]: s for s in fixed["statements"]}
        stop = next(i for i, ln in enumerate(lines, 1) if "if abs(g)" in ln)
        assert set(by_line) == {stop, len(lines) - 2}, fixed["statements"]
        assert by_line[stop]["kinds"] == ["defensive"] and by_line[stop]["message"].startswith(
            "`if abs(g) < self.tol:`"
        )
        assert by_line[len(lines) - 2]["kinds"] == ["added_code"]
        assert fixed["flagged"] == 2 and "2 flagged" in fixed["summary"]

        other = structured(
            await client.call_tool("check_edit", {"original": "x = 1\n", "edited": "x = 2\n", "path": "a.go"})
        )
        assert other["language"] == "go"


async def test_check_git_reports_each_changed_file(tmp_path: Path):
    root = tmp_path / "repo"
    make_repo(
        root,
        {
            "m.py": "def f(a):\n    # add one\n    return a + 1\n",
            "gone.py": "x = 1\n",
            "blob.bin": b"\0\1\2",
            "pkg/keep.py": "y = 2\n",
        },
    )
    (root / "m.py").write_text("def f(value):\n    return value + 2\n")
    (root / "gone.py").unlink()
    (root / "blob.bin").write_bytes(b"\0\1\3")
    (root / "new.py").write_text("def added():\n    return 2\n")
    async with session(tmp_path, cwd=root) as client:
        schema = {t.name: t.output_schema for t in (await client.list_tools()).tools}["check_git"]
        data = structured(await client.call_tool("check_git", {"instruction": "Make f add two."}))
        jsonschema.validate(data, schema)
        assert data["revision"] == "HEAD" and Path(data["root"]).resolve() == root.resolve()
        files = {f["path"]: f for f in data["files"]}
        assert {p: f["status"] for p, f in files.items()} == {
            "m.py": "M",
            "gone.py": "D",
            "blob.bin": "M",
            "new.py": "A",
        }
        kinds = {k for u in files["m.py"]["result"]["units"] if u["flagged"] for k in u["flaggedKinds"]}
        assert {"rename", "comment_removed"} <= kinds
        assert files["m.py"]["result"]["instruction"] == "Make f add two."
        assert "binary file" in files["blob.bin"]["error"] and "result" not in files["blob.bin"]
        assert "deleted" in files["gone.py"]["error"]
        # a new function the instruction does not ask for, used by nothing
        [added] = files["new.py"]["result"]["units"]
        assert added["flagged"] and added["flaggedKinds"] == ["added_code"], added
        assert data["flagged"] == files["m.py"]["result"]["flagged"] + 1

        # from another directory, only some paths
        some = structured(
            await client.call_tool("check_git", {"rev": "main", "paths": ["m.py"], "repository": str(root)})
        )
        assert [f["path"] for f in some["files"]] == ["m.py"]


async def test_bad_input_is_one_tool_error_and_the_server_lives_on(tmp_path: Path):
    root = tmp_path / "repo"
    make_repo(root, {"m.py": "x = 1\n"})
    crowded = tmp_path / "crowded"
    make_repo(crowded, {"m.py": "x = 1\n"})
    for i in range(301):  # one more than a call takes
        (crowded / f"n{i}.py").write_text(f"n = {i}\n")
    huge = "x = 1\n" * 200_000  # 1.2 million characters
    bad = [
        ("check_edit", {"original": "x = 1\n"}, "`edited` is missing"),
        ("check_edit", {}, "`original` is missing"),
        ("check_edit", {"original": huge, "edited": "x = 2\n"}, "`original` is too long (at most 1,000,000"),
        ("check_edit", {"original": "a\0b", "edited": "x"}, "`original` holds NUL characters"),
        ("check_edit", {"original": 5, "edited": "x"}, "`original`"),
        ("check_edit", {"original": "a", "edited": "b", "language": "cobol"}, "`language` cobol: not a supported"),
        ("check_edit", {"original": "a", "edited": "b", "instruction": "x" * 20_001}, "`instruction` is too long"),
        ("check_git", {"rev": "no-such-rev", "repository": str(root)}, "no such commit"),
        ("check_git", {"rev": "--output=/tmp/x", "repository": str(root)}, "cannot start with '-'"),
        ("check_git", {"rev": ""}, "`rev` is empty"),
        ("check_git", {"repository": str(tmp_path / "missing")}, "is not a directory"),
        ("check_git", {"repository": str(tmp_path)}, "not a git repository"),
        ("check_git", {"paths": "m.py", "repository": str(root)}, "`paths`"),
        ("check_git", {"paths": ["../../elsewhere.py"], "repository": str(root)}, "outside repository"),
        (
            "check_git",
            {"repository": str(crowded)},
            "301 files changed against HEAD; at most 300 at a time: name some in `paths`",
        ),
        ("no_such_tool", {}, "Unknown tool"),
    ]
    async with session(tmp_path, cwd=tmp_path) as client:
        for name, args, expected in bad:
            result = await client.call_tool(name, args)
            assert result.is_error, (name, args, result.structured_content)
            [content] = result.content
            assert expected in content.text, (name, args, content.text)
            assert "\n" not in content.text and "Traceback" not in content.text and len(content.text) < 600
        # and it still works
        good = structured(await client.call_tool("check_git", {"repository": str(root)}))
        assert good["files"] == [] and good["summary"] == "no changes against HEAD"


def test_serve_does_not_load_the_mcp_sdk():
    """`serve` is what editors start: the MCP server and its SDK stay out of it (server/cli.py BUILTIN)."""
    code = (
        "import json, sys; from server.cli import build_parser; build_parser(['serve']).parse_args(['serve']); "
        "from server.lsp import create_server; create_server(); print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(json.loads(done.stdout))
    assert "server.lsp.server" in loaded
    assert not {m for m in loaded if m == "mcp" or m.startswith(("mcp.", "server.mcp"))}
