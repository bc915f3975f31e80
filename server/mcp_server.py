"""`edit-fidelity mcp`: the fidelity check for coding agents, as a Model Context Protocol server (stdio).

Tools: `check_edit` (two texts, the instruction if known) and `check_git` (the working tree against a
revision, per file), both answering `server.protocol.checked` documents: every change unit with its kinds,
whether it is flagged as not requested, its severity and message as the editor shows them, and the new
statements flagged inside units that hold the fix. A resource and a prompt explain the kinds and when to
call the tools. Bad input is one tool error (`isError`, one line: what is wrong, what to do), never a
crash of the server.
"""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any

import msgspec
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from server.check_cli import Change, CheckError, git_files, language_of
from server.edit_check import judge
from server.fidelity import measure
from server.fidelity.judge.flags import WHITESPACE_HINT_LINES
from server.protocol.checked import KIND_DESCRIPTIONS, CheckedEdit, CheckedFile, CheckedRevision
from server.protocol.settings import SEVERITY_KINDS, Thresholds

NAME = "edit-fidelity"
KINDS_URI = "edit-fidelity://kinds"
MAX_TEXT = 1_000_000  # characters per text: a large source file; beyond that, one file of check_git at a time
MAX_INSTRUCTION = 20_000
MAX_FILES = 300  # changed files per check_git call; more: name `paths`

INSTRUCTIONS = (
    "edit-fidelity tells which parts of a code edit nobody asked for: renames, reformatting, removed comments, "
    "docstring edits, signature and import changes, added input validation, placeholders, deletions, unrequested "
    "new code. Before you report a coding task as done, call check_git (rev HEAD, or the commit the task started "
    "from) with the user's request as `instruction`; for each flagged unit or statement, revert it unless the "
    "task needs it, and say why for any you keep. check_edit compares two texts you hold. The resource "
    f"{KINDS_URI} explains the kinds."
)

Text = Annotated[str, Field(max_length=MAX_TEXT)]
Instruction = Annotated[
    str | None,
    Field(
        max_length=MAX_INSTRUCTION,
        description="What the user asked for, in their words. Units are judged against it (a rename the "
        "request asks for is not flagged); without it every change of an unrequested kind is flagged.",
    ),
]

_NO_REPOSITORY = "give `repository`, a directory inside a git work tree, or compare two texts with check_edit"
_LIMITS = Thresholds()  # the defaults the answers are judged with
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def check_edit(
    original: Annotated[Text, Field(description="The file's full text before the edit.")],
    edited: Annotated[Text, Field(description="The file's full text after the edit.")],
    instruction: Instruction = None,
    language: Annotated[
        str | None,
        Field(
            max_length=40,
            description="python, javascript, typescript, tsx, java, c, cpp, go or rust; default: from `path`, "
            "else Python. Other languages get token distances only.",
        ),
    ] = None,
    path: Annotated[
        str | None, Field(max_length=4096, description="The file's name or path, for its language.")
    ] = None,
) -> CallToolResult:
    """Judge one edit: which change units (and which new statements inside them) were not asked for.

    Returns every change unit of `edited` against `original`: its kinds, `flagged` (not requested), the
    severity and message an editor would show, its lines in the edited text, its token distance; the flagged
    statements; the summary and counts. Revert flagged units unless the task needs them."""
    _text("original", original)
    _text("edited", edited)
    try:
        lang = language_of(path or "", language)
    except CheckError as exc:
        raise ToolError(str(exc).replace("--language", "`language`")) from None
    result = judge(measure(original, edited, language=lang), original, edited, instruction=instruction)
    return _answer(result)


