"""Prompts for edit requests.

Two styles, as in "When Models Edit Too Much": `generic` states the task only; `minimal` adds the
paper's explicit instruction to keep as much of the original code as possible. A request edits the
whole file or a selection (whole lines); for a selection the model sees the file as context and
answers with the replacement for the selected lines only.
"""

from __future__ import annotations

import msgspec

SYSTEM = (
    "You are an expert Python programmer who edits code on request. "
    "Answer with the edited code in a single fenced ```python code block."
)

MINIMAL_INSTRUCTION = (
    "Keep as much of the original code as possible: make only the changes that the instruction "
    "requires. Do not rename identifiers, reformat, reorder, add or remove comments, docstrings, "
    "type hints, imports or input validation, and do not touch code that the instruction does not "
    "concern."
)

SELECTION_START = "# >>> SELECTION START"
SELECTION_END = "# <<< SELECTION END"


class ChatMessage(msgspec.Struct, frozen=True):
    role: str
    content: str


def _fence(code: str) -> str:
    # A fence longer than any backtick run inside the code keeps the block intact.
    longest = 0
    run = 0
    for ch in code:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    body = code if code.endswith("\n") else code + "\n"
    return f"{fence}python\n{body}{fence}"


def build_messages(
    instruction: str,
    text: str,
    *,
    style: str = "generic",
    selection: tuple[int, int] | None = None,
) -> list[ChatMessage]:
    """Chat messages for one edit request.

    `selection` is a pair of 0-based line indices (first, last inclusive) into `text`.
    """
    instruction = instruction.strip()
    lines = text.splitlines(keepends=True)
    parts: list[str] = []
    if selection is None:
        parts.append(f"Edit the following Python code.\n\nInstruction: {instruction}\n")
        if style == "minimal":
            parts.append(MINIMAL_INSTRUCTION + "\n")
        parts.append(_fence(text))
        parts.append("\nReturn the complete edited code.")
    else:
        first, last = selection
        selected = "".join(lines[first : last + 1])
        marked = (
            "".join(lines[:first])
            + SELECTION_START
            + "\n"
            + selected
            + ("" if selected.endswith("\n") or not selected else "\n")
            + SELECTION_END
            + "\n"
            + "".join(lines[last + 1 :])
        )
        parts.append(
            "Edit the selected lines of the following Python file (between "
            f"`{SELECTION_START}` and `{SELECTION_END}`).\n\nInstruction: {instruction}\n"
        )
        if style == "minimal":
            parts.append(MINIMAL_INSTRUCTION + "\n")
        parts.append("The file, for context:\n" + _fence(marked))
        parts.append("\nThe selected lines:\n" + _fence(selected))
        parts.append(
            "\nReturn only the edited replacement for the selected lines, with their original "
            "indentation, without the selection markers."
        )
    return [ChatMessage("system", SYSTEM), ChatMessage("user", "\n".join(parts))]
