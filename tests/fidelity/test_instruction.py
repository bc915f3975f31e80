"""The instruction rules: what an instruction asks for and names, and the verdict per unit, both ways."""

from __future__ import annotations

import pytest

from server.fidelity.judge.instruction import (
    BROAD_RULES,
    KIND_RULES,
    UnitFacts,
    allowed_kinds,
    guard_tests,
    judge_unit,
    parse_instruction,
    split_identifier,
    split_request,
)
from server.protocol.report import UNREQUESTED_KINDS


def verdict(instruction: str | None, **facts):
    scope = parse_instruction(instruction) if instruction is not None else None
    return judge_unit(scope, UnitFacts(**facts), UNREQUESTED_KINDS)


def test_names_in_backticks_plain_and_calls():
    s = parse_instruction(
        "Fix the `calculate_all_properties` and multi_apply functions to have the signatures "
        "`calculate_all_properties(text, functions)` and `multi_apply(data, col, colnames, functions)`;"
        " also check isPasswordStrong and combination_unlimited_rep()."
    )
    assert {
        "calculate_all_properties",
        "multi_apply",
        "text",
        "functions",
        "colnames",
        "ispasswordstrong",
        "combination_unlimited_rep",
    } <= s.names
    assert s.signatures == {"calculate_all_properties", "multi_apply"}
    assert "fix" not in s.names and "fix" in s.words  # plain English words are weak evidence only
    assert s.shown[0] == "calculate_all_properties"


def test_rename_phrases():
    assert parse_instruction("Rename `duplicate` to `peek`").renames == (("duplicate", "peek"),)
    assert parse_instruction("switch is_alpha to char_count and count mod 3").renames == (("is_alpha", "char_count"),)
    assert parse_instruction("Change the `find_managers_manager` method to `find_manager_n`").renames == (
        ("find_managers_manager", "find_manager_n"),
    )
    assert parse_instruction("change the loop to a comprehension").renames == ()  # not code


def test_mentions_spelled_out_names():
    s = parse_instruction("Flip the correlation function to compute the covariance, using a ridge regression model")
    assert s.mentions("covariance") and s.mentions("corr") and s.mentions("RidgeCV")
    assert not s.mentions("total") and not s.mentions("element_wise_product")
    assert split_identifier("isPasswordStrong") == ["is", "password", "strong"]
    assert split_identifier("find_manager_n") == ["find", "manager", "n"]


@pytest.mark.parametrize(
    ("kind", "asks", "does_not_ask"),
    [
        ("rename", "use descriptive names for the variables", "fix the name lookup"),
        ("formatting_only", "reformat this file to PEP 8", "return the string in the given format"),
        ("comment_removed", "drop the outdated comments", "fix the off-by-one"),
        ("docstring", "add docstrings", "fix the loop"),
        ("signature_change", "add a `strict` parameter", "fix the loop bound in `f`"),
        ("import_change", "add the missing imports", "use a set here"),
        ("defensive", "raise a ValueError on negative input", "return None on a miss"),
        ("defensive", "add input validation", "check why the loop stops early"),
        ("deletion", "remove the dead code", "fix the comparison"),
    ],
)
def test_kind_rules_both_ways(kind, asks, does_not_ask):
    assert kind in allowed_kinds(parse_instruction(asks))
    assert kind not in allowed_kinds(parse_instruction(does_not_ask))


def test_rule_tables_cover_only_known_kinds():
    assert {k for k, _ in KIND_RULES} <= UNREQUESTED_KINDS
    assert {label for label, _, _ in BROAD_RULES} == {"refactor", "rewrite", "optimise", "translate", "modernise"}
    assert all(set(kinds) <= UNREQUESTED_KINDS for _, _, kinds in BROAD_RULES)


@pytest.mark.parametrize(
    "instruction",
    ["refactor this", "rewrite `f` from scratch", "translate it to idiomatic Python", "make it object-oriented"],
)
def test_broad_requests_allow_most_kinds_but_never_placeholders(instruction):
    assert verdict(instruction, kinds=("rename",), renames={"a": "b"}).flagged is False
    assert verdict(instruction, kinds=("lazy_placeholder",)).flagged is True
    assert verdict(instruction, kinds=("outside_target",)).flagged is True


def test_an_optimisation_changes_code_not_names_or_checks():
    assert not verdict("optimise the loop", kinds=("deletion",), function="f").flagged
    assert not verdict("optimise the loop", kinds=("signature_change",), function="f").flagged
    assert verdict("optimise the loop", kinds=("rename",), renames={"a": "b"}).flagged
    assert verdict("optimise the loop", kinds=("defensive",)).flagged
    # the words, not the code: `translate_from_list` asks for no translation
    assert parse_instruction("include a method `translate_from_list`").broad is None
    assert parse_instruction("add a method translate_from_list").broad is None


def test_words_point_at_the_named_function():
    guard = dict(kinds=("defensive",), function="Box.unlock")
    assert verdict("make `peek` raise when locked", **guard).flagged  # validation words, another function
    assert not verdict("make `unlock` raise when locked", **guard).flagged
    assert not verdict("make `peek` raise when locked", **guard, function_changes_logic=True).flagged
    assert not verdict("raise on bad input", **guard).flagged  # the instruction names no code