def check_git(
    rev: Annotated[
        str,
        Field(
            min_length=1,
            max_length=256,
            description="The revision to compare the working tree with: HEAD for the uncommitted changes, or "
            "the commit, branch or tag the task started from.",
        ),
    ] = "HEAD",
    paths: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=4096)]] | None,
        Field(max_length=MAX_FILES, description="Only these files or folders (relative to `repository`)."),
    ] = None,
    instruction: Instruction = None,
    repository: Annotated[
        str | None,
        Field(
            max_length=4096,
            description="A directory inside the git work tree; default: the server's working directory.",
        ),
    ] = None,
) -> CallToolResult:
    """Judge every file changed since `rev` (working tree, untracked files included, ignored ones not).

    The same answer as check_edit per file (`files[].result`; `error` says why a file was skipped: binary,
    not UTF-8, too large, deleted). Call it before reporting a task as done, with the user's request as
    `instruction`, and revert the flagged units the task does not need."""
    if rev.startswith("-"):
        raise ToolError(f"`rev` {rev!r} cannot start with '-': name a commit, branch or tag (e.g. HEAD)")
    cwd = Path(repository) if repository else Path(os.getcwd())
    if not cwd.is_dir():
        raise ToolError(f"`repository` {str(cwd)!r} is not a directory: give a directory of a git work tree")
    try:
        top, changed = git_files(rev, list(paths or []), cwd, most=MAX_FILES)
    except CheckError as exc:  # said for the command line: say it in the tool's terms
        said = str(exc).replace("run it inside a git work tree, or compare two files", _NO_REPOSITORY)
        said = said.replace("name some paths", "name some in `paths`")
        raise ToolError(said.replace("--git ", "`rev` ").replace("--git", "`repository`")) from None
    files: list[CheckedFile] = []
    for f in changed:
        ch = f.change
        error = f.error
        if error is None and ch.status == "D":
            error = "deleted (a removed file is not judged)"
        if error is None and max(len(f.before), len(f.after)) > MAX_TEXT:
            error = f"too large to check here (more than {MAX_TEXT:,} characters): check it on its own"
        if error is not None:
            files.append(_file(ch, error=error))
            continue
        report = measure(f.before, f.after, language=language_of(ch.path))
        files.append(_file(ch, result=judge(report, f.before, f.after, instruction=instruction)))
    flagged = sum(f.result.flagged for f in files if f.result is not None)
    checked = sum(1 for f in files if f.result is not None)
    summary = (
        f"no changes against {rev}"
        if not files
        else f"{len(files)} changed file{'s' if len(files) != 1 else ''} against {rev}, {checked} checked; "
        + (
            f"{flagged} change{'s' if flagged != 1 else ''} flagged as not requested: revert them or say why "
            "they are needed"
            if flagged
            else "nothing flagged"
        )
    )
    return _answer(CheckedRevision(summary=summary, flagged=flagged, revision=rev, root=str(top), files=files))


def _file(ch: Change, *, result: CheckedEdit | None = None, error: str | None = None) -> CheckedFile:
    return CheckedFile(
        path=ch.path, status=ch.status, old_path=ch.old_path, similarity=ch.similarity, result=result, error=error
    )


def kinds_text() -> str:
    """The kinds, their default severities and what to do about a flagged unit (the resource and prompt)."""
    rows = "\n".join(
        f"| `{kind}` | {SEVERITY_KINDS.get(kind, ('never flagged', ''))[0]} | {text} |"
        for kind, text in KIND_DESCRIPTIONS.items()
    )
    return (
        "# edit-fidelity: the kinds of change\n\n"
        "An edit is split into change units (finer than lines: a fix and a rename on one line are two units). "
        "Each unit has kinds. A unit is `flagged` when it holds a kind the request did not ask for (judged "
        "against `instruction`; without one every kind below but `logic` and `comment_only` is flagged). "
        "Inside a unit that holds the requested fix, new statements are judged one by one: a value assigned "
        "and never read, an early exit on an input case the request does not mention, a raise it does not "
        "ask for (`statements`).\n\n"
        "| kind | severity when flagged | what it is |\n|---|---|---|\n"
        f"{rows}\n\n"
        f"A whitespace-only unit of up to {WHITESPACE_HINT_LINES} lines is a hint; a flagged unit that changes "
        f"{_LIMITS.hunk_tokens_error} tokens or more, or adds {_LIMITS.complexity_error:g} or more cognitive "
        "complexity, is an error.\n\n"
        "What to do: revert each flagged unit or statement unless the task needs it (the message says what "
        "changed and why it was judged unrequested); for any you keep, say why in your answer. An unflagged "
        "`logic` unit is the change itself: words alone cannot judge it."
    )


