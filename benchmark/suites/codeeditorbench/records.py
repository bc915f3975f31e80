"""Published records: the jsonl files' own field names (the paper's typo `scource_lang` included)."""

from __future__ import annotations

import msgspec

Tests = list[str] | str  # a list, or a Python/JSON literal of one (the published files have both)


class _TestedRecord(msgspec.Struct, kw_only=True):
    """The problem and its tests, as the debug, translate and polish records name them."""

    title: str = ""
    difficulty: int | str | None = None
    public_tests_input: str = ""
    public_tests_output: str = ""
    private_tests_input: Tests = []
    private_tests_output: Tests = []


class DebugRecord(_TestedRecord, kw_only=True):
    idx: int
    code_language: str
    incorrect_solutions: str
    solutions: str
    type: str = ""


class TranslateRecord(_TestedRecord, kw_only=True):
    idx: int
    source_code: str
    source_lang: str
    target_lang: str
    target_code: str
    num: int | None = None
    id: int | None = None


class PolishRecord(_TestedRecord, kw_only=True):
    num: int
    source_code: str
    efficient_code: str
    scource_lang: str
    average_running_time: float | None = None
    average_memory: float | None = None


class SwitchRecord(msgspec.Struct, kw_only=True):
    num: int
    language: str
    similar_source_code: str
    target_source_code: str
    similar_id: int | str | None = None
    target_id: int | str | None = None
    pair_title: list[str] = []
    similar_content: str = ""
    target_content: str = ""
    public_similar_tests_input: str = ""
    public_similar_tests_output: str = ""
    public_target_tests_input: str = ""
    public_target_tests_output: str = ""
    private_target_tests_input: Tests = []
    private_target_tests_output: Tests = []


RECORDS: dict[str, type[msgspec.Struct]] = {
    "debug": DebugRecord,
    "translate": TranslateRecord,
    "polish": PolishRecord,
    "switch": SwitchRecord,
}
