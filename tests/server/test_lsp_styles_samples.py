"""requestEdit with the CanItEdit paper's prompt formats, `n` samples from one request, top_p, and
documents in other languages; against a scripted OpenAI-protocol server on 127.0.0.1."""

from __future__ import annotations

import itertools

import msgspec
import pytest
from lsp_helpers import SAMPLE, backend_entry, execute, start_session

from server.backends.extract import extract_for
from server.backends.prompts import CANITEDIT_STOP, build_prompt
from server.fidelity import TextEdit, apply_text_edits
from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code

URI = "file:///tmp/sample.py"
CPP = '#include <cstdio>\nint main() {\n    int a, b;\n    scanf("%d %d", &a, &b);\n    printf("%d\\n", a - b);\n}\n'


def _paper_chat(req: dict) -> str:
    # the CanItEdit one-shot reply shape: "## Code After" and a ```py block, then prose with another block
    code = req["messages"][-1]["content"].split("```py\n", 1)[1].split("\n```", 1)[0]
    return f"## Code After\n```py\n{code.replace('if v < limit:', 'if v > limit:')}\n```\nAlso:\n```py\nprint(1)\n```\n"


def _direct(req: dict) -> str:
    prompt = req["prompt"]
    before = prompt.split("## Code Before:\n", 1)[1].split("\n## Instruction:", 1)[0]
    return before.replace("if v < limit:", "if v > limit:") + "\n"


_counter = itertools.count()


def _numbered(req: dict) -> str:  # a different answer per sample
    return fenced(user_code(req).replace("return x * 2", f"return x * {next(_counter) % 3 + 3}"))


def _cpp(req: dict) -> str:
    code = req["messages"][-1]["content"].split("```cpp\n", 1)[1].split("\n```", 1)[0]
    return "Fixed:\n```c++\n" + code.replace("a - b", "a + b") + "\n```\n"


@pytest.fixture(scope="module")
def scripted():
    with ScriptedServer(
        {
            "paper": [Step(content=_paper_chat)],
            "direct": [Step(content=_direct)],
            "many": [Step(content=_numbered)],
            "cpp": [Step(content=_cpp)],
        }
    ) as srv:
        yield srv


async def test_canitedit_chat_format_and_first_block_extraction(lsp, scripted):
    editor = await start_session(lsp, {"backends": [backend_entry(scripted, "paper", style="canitedit-chat")]})
    editor.open(URI, SAMPLE)
    [p] = (await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix it"}))[
        "proposals"
    ]
    assert p["status"] == "ok" and p["style"] == "canitedit-chat"
    msgs = scripted.requests_for("paper")[-1].body["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[0]["content"].startswith("You are PythonEditGPT.")
    assert msgs[-1]["content"].endswith("## Instruction\nfix it")
    # the first code block is the code (CanItEdit's extraction), not the longer or the last one
    assert p["report"]["distance"]["raw"]["tokens"] == 1


async def test_canitedit_direct_uses_text_completions_with_stop_tokens(lsp, scripted):
    editor = await start_session(lsp, {"backends": [backend_entry(scripted, "direct", style="canitedit-direct")]})
    editor.open(URI, SAMPLE)
    [p] = (await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "fix it"}))[
        "proposals"
    ]
    assert p["status"] == "ok", p["error"]
    [req] = scripted.requests_for("direct")
    assert req.path.endswith("/completions") and not req.path.endswith("/chat/completions")
    assert req.body["prompt"] == f"## Code Before:\n{SAMPLE}\n## Instruction:\nfix it\n## Code After:\n"
    assert req.body["stop"] == CANITEDIT_STOP
    assert p["report"]["distance"]["raw"]["tokens"] == 1
    # a paper style edits whole documents: a selection is refused by name
    with pytest.raises(Exception, match="whole documents"):
        await execute(
            lsp,
            "editFidelity.requestEdit",
            {
                "uri": URI,
                "version": 1,
                "instruction": "x",
                "style": "canitedit-chat",
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            },
        )


async def test_n_samples_come_from_one_request_with_top_p(lsp, scripted):
    editor = await start_session(lsp, {"backends": [backend_entry(scripted, "many", temperature=0.8, topP=0.95)]})
    editor.open(URI, SAMPLE)
    before = len(scripted.requests_for("many"))
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "x", "n": 3})
    props = result["proposals"]
    assert [p["sample"] for p in props] == [0, 1, 2] and all(p["status"] == "ok" for p in props)
    assert len({p["id"] for p in props}) == 3
    [req] = scripted.requests_for("many")[before:]
    assert req.body["n"] == 3 and req.body["top_p"] == 0.95 and req.body["temperature"] == 0.8
    # each sample is its own proposal with its own edits
    assert len({p["edits"][0]["newText"] for p in props}) == 3
    with pytest.raises(Exception, match="`n` must be between 1 and 64"):
        await execute(lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "x", "n": 0})