def finish_prompt(task: str | None = None) -> str:
    """Check your edits against the task before you say you are done."""
    ask = f'with instruction "{task}"' if task else "with the user's request as `instruction`"
    return (
        f"Before you report the task as done, call the edit-fidelity tool check_git (rev HEAD, or the commit "
        f"the task started from) {ask}. For each flagged unit or statement in its answer, revert the change "
        "unless the task needs it, then call check_git again. In your final answer, list any flagged change "
        "you kept and why.\n\n" + kinds_text()
    )


def create() -> MCPServer:
    """The server: two read-only tools, the kinds as a resource, the end-of-task check as a prompt."""
    server = _Server(
        NAME,
        title="Edit fidelity",
        instructions=INSTRUCTIONS,
        version=_version(),
        tools=[_tool(check_edit, CheckedEdit, "Check an edit"), _tool(check_git, CheckedRevision, "Check a git diff")],
        log_level="WARNING",
    )
    server.resource(
        KINDS_URI, name="kinds", title="Change kinds", mime_type="text/markdown", description=kinds_text.__doc__
    )(kinds_text)
    server.prompt(name="check_before_finishing", title="Check the edits before finishing")(finish_prompt)
    return server


class _Server(MCPServer):
    """A tool's error as one line that starts with the tool's name; arguments that fail the input schema
    name the argument instead of pydantic's report. A crash keeps the SDK's message (its text stays in the
    server's log)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(f"{name}: {_bad_arguments(exc.__cause__)}") from exc.__cause__
            said = str(exc).removeprefix(f"Error executing tool {name}: ")
            raise ToolError(said if said.startswith("Unknown tool") else f"{name}: {said}") from exc


def _bad_arguments(error: ValidationError) -> str:
    out = []
    for e in error.errors():
        where = ".".join(str(p) for p in e["loc"]) or "arguments"
        kind, ctx = e["type"], e.get("ctx") or {}
        if kind == "missing":
            out.append(f"`{where}` is missing")
        elif kind == "string_too_long":
            out.append(f"`{where}` is too long (at most {ctx.get('max_length', '?'):,} characters)")
        elif kind == "too_long":
            out.append(f"`{where}` has too many items (at most {ctx.get('max_length', '?'):,})")
        elif kind == "string_too_short":
            out.append(f"`{where}` is empty")
        else:
            out.append(f"`{where}`: {e['msg']}")
    return "; ".join(out) + " (see the tool's input schema)"


def _text(name: str, value: str) -> None:
    if "\0" in value:
        raise ToolError(f"`{name}` holds NUL characters: binary data, not text; give the file's text")


def _answer(result: msgspec.Struct) -> CallToolResult:
    """Structured content, and the same JSON as text for clients that read only text (the MCP spec's advice)."""
    return CallToolResult(
        content=[TextContent(type="text", text=msgspec.json.encode(result).decode())],
        structured_content=msgspec.to_builtins(result),
    )


def _tool(fn: Any, result: type[msgspec.Struct], title: str) -> Tool:
    tool = Tool.from_function(fn, title=title, annotations=_READ_ONLY)
    tool.fn_metadata.output_schema = _schema(result)  # advertised; the SDK validates only pydantic models
    return tool


def _schema(result: type[msgspec.Struct]) -> dict[str, Any]:
    """msgspec's JSON schema with the root `$ref` inlined: MCP wants an object schema at the top."""
    schema = msgspec.json.schema(result)
    defs = schema.pop("$defs", {})
    root = defs[schema["$ref"].rsplit("/", 1)[1]]
    return {**root, "$defs": defs}


def _version() -> str:
    try:
        return version(NAME)
    except PackageNotFoundError:
        return "0.0.0"
