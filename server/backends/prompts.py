"""Prompts for edit requests.

Our two styles, as in "When Models Edit Too Much": `generic` states the task only; `minimal` adds the
paper's explicit instruction to keep as much of the original code as possible. A request edits the
whole file or a selection (whole lines); for a selection the model sees the file as context and
answers with the replacement for the selected lines only. An empty document asks for new code.
The document's language (its LSP languageId) names the language and tags the code fences.

The CanItEdit paper's own formats, for replaying its benchmark as published (whole documents only):
`canitedit-chat` (its one-shot chat conversation; the answer's first fenced block is the code) and
`canitedit-direct` (its `## Code Before:` prompt for base models on the text-completion endpoint,
with its stop sequences; the answer is the code as it is).
`bare` sends the instruction alone as the user message (a suite whose instruction is already its paper's
whole prompt, as can-ai-code's templates are) and takes the first code block, else the whole answer.
"""

from __future__ import annotations

import msgspec

from server.protocol.names import STYLES, WHOLE_DOCUMENT_STYLES  # noqa: F401 - STYLES re-exported

# languageId -> (name in prose, code-fence tag); other ids are named as they are
LANGUAGES: dict[str, tuple[str, str]] = {
    "python": ("Python", "python"),
    "javascript": ("JavaScript", "javascript"),
    "typescript": ("TypeScript", "typescript"),
    "cpp": ("C++", "cpp"),
    "c": ("C", "c"),
    "java": ("Java", "java"),
    "go": ("Go", "go"),
    "rust": ("Rust", "rust"),
}


def language_names(language: str) -> tuple[str, str]:
    return LANGUAGES.get(language, (language or "Python", language or "python"))


def system_prompt(language: str = "python") -> str:
    name, tag = language_names(language)
    return (
        f"You are an expert {name} programmer who edits code on request. "
        f"Answer with the edited code in a single fenced ```{tag} code block."
    )


MINIMAL_INSTRUCTION = (
    "Keep as much of the original code as possible: make only the changes that the instruction "
    "requires. Do not rename identifiers, reformat, reorder, add or remove comments, docstrings, "
    "type hints, imports or input validation, and do not touch code that the instruction does not "
    "concern."
)

# The minimal instruction's prohibitions and the kinds of change (server.fidelity.judge.instruction) that ask
# for each: an instruction that asks to rename, document or validate must not be told not to. An
# instruction that asks for none of them gets MINIMAL_INSTRUCTION unchanged (the over-editing suite's
# `explicit` condition is that text: its prompts stay as recorded).
_VERBS = (("rename identifiers", "rename"), ("reformat", "formatting_only"), ("reorder", "reorder"))
_OBJECTS = (
    ("comments", "comments"),
    ("docstrings", "docstring"),
    ("type hints", "signature_change"),
    ("imports", "import_change"),
    ("input validation", "defensive"),
)


def minimal_instruction(instruction: str) -> str:
    """MINIMAL_INSTRUCTION without the prohibitions that the instruction itself asks to break."""
    from server.fidelity.judge.instruction import allowed_kinds, parse_instruction

    scope = parse_instruction(instruction)
    asked = allowed_kinds(scope)
    if scope.renames:
        asked.add("rename")
    if scope.asks_comments or "comment_removed" in asked:
        asked.add("comments")
    if scope.general_validation:
        asked.add("defensive")
    if scope.broad is not None:
        asked.add("reorder")
    verbs = [text for text, kind in _VERBS if kind not in asked]
    objects = [text for text, kind in _OBJECTS if kind not in asked]
    if len(verbs) == len(_VERBS) and len(objects) == len(_OBJECTS):
        return MINIMAL_INSTRUCTION
    if objects:
        verbs.append("add or remove " + _join(objects))
        if len(verbs) > 1:  # "reorder, or add or remove ...": the last item has its own "or"
            return _minimal_text(", ".join(verbs[:-1]) + ", or " + verbs[-1])
    return _minimal_text(_join(verbs) if verbs else None)


