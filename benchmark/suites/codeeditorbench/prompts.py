"""Prompts: the paper's zero-shot instructions (api_inference.py) and its three-shot examples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from benchmark.suites.codeeditorbench.kinds import CONDITIONS, kind_of


class Task(Protocol):
    """What a prompt shows of a task (`tasks.Task` is one; this module does not import it: `tasks` composes
    its instructions here)."""

    @property
    def task_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def answer_language(self) -> str: ...
    @property
    def before(self) -> str: ...
    @property
    def after(self) -> str: ...
    @property
    def prompt_fields(self) -> dict[str, str]: ...


PREAMBLE = {
    "debug": "Please correct the errors in the buggy code snippet below, ensuring that your corrected code adheres "
    "to the specified programming language syntax and logic requirements. Validate your solution against "
    "the provided test cases to ensure its accuracy. Note that your solution should strictly consist of "
    "the corrected code only.",
    "translate": "Please translate the following code snippet to another programming language, ensuring that your "
    "translated code meets the syntax and logic requirements of the target programming language. "
    "Validate your solution against the provided test cases to confirm its accuracy. Note that your "
    "submission should strictly contain the translated code only.",
    "polish": "Please optimize the given code snippet to enhance its execution efficiency and reduce memory usage, "
    "while ensuring the accuracy of the code remains unaffected. Validate your solution against the "
    "provided test cases to ensure its accuracy. Note that your submission should strictly consist of "
    "the optimized code only.",
    "switch": "Please modify the given code snippet to implement a new function that is related to the original "
    "function implemented by the code. Ensure your modified code adheres to the programming language's "
    "syntax and logic requirements. Validate your solution against the provided test cases to ensure its "
    "accuracy. Your submission should strictly consist of the target code only.",
}
LANGUAGE_NAMES = {"python": "Python", "cpp": "C++", "java": "Java"}


def question(task: Task, *, with_code: bool) -> str:
    """The paper's question for a task; the code itself only for a worked example (the server sends
    the asked task's code as the document)."""
    f = task.prompt_fields
    fence = task.language
    code = f"```{fence}\n{task.before}```\n\n" if with_code else ""
    if task.kind == "debug":
        return (
            f"Below is the {f['language']} buggy code{':' if with_code else ' (the document)'}\n{code}"
            f"Correct the code and ensure it passes the following test case:\nInput: {f['input']}\n"
            f"Output: {f['output']}"
        )
    if task.kind == "translate":
        target = LANGUAGE_NAMES[task.answer_language]
        return (
            f"Below is the source code snippet in {f['source_lang']}{':' if with_code else ' (the document)'}\n"
            f"{code}Translate this code to {target}. Ensure your translated code works correctly with the test "
            f"case provided:\nInput: {f['input']}\nOutput: {f['output']}\n"
            f"Answer with the complete {target} code in a ```{task.answer_language} block."
        )
    if task.kind == "polish":
        return (
            f"Below is the source code snippet that needs optimization{':' if with_code else ' (the document)'}\n"
            f"{code}Optimize the code and ensure it passes the following test case:\nInput: {f['input']}\n"
            f"Output: {f['output']}"
        )
    return (
        f"Below is the code snippet that implements a specific function{':' if with_code else ' (the document)'}\n"
        f"{code}It currently performs the operation:\nInput: {f['similar_input']}\nOutput: {f['similar_output']}\n\n"
        "You are required to modify this code to implement a new function that is related to the original one, "
        f"as detailed below:\nInput: {f['input']}\nOutput: {f['output']}\n\n"
        "Ensure your modified code passes the provided test case."
    )


def compose(task: Task, condition: str, shots: Sequence[Task] | None) -> str:
    """The request for `condition` (`KIND` zero-shot, `KIND-3shot` with `shots`, the paper's worked
    examples: `tasks.instruction` finds them)."""
    kind = kind_of(condition)
    if kind != task.kind or condition not in CONDITIONS:
        raise ValueError(f"task {task.task_id} has no condition {condition!r}")
    parts = [PREAMBLE[kind]]
    if condition.endswith("-3shot"):
        if shots is None:
            raise ValueError(f"condition {condition!r} needs its worked examples")
        for ex in shots:
            if ex.task_id == task.task_id and ex.before == task.before:
                continue  # never the asked task itself (the samples are the paper's shots)
            answer = f"```{ex.answer_language}\n{ex.after}```"
            parts.append(f"### Question:\n{question(ex, with_code=True)}\n\n### Answer:\n{answer}")
        parts.append(f"### Question:\n{question(task, with_code=False)}")
    else:
        parts.append(question(task, with_code=False))
    return "\n\n".join(parts)
