"""The editor's `minimal` prompt does not forbid what the instruction asks for (renaming, documenting,
validating...), and stays byte for byte what it was for every instruction that asks for none of
those: the over-editing suite's `explicit` condition (its recorded prompts) among them."""

from __future__ import annotations

import pytest

from benchmark.suites.overedit.tasks import EXPLICIT_ASK, GENERIC_ASK
from server.backends.prompts import MINIMAL_INSTRUCTION, build_messages, build_prompt, minimal_instruction

CODE = "def f(x):\n    return x + 1\n"


@pytest.mark.parametrize("instruction", [EXPLICIT_ASK, GENERIC_ASK, "fix the bug", "make it return x + 2"])
def test_instructions_that_ask_for_none_of_them_keep_the_recorded_text(instruction):
    assert minimal_instruction(instruction) == MINIMAL_INSTRUCTION
    [_, user] = build_messages(instruction, CODE, style="minimal")
    assert MINIMAL_INSTRUCTION + "\n" in user.content
    assert build_prompt(instruction, CODE, style="minimal").messages == build_messages(
        instruction, CODE, style="minimal"
    )


@pytest.mark.parametrize(
    ("instruction", "no_longer_forbidden", "still_forbidden"),
    [
        ("rename `x` to `value`", "rename identifiers", "docstrings"),
        ("add a docstring to f", "docstrings", "rename identifiers"),
        ("add type hints", "type hints", "input validation"),
        ("validate the input and raise ValueError on negative numbers", "input validation", "docstrings"),
        ("explain each line with a comment", "comments", "docstrings"),
    ],
)
def test_what_the_instruction_asks_for_is_not_forbidden(instruction, no_longer_forbidden, still_forbidden):
    text = minimal_instruction(instruction)
    assert no_longer_forbidden not in text and still_forbidden in text
    assert text.startswith("Keep as much of the original code as possible")
    [_, user] = build_messages(instruction, CODE, style="minimal")
    assert text in user.content and MINIMAL_INSTRUCTION not in user.content
    selection = build_messages(instruction, "a = 1\n" + CODE, style="minimal", selection=(1, 2))
    assert text in selection[1].content


def test_a_broad_request_keeps_only_the_scope_rule():
    text = minimal_instruction("refactor this into a class")
    assert "do not touch code that the instruction does not concern" in text.lower() and "rename" not in text


def test_the_generic_style_is_untouched():
    [_, user] = build_messages("rename `x` to `value`", CODE, style="generic")
    assert "Keep as much" not in user.content


@pytest.mark.parametrize("selection", [None, (1, 2)])
def test_document_first_holds_the_same_parts_with_the_document_before_the_instruction(selection):
    """The embedded model's layout: the document first, so that its KV cache keeps it across instructions."""
    text = "a = 1\n" + CODE
    for instruction in ("fix the bug", "rename `x` to `value`"):
        [sys_a, plain] = build_messages(instruction, text, style="minimal", selection=selection)
        [sys_b, first] = build_messages(instruction, text, style="minimal", selection=selection, document_first=True)
        assert sys_a == sys_b
        fence = first.content.index("```python")
        assert first.content.index(f"Instruction: {instruction}") > fence
        assert plain.content.index(f"Instruction: {instruction}") < plain.content.index("```python")
        assert sorted(first.content.split()) == sorted(plain.content.split())  # the same words, reordered
    # two instructions on one document share everything up to the instruction
    [_, one] = build_messages("fix the bug", text, style="minimal", selection=selection, document_first=True)
    [_, two] = build_messages("add a docstring", text, style="minimal", selection=selection, document_first=True)
    shared = len(one.content.split("\nInstruction:")[0])
    assert one.content[:shared] == two.content[:shared] and "return x + 1" in one.content[:shared]