def test_rename_requested_or_not():
    facts = dict(kinds=("rename",), renames={"duplicate": "peek"})
    ok = verdict("Remove the `duplicate()` method and add a new method `peek()`", **facts)
    assert not ok.flagged and "`peek`" in ok.reason
    asked = verdict("rename duplicate to peek", **facts)
    assert not asked.flagged and "rename" in asked.reason
    other = verdict("Compute the `lcm` of the two numbers", **facts)
    assert other.flagged and other.reason == "not requested: the instruction names only `lcm`"
    assert other.unrequested == ("rename",)
    assert verdict(None, **facts).flagged  # an observed change: no instruction, the core's view


def test_rename_that_follows_a_requested_rename():
    instruction = "Change the `find_managers_manager` method to `find_manager_n`"
    follows = verdict(instruction, kinds=("rename",), renames={"all_managers_managers_names": "all_manager_n_names"})
    assert not follows.flagged
    unrelated = verdict(instruction, kinds=("rename",), renames={"total": "acc"})
    assert unrelated.flagged


def test_rename_of_an_imported_name_and_of_rewritten_code():
    assert not verdict(
        "use L2 regularisation",
        kinds=("rename",),
        renames={"LinearRegression": "RidgeCV"},
        imported=frozenset({"LinearRegression"}),
    ).flagged
    assert not verdict("fix it", kinds=("rename",), renames={"count": "s"}, rename_rewritten=True).flagged
    assert verdict("fix it", kinds=("rename",), renames={"count": "s"}).flagged


def test_signature_given_named_parameter_or_code_change():
    facts = dict(
        kinds=("signature_change",),
        function="multi_apply",
        new_names=frozenset({"multi_apply", "functions"}),
        old_names=frozenset({"multi_apply"}),
    )
    assert not verdict("to have the signature `multi_apply(data, col, colnames, functions)`", **facts).flagged
    assert not verdict("pass `functions` through", **facts).flagged
    assert verdict("fix `multi_apply`", **facts).flagged  # named function, but nothing asks for its interface
    assert not verdict("fix `multi_apply`", **facts, function_changes_logic=True).flagged


def test_validation_requested_or_not():
    facts = dict(kinds=("defensive",))
    assert not verdict("raise a ValueError when the input is malformed", **facts).flagged
    assert verdict("fix the comparison bug", **facts).flagged
    # `if a:` -> `if not a:` changes a condition; it adds no guard
    assert not verdict("fix the comparison bug", **facts, same_statements=True).flagged


def test_docstring_update_and_removal():
    edit = dict(kinds=("docstring",), function="solve", docstring_kept=True)
    assert not verdict("use A* in `solve`", **edit).flagged
    assert not verdict("fix it", **edit, function_changes_logic=True).flagged
    assert verdict("fix it", **edit).flagged
    removal = dict(kinds=("docstring",), function="solve", docstring_kept=False, function_changes_logic=True)
    assert verdict("use A* in `solve`", **removal).flagged
    assert not verdict("remove the docstrings", **removal).flagged
    assert verdict("fix it", kinds=("rename",), renames={"tokens": "tokens_value"}).flagged
    renamed = dict(
        kinds=("docstring",),
        docstring_kept=True,
        old_names=frozenset({"group", "C4"}),
        new_names=frozenset({"group", "C8"}),
    )
    assert not verdict("Edit the C4 class to represent the class C8", **renamed).flagged
    assert verdict("Fix the group product", **renamed).flagged


def test_imports_deletions_comments():
    assert not verdict("fix it", kinds=("import_change",), import_used=True).flagged
    assert verdict("fix it", kinds=("import_change",)).flagged
    assert not verdict("fix it", kinds=("deletion",), moved=True).flagged
    assert not verdict("fix it", kinds=("deletion",), function="f", function_changes_logic=True).flagged
    assert verdict("fix it", kinds=("deletion",), function="f").flagged
    assert verdict("fix `f`", kinds=("comment_removed",)).flagged
    assert not verdict("remove the comments", kinds=("comment_removed",)).flagged


def test_logic_units_carry_their_guards_but_not_their_renames():
    assert not verdict("fix it", kinds=("defensive", "logic"), tokens_changed=120).flagged  # new or rewritten code
    assert verdict("fix it", kinds=("defensive", "logic"), tokens_changed=20).flagged
    assert not verdict("fix it", kinds=("defensive", "logic"), new_code=True).flagged
    assert not verdict("fix it", kinds=("signature_change", "logic"), function="f").flagged
    assert verdict("fix it", kinds=("rename", "logic"), renames={"v": "value"}).flagged
    assert verdict("fix it", kinds=("logic", "comment_removed")).flagged
    assert verdict("fix it", kinds=("logic", "outside_target")).flagged
    assert not verdict("fix it", kinds=("logic",)).flagged


