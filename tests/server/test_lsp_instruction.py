"""The instruction sets the scope, through the real server: each instruction form, requested and not.

The scripted backend answers with one kind of change at a time (nothing else differs), so each case
is one unit: the instruction that asks for it leaves it unflagged and says why; one that does not ask
for it flags it and says what the instruction named instead.
"""

from __future__ import annotations

import pytest
from lsp_helpers import execute, settings_for, start_session, wait_for
from lsprotocol import types

from tools.doubles.scripted import Step, fenced

URI = "file:///tmp/scope.py"

BASE = '''import math


def lcm(a, b):
    """Least common multiple."""
    return a * b // math.gcd(a, b)


def mean_above(values, limit):
    """Mean of the values above limit."""
    total = 0
    count = 0
    for v in values:
        # only the large ones
        if v > limit:
            total += v
            count += 1
    return total / count if count else 0.0
'''

RENAMED = BASE.replace("total", "acc")
SIGNATURE = BASE.replace("def mean_above(values, limit):", "def mean_above(values, limit, strict=False):")
GUARDED = BASE.replace(
    '    """Mean of the values above limit."""\n',
    '    """Mean of the values above limit."""\n'
    '    if not values:\n        raise ValueError("values must not be empty")\n',
)
DOCSTRING = BASE.replace('"""Least common multiple."""', '"""Return the least common multiple of a and b."""')
NO_DOCSTRING = BASE.replace('    """Least common multiple."""\n', "")
NO_COMMENT = BASE.replace("        # only the large ones\n", "")
BLANK_LINE = BASE.replace("    total = 0\n", "    total = 0\n\n")
IMPORTED = BASE.replace("import math\n", "import math\nimport os\n")
REINDENTED = BASE.replace("\n    ", "\n  ")  # the same tokens, every line re-indented


def _script(backend, name: str, text: str) -> str:
    code = text if text.endswith("\n") else text + "\n"  # the closing fence goes on its own line
    backend.scripts[name] = [Step(content=lambda req, code=code: fenced(code))]
    return name


async def _propose(lsp, backend, name: str, text: str, instruction: str, **extra) -> dict:
    result = await execute(
        lsp,
        "editFidelity.requestEdit",
        {"uri": URI, "version": 1, "instruction": instruction, "backends": [name], **extra},
    )
    [p] = result["proposals"]
    assert p["status"] == "ok", p
    assert p["report"]["hunks"], "the scripted answer must change something"
    return p


CASES = [
    # (form, edited text, instructions that ask for it, instructions that do not)
    (
        "rename",
        RENAMED,
        ["rename `total` to `acc`", "rename total to acc in mean_above", "use more descriptive variable names"],
        ["fix the comparison in `mean_above`", "compute the `lcm` of a and b"],
    ),
    (
        "signature",
        SIGNATURE,
        [
            "change `mean_above` to have the signature `mean_above(values, limit, strict=False)`",
            "add a `strict` parameter to mean_above",
        ],
        ["fix the comparison in `mean_above`"],
    ),
    (
        "validation",
        GUARDED,
        [
            "add input validation to `mean_above`",
            "raise a ValueError on empty input",
            "handle errors for an empty list",
        ],
        [
            "fix the comparison in `mean_above`",
            "return 0.0 when nothing is above the limit",
            "raise a ValueError when `limit` is negative",  # another case than the guard's (an empty list)
            # a quoted specification describes the code; only the ask after it is a request
            "I am trying to implement a function with the following specifications:\nMean of the values above "
            "limit; should raise ValueError on empty input.\n\nWhat is wrong? Fix my function.",
            "Here is the spec:\n```\nraise ValueError on empty input\n```\nFix the comparison in `mean_above`",
        ],
    ),
    (
        "docstring",
        DOCSTRING,
        ["update the docstring of `lcm`", "document the `lcm` function"],
        ["fix the comparison in `mean_above`"],
    ),
    (
        "docstring removal",
        NO_DOCSTRING,
        ["remove the docstrings", "drop the docstring of `lcm`"],
        ["fix `lcm` for negative numbers"],
    ),
    ("comment", NO_COMMENT, ["remove the comments", "clean up `mean_above`"], ["fix the comparison in `mean_above`"]),
    (
        "import",
        IMPORTED,
        ["add an import of `os`", "import os at the top"],
        ["fix the comparison in `mean_above`", "update the imports"],
    ),
    (
        "broad",
        RENAMED,
        ["refactor `mean_above`", "rewrite mean_above", "translate this to idiomatic Python"],
        ["fix `lcm`", "optimise mean_above", "refactor `lcm`"],
    ),
]