def _minimal_text(prohibited: str | None) -> str:
    head = (
        "Keep as much of the original code as possible: make only the changes that the instruction "
        "requires, and make all of them."
    )
    if prohibited is None:
        return f"{head} Do not touch code that the instruction does not concern."
    return f"{head} Beyond what it asks for, do not {prohibited}, and do not touch code that the instruction does not concern."


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


SELECTION_START = "# >>> SELECTION START"
SELECTION_END = "# <<< SELECTION END"


def selection_markers(language: str) -> tuple[str, str]:
    """The selection markers as line comments of the language (`#` for Python and shells, else `//`)."""
    if language in ("python", "shellscript", "ruby", "perl", "r", "yaml", "toml"):
        return SELECTION_START, SELECTION_END
    return "//" + SELECTION_START[1:], "//" + SELECTION_END[1:]


class ChatMessage(msgspec.Struct, frozen=True):
    role: str
    content: str


class PromptPlan(msgspec.Struct, frozen=True):
    """What to send and how to read the answer. Chat styles send `messages`; a completion style sends
    `prompt` to the text-completion endpoint with `stop`. `extract`: `longest` (our extractor: the
    longest fenced block of the language, else code-looking text), `first` (CanItEdit's: the lines of
    the first ``` block) or `raw` (the answer is the code)."""

    messages: list[ChatMessage] = []
    prompt: str | None = None
    stop: list[str] = []
    extract: str = "longest"


# CanItEdit's prompts (nuprl/CanItEdit benchmark/generate_completions.py), reproduced for replay.
CANITEDIT_SYSTEM = (
    "You are PythonEditGPT. You will be provided the original code snippet and an instruction that specifies "
    "the changes you need to make. You will produce the changed code, based on the original code and the "
    "instruction given. Only produce the code, do not include any additional prose."
)
_CANITEDIT_SHOT_USER = (
    "## Code Before\n```py\ndef add(a, b):\n    return a + b\n```\n\n## Instruction\n"
    'Add a "sub" function that subtracts two numbers. Also write docstrings for both functions and change a,b to x,y.'
)
_CANITEDIT_SHOT_ASSISTANT = (
    '## Code After\n```py\ndef add(x, y):\n    """Adds two numbers."""\n    return x + y\n\n'
    'def sub(x, y):\n    """Subtracts two numbers."""\n    return x - y\n```'
)
CANITEDIT_STOP = ["## Code After:", "## Instruction:", "## Code Before:", "## Test Case:", "## Explanation:"]


def canitedit_chat(instruction: str, text: str) -> list[ChatMessage]:
    return [
        ChatMessage("system", CANITEDIT_SYSTEM),
        ChatMessage("user", _CANITEDIT_SHOT_USER),
        ChatMessage("assistant", _CANITEDIT_SHOT_ASSISTANT),
        ChatMessage("user", f"## Code Before\n```py\n{text}\n```\n## Instruction\n{instruction}".strip()),
    ]


def canitedit_direct(instruction: str, text: str) -> str:
    return f"## Code Before:\n{text}\n## Instruction:\n{instruction}\n## Code After:\n"


def build_prompt(
    instruction: str,
    text: str,
    *,
    style: str = "generic",
    selection: tuple[int, int] | None = None,
    language: str = "python",
    answer_language: str | None = None,
    document_first: bool = False,
) -> PromptPlan:
    """The request for one edit in the given style (see the module docstring). `answer_language`: the
    language the answer is to be written in when it is not the document's (a translation).
    `document_first`: our styles put the document before the instruction, for a backend that reuses the
    KV cache of a prompt's prefix (the embedded model): the next request on the same document, whatever
    its instruction, then computes only what follows the document."""
    if answer_language and answer_language != language and style not in WHOLE_DOCUMENT_STYLES:
        return PromptPlan(
            messages=translation_messages(
                instruction, text, style=style, language=language, answer_language=answer_language
            )
        )
    if style == "canitedit-chat":
        return PromptPlan(messages=canitedit_chat(instruction, text), extract="first")
    if style == "canitedit-direct":
        return PromptPlan(prompt=canitedit_direct(instruction, text), stop=CANITEDIT_STOP, extract="raw")
    if style == "bare":
        return PromptPlan(messages=[ChatMessage("user", instruction)], extract="first_or_all")
    return PromptPlan(
        messages=build_messages(
            instruction, text, style=style, selection=selection, language=language, document_first=document_first
        )
    )