def test_raise_words_are_read_with_their_negation_and_exception_class():
    raising = dict(kinds=("defensive",), raises=frozenset({"raise", "ValueError"}))
    returning = dict(kinds=("defensive",))
    assert parse_instruction("Do not throw an exception if the buffer is full").no_raise
    assert verdict("Do not throw an exception if the buffer is full", **raising).flagged
    assert not verdict("never throw errors; return None instead", **returning).flagged
    assert not verdict("raise a `ValueError` on negative weights", **raising).flagged
    assert verdict("raise a `ZeroDivisionError` when dividing by zero", **raising).flagged
    assert not verdict(
        "raise a ZeroDivisionError when dividing by zero",
        kinds=("defensive",),
        raises=frozenset({"raise", "ZeroDivisionError"}),
    ).flagged


def test_an_unused_import_is_never_requested_unless_named():
    unused = dict(kinds=("import_change",), import_unused=frozenset({"os"}))
    assert verdict("update the imports", **unused).flagged
    assert verdict("refactor this module", **unused).flagged
    assert not verdict("add an import of `os`", **unused).flagged


def test_docstring_and_comment_words_need_a_verb():
    assert "docstring" not in allowed_kinds(parse_instruction("fix it, it does not respect the docstring"))
    assert "docstring" in allowed_kinds(parse_instruction("update the docstrings"))
    assert "comment_removed" not in allowed_kinds(parse_instruction("the comment says what it should do"))
    assert "comment_removed" in allowed_kinds(parse_instruction("remove the outdated comments"))


def test_a_quoted_specification_is_context_not_a_request():
    spec = (
        "I am trying to implement a function with the following specifications:\n"
        "Count the words. The function should raise the exception for: ValueError if text is empty.\n"
        "Use black to format the output.\n\nWhat is wrong? Fix and complete my function."
    )
    request, context = split_request(spec)
    assert "What is wrong" in request and "raise" not in request and "raise" in context
    s = parse_instruction(spec)
    assert s.context and not allowed_kinds(s) and "black" not in s.words
    assert verdict(spec, kinds=("defensive",), raises=frozenset({"raise", "ValueError"})).flagged
    # the ask itself still counts, wherever the quote is
    assert "defensive" in allowed_kinds(parse_instruction("See the spec below:\nsums things\n\nAdd input validation."))
    # fenced code and `>` lines quote; a lead-in with nothing after its quote leaves only the lead-in
    assert not allowed_kinds(parse_instruction("Fix it.\n```\ndef f():\n    raise ValueError  # validate\n```"))
    assert not allowed_kinds(parse_instruction("> rename everything\nfix the off-by-one"))
    assert parse_instruction("Rename `a` to `b` per the following description:\nraise on bad input").renames == (
        ("a", "b"),
    )


def test_a_sentence_of_the_original_code_describes_it_and_asks_nothing():
    original = 'def f(xs):\n    """Sum the values and raise ValueError when xs is empty."""\n    return sum(xs)\n'
    ask = "Sum the values and raise ValueError when xs is empty. Fix the bug."
    assert "defensive" in allowed_kinds(parse_instruction(ask))
    assert "defensive" not in allowed_kinds(parse_instruction(ask, original))
    assert "Fix the bug" in split_request(ask, original)[0]
    # a short sentence or one that adds a verb is the user's own
    assert "defensive" in allowed_kinds(parse_instruction("Make it raise ValueError when xs is empty.", original))


@pytest.mark.parametrize(
    ("code", "cases"),
    [
        ("    if x is None:\n        raise ValueError('x')\n", {"none"}),
        ("    if not isinstance(x, int):\n        raise TypeError\n", {"type"}),
        ("    if not values:\n        return 0\n", {"empty"}),
        ("    if len(values) == 0:\n        return 0\n", {"empty"}),
        ("    assert n >= 0\n", {"range"}),
        ("  if (x === null || x === undefined) { throw new Error('x'); }\n", {"none"}),
        ("    Objects.requireNonNull(x);\n", {"none"}),
        ("    total += x\n", set()),
    ],
)
def test_guard_tests_name_the_case_a_condition_checks(code, cases):
    assert guard_tests(code) == cases


def test_a_raise_request_for_one_case_does_not_excuse_a_guard_for_another():
    none_guard = dict(kinds=("defensive",), raises=frozenset({"raise", "ValueError"}), guard_tests=frozenset({"none"}))
    assert verdict("throw a `ValueError` if there are any negative cycles", **none_guard).flagged
    assert not verdict("raise a `ValueError` if the graph is None", **none_guard).flagged
    assert not verdict("make `f` robust against bad input", **none_guard).flagged  # validation in general
    assert not verdict("raise a `ValueError` on bad input", **dict(none_guard, guard_tests=frozenset())).flagged


def test_an_edge_case_described_is_not_a_request_for_validation():
    guard = dict(kinds=("defensive",), raises=frozenset({"raise", "ValueError"}), guard_tests=frozenset({"none"}))
    assert verdict("There is a special edge case where the list is sorted. Fix `f` for it.", **guard).flagged
    assert not verdict("handle the edge cases in `f`", **guard).flagged
    assert not verdict("make sure `f` covers every edge case", **guard).flagged