async def test_a_cpp_document_gets_a_cpp_prompt_and_its_fences_are_read(lsp, scripted):
    editor = await start_session(lsp, {"backends": [backend_entry(scripted, "cpp")]})
    editor.open("file:///tmp/main.cpp", CPP, language="cpp")
    result = await execute(
        lsp, "editFidelity.requestEdit", {"uri": "file:///tmp/main.cpp", "version": 1, "instruction": "add instead"}
    )
    [p] = result["proposals"]
    assert p["status"] == "ok", p["error"]
    assert not any("parse as Python" in w for w in result["warnings"])
    body = scripted.requests_for("cpp")[-1].body["messages"]
    assert "C++ programmer" in body[0]["content"] and "```cpp\n" in body[-1]["content"]
    edits = msgspec.convert(p["edits"], list[TextEdit])
    assert apply_text_edits(CPP, edits) == CPP.replace("a - b", "a + b")  # a minimal edit: the operator


def test_prompt_plans_and_extraction_modes():
    chat = build_prompt("do it", "x = 1\n", style="canitedit-chat")
    assert chat.extract == "first" and chat.prompt is None and len(chat.messages) == 4
    direct = build_prompt("do it", "x = 1\n", style="canitedit-direct")
    assert direct.extract == "raw" and direct.messages == [] and direct.prompt.endswith("## Code After:\n")
    new = build_prompt("write add(a, b)", "", language="javascript")
    assert "Write JavaScript code" in new.messages[-1].content and "```javascript" in new.messages[-1].content
    sel = build_prompt("x", "int a;\nint b;\n", selection=(1, 1), language="java")
    assert "// >>> SELECTION START" in sel.messages[-1].content
    # first: CanItEdit's reading (first block, untagged or not); none -> no code
    assert extract_for("a\n```\nx = 1\n```\n```py\nlonger = 2\n```", mode="first") == "x = 1\n"
    assert extract_for("no code here", mode="first") is None
    assert extract_for("y = 2", mode="raw") == "y = 2\n"
    # other languages: the block tagged for the language wins over other tags
    answer = "```python\nprint(1)\n```\n```js\nfunction f() { return 1; }\n```"
    assert extract_for(answer, language="javascript") == "function f() { return 1; }\n"
    assert extract_for("I cannot do that.", language="cpp") is None
    assert extract_for("int main() {\n  return 0;\n}", language="cpp") == "int main() {\n  return 0;\n}\n"


def test_bare_style_sends_the_instruction_alone_and_reads_the_first_block():
    plan = build_prompt("Write a JavaScript function f(n).", "", style="bare", language="javascript")
    assert [(m.role, m.content) for m in plan.messages] == [("user", "Write a JavaScript function f(n).")]
    assert (
        extract_for(
            "```js\nfunction f(n) { return n; }\n```\n```js\nother()\n```", mode="first_or_all", language="javascript"
        )
        == "function f(n) { return n; }\n"
    )
    assert extract_for("def f(n):\n    return n", mode="first_or_all") == "def f(n):\n    return n\n"
    assert extract_for("", mode="first_or_all") is None


async def test_answer_language_asks_for_a_translation_and_reads_its_code(lsp, scripted):
    editor = await start_session(lsp, {"backends": [backend_entry(scripted, "cpp")]})
    py = "a, b = map(int, input().split())\nprint(a - b)\n"
    editor.open(URI, py)
    before = len(scripted.requests_for("cpp"))
    # the scripted model answers with the (translated) C++ program of the CPP fixture in a ```c++ block
    scripted.scripts["cpp"] = [Step(content=lambda req: "```c++\n" + CPP.replace("a - b", "a + b") + "```\n")]
    result = await execute(
        lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": "translate", "answerLanguage": "cpp"}
    )
    [p] = result["proposals"]
    assert p["status"] == "ok", p["error"]
    body = scripted.requests_for("cpp")[before].body["messages"]
    assert "C++ programmer" in body[0]["content"]
    assert (
        body[-1]["content"].startswith("Rewrite the following Python code in C++.")
        and "```python\n" in body[-1]["content"]
    )
    edits = msgspec.convert(p["edits"], list[TextEdit])
    assert apply_text_edits(py, edits) == CPP.replace("a - b", "a + b")
    with pytest.raises(Exception, match="answerLanguage"):
        await execute(
            lsp,
            "editFidelity.requestEdit",
            {
                "uri": URI,
                "version": 1,
                "instruction": "x",
                "answerLanguage": "cpp",
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            },
        )