@pytest.mark.parametrize(("form", "edited", "asks", "does_not_ask"), CASES, ids=[c[0] for c in CASES])
async def test_each_instruction_form_both_ways(lsp, backend, form, edited, asks, does_not_ask):
    name = _script(backend, f"scope-{form.replace(' ', '-')}", edited)
    editor = await start_session(lsp, settings_for(backend, name))
    editor.open(URI, BASE)
    for instruction in asks:
        p = await _propose(lsp, backend, name, edited, instruction)
        assert p["flaggedHunks"] == [], (instruction, p["hunkMessages"])
        assert all("not requested" not in m for m in p["hunkMessages"]), (instruction, p["hunkMessages"])
        for hunk, message in zip(p["report"]["hunks"], p["hunkMessages"]):  # each message says why
            core = hunk["message"].removesuffix(" (not requested)")
            assert message.startswith(core + " (") and len(message) > len(core) + 4, message
    for instruction in does_not_ask:
        p = await _propose(lsp, backend, name, edited, instruction)
        assert p["flaggedHunks"], (instruction, p["hunkMessages"])
        flagged = [p["hunkMessages"][i] for i in p["flaggedHunks"]]
        assert all("(not requested" in m for m in flagged), flagged
        if "`" in instruction:  # the message says what the instruction did name
            assert all("the instruction names only `" in m for m in flagged), flagged
    # the diagnostics of the last (unrequested) proposal are warnings
    diags = await wait_for(lambda: [d for d in lsp.diagnostics.get(URI, ()) if "not requested" in d.message])
    assert all(d.severity == types.DiagnosticSeverity.Warning for d in diags), diags


async def test_named_signature_is_not_flagged_but_an_unnamed_rename_is(lsp, backend):
    """100_pandas_apply: the signature the instruction gives is requested; 6_locked_box: so is the rename to
    the name it asks for. A rename nobody named, in the same answer, is still flagged."""
    edited = SIGNATURE.replace("total", "acc")
    name = _script(backend, "scope-mixed", edited)
    editor = await start_session(lsp, settings_for(backend, name))
    editor.open(URI, BASE)
    p = await _propose(
        lsp, backend, name, edited, "Fix `mean_above` to have the signature `mean_above(values, limit, strict)`"
    )
    messages = p["hunkMessages"]
    sig = [i for i, m in enumerate(messages) if "signature" in m]
    renamed = [i for i, m in enumerate(messages) if "renamed `total` to `acc`" in m]
    assert sig and renamed and not set(sig) & set(renamed)
    assert (
        not set(sig) & set(p["flaggedHunks"])
        and "the instruction gives the signature of `mean_above`" in messages[sig[0]]
    )
    assert set(renamed) <= set(p["flaggedHunks"])
    assert "not requested: the instruction names only `mean_above`, `values`, `limit`, `strict`" in messages[renamed[0]]


async def test_selection_scope_outside_is_flagged_whatever_the_words(lsp, backend):
    edited = BASE.replace('"""Least common multiple."""', '"""LCM."""').replace("total", "acc")
    name = _script(backend, "scope-outside", edited)
    editor = await start_session(lsp, settings_for(backend, name))
    editor.open(URI, BASE)
    selection = {"start": {"line": 8, "character": 0}, "end": {"line": 18, "character": 0}}  # mean_above
    p = await _propose(lsp, backend, name, edited, "refactor this function", range=selection)
    outside = [i for i, h in enumerate(p["report"]["hunks"]) if "outside_target" in h["kinds"]]
    inside = [i for i, h in enumerate(p["report"]["hunks"]) if "outside_target" not in h["kinds"]]
    assert outside and inside
    assert set(outside) <= set(p["flaggedHunks"]) and not set(inside) & set(p["flaggedHunks"])
    assert "outside the selected lines" in p["hunkMessages"][outside[0]]


async def test_whitespace_is_a_hint_unless_large_and_severity_settings(lsp, backend):
    blank = _script(backend, "scope-blank", BLANK_LINE)
    wide = _script(backend, "scope-reindent", REINDENTED)
    renamed = _script(backend, "scope-loud-rename", RENAMED)
    settings = settings_for(backend, blank, wide, renamed)
    settings["thresholds"]["whitespaceHintLines"] = 5
    # layout is a hint by default (formatting_only); raised to warning here to see the whitespace rule's two sides
    settings["severity"] = {
        "rename": "error",
        "whitespace": "information",
        "formatting_only": "warning",
        "docstring": "loud",
        "bogus": "hint",
    }
    editor = await start_session(lsp, settings)
    editor.open(URI, BASE)
    listing = await execute(lsp, "editFidelity.listBackends", {})
    problems = " | ".join(listing["problems"])
    assert "severity.docstring must be one of error, warning, information, hint, got 'loud'" in problems
    assert "severity.bogus: unknown kind" in problems

    def severities(backend_name):
        return [d.severity for d in lsp.diagnostics.get(URI, ()) if f"[{backend_name}]" in d.message]

    p = await _propose(lsp, backend, blank, BLANK_LINE, "fix the comparison in `mean_above`")
    assert p["flaggedHunks"] == [0] and "reformats code" in p["hunkMessages"][0]
    assert await wait_for(lambda: severities(blank)) == [types.DiagnosticSeverity.Information]
    p = await _propose(lsp, backend, blank, BLANK_LINE, "reformat the code")
    assert p["flaggedHunks"] == []
    # the same tokens over more lines than whitespaceHintLines: formatting_only's level, a warning here
    p = await _propose(lsp, backend, wide, REINDENTED, "fix the comparison in `mean_above`")
    assert p["flaggedHunks"]
    await wait_for(lambda: severities(wide))
    assert types.DiagnosticSeverity.Warning in severities(wide)  # the long re-indented block
    assert set(severities(wide)) <= {types.DiagnosticSeverity.Warning, types.DiagnosticSeverity.Information}
    p = await _propose(lsp, backend, renamed, RENAMED, "fix the comparison in `mean_above`")
    assert p["flaggedHunks"]
    assert await wait_for(lambda: severities(renamed)) and set(severities(renamed)) == {types.DiagnosticSeverity.Error}