def translation_messages(
    instruction: str, text: str, *, style: str, language: str, answer_language: str
) -> list[ChatMessage]:
    """Chat messages asking for the document rewritten in another language (whole documents)."""
    name, tag = language_names(language)
    target, target_tag = language_names(answer_language)
    parts = [f"Rewrite the following {name} code in {target}.\n\nInstruction: {instruction.strip()}\n"]
    if style == "minimal":
        parts.append("Keep the program's structure, names and comments wherever the target language allows.\n")
    parts.append(_fence(text, tag))
    parts.append(f"\nAnswer with the complete {target} code in a single fenced ```{target_tag} code block.")
    return [ChatMessage("system", system_prompt(answer_language)), ChatMessage("user", "\n".join(parts))]


def _fence(code: str, tag: str = "python") -> str:
    # A fence longer than any backtick run inside the code keeps the block intact.
    longest = 0
    run = 0
    for ch in code:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    body = code if code.endswith("\n") else code + "\n"
    return f"{fence}{tag}\n{body}{fence}"


def build_messages(
    instruction: str,
    text: str,
    *,
    style: str = "generic",
    selection: tuple[int, int] | None = None,
    language: str = "python",
    document_first: bool = False,
) -> list[ChatMessage]:
    """Chat messages for one edit request in our styles (`generic`, `minimal`).

    `selection` is a pair of 0-based line indices (first, last inclusive) into `text`. `document_first`:
    the same parts with the document (and, for a selection, the selected lines) before the instruction.
    """
    instruction = instruction.strip()
    lines = text.splitlines(keepends=True)
    name, tag = language_names(language)
    parts: list[str] = []
    if not text.strip():
        parts.append(f"Write {name} code for the following request.\n\nInstruction: {instruction}\n")
        parts.append(f"Answer with the complete code in a single fenced ```{tag} code block.")
    elif selection is None and document_first:
        parts.append(f"Edit the following {name} code.\n")
        parts.append(_fence(text, tag))
        parts.append(f"\nInstruction: {instruction}\n")
        if style == "minimal":
            parts.append(minimal_instruction(instruction) + "\n")
        parts.append("Return the complete edited code.")
    elif selection is None:
        parts.append(f"Edit the following {name} code.\n\nInstruction: {instruction}\n")
        if style == "minimal":
            parts.append(minimal_instruction(instruction) + "\n")
        parts.append(_fence(text, tag))
        parts.append("\nReturn the complete edited code.")
    else:
        first, last = selection
        selected = "".join(lines[first : last + 1])
        start, end = selection_markers(language)
        marked = (
            "".join(lines[:first])
            + start
            + "\n"
            + selected
            + ("" if selected.endswith("\n") or not selected else "\n")
            + end
            + "\n"
            + "".join(lines[last + 1 :])
        )
        head = f"Edit the selected lines of the following {name} file (between `{start}` and `{end}`).\n"
        ask = [f"\nInstruction: {instruction}\n"] + (
            [minimal_instruction(instruction) + "\n"] if style == "minimal" else []
        )
        document = ["The file, for context:\n" + _fence(marked, tag), "\nThe selected lines:\n" + _fence(selected, tag)]
        parts += [head, *document, *ask] if document_first else [head + ask[0], *ask[1:], *document]
        parts.append(
            "\nReturn only the edited replacement for the selected lines, with their original "
            "indentation, without the selection markers."
        )
    return [ChatMessage("system", system_prompt(language)), ChatMessage("user", "\n".join(parts))]