def _canitedit(name: str) -> dict:
    import json

    from data_paths import data_dir

    root = data_dir()
    path = root / "canitedit" / "canitedit_test.jsonl" if root else None
    if path is None or not path.exists():
        pytest.skip("CanItEdit data not available (EDIT_FIDELITY_DATA)")
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row["full_name"] == name:
            return row
    raise AssertionError(f"{name} not in the CanItEdit data")


@pytest.mark.parametrize("condition", ["instruction_descriptive", "instruction_lazy"])
@pytest.mark.parametrize(
    ("name", "change"),
    [("100_pandas_apply", "changes the signature of"), ("6_locked_box", "renamed `duplicate` to `peek`")],
)
async def test_reference_edits_of_the_issue_are_not_flagged(lsp, backend, condition, name, change):
    """100_pandas_apply changes the two signatures its instruction gives; 6_locked_box renames `duplicate`
    to `peek` as asked. Their reference edits, proposed through the server, are not flagged for it."""
    row = _canitedit(name)
    script = _script(backend, f"gold-{name}", row["after"])
    editor = await start_session(lsp, settings_for(backend, script))
    uri = "file:///tmp/canitedit.py"
    editor.open(uri, row["before"])
    result = await execute(lsp, "editFidelity.requestEdit", {"uri": uri, "version": 1, "instruction": row[condition]})
    [p] = result["proposals"]
    assert p["status"] == "ok"
    named = [m for m in p["hunkMessages"] if change in m]
    assert named and all("not requested" not in m for m in named), p["hunkMessages"]
    diags = await wait_for(lambda: lsp.diagnostics.get(uri))
    assert not [d for d in diags if change in d.message and d.severity <= types.DiagnosticSeverity.Warning]


NEWTON = """class Descent:
    def __init__(self, tol=1e-6):
        self.tol = tol

    def minimum(self, f, grad, x):
        steps = 0
        while steps < 100 and abs(grad(x)) > self.tol:
            x = x - f(x) / grad(x)
            steps += 1
        return x
"""
EXTRA = NEWTON.replace(
    "            x = x - f(x) / grad(x)\n",
    "            g = grad(x)\n            if abs(g) < self.tol:\n                break\n"
    "            x = x - 0.1 * g\n            g = grad(x)\n",
)


async def test_statements_nobody_asked_for_inside_the_fix_get_their_own_diagnostics(lsp, backend):
    """The fix and an extra stop (and a value recomputed that nothing reads) are one unit: the unit stays
    unflagged, so "accept minimal" keeps the fix, and each statement is flagged on its own lines."""
    name = _script(backend, "scope-statements", EXTRA)
    editor = await start_session(lsp, settings_for(backend, name))
    editor.open(URI, NEWTON)
    p = await _propose(lsp, backend, name, EXTRA, "Fix `minimum` so that it converges: take a gradient step.")
    assert p["flaggedHunks"] == []
    statements = p["flaggedStatements"]
    assert [(s["kinds"], s["severity"]) for s in statements] == [(["defensive"], 2), (["added_code"], 2)]
    lines = EXTRA.splitlines()
    assert lines[statements[0]["startLine"] - 1].strip() == "if abs(g) < self.tol:"
    assert lines[statements[1]["startLine"] - 1].strip() == "g = grad(x)"
    assert "`if abs(g) < self.tol:` (line" in statements[0]["message"] and "early exit" in statements[0]["message"]
    diags = await wait_for(lambda: [d for d in lsp.diagnostics.get(URI, ()) if "of the proposal)" in d.message])
    assert len(diags) == 2 and all(d.severity == types.DiagnosticSeverity.Warning for d in diags)
    unit = p["report"]["hunks"][statements[0]["hunk"]]
    assert all(d.range.start.line == unit["startLine"] - 1 for d in diags)  # on the unit: the buffer is NEWTON
    assert {d.data["lines"][0] for d in diags} == {s["startLine"] for s in statements}
