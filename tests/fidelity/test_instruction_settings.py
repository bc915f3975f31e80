"""The severity settings: parsed and validated like the other settings, and the same in the VS Code schema."""

from __future__ import annotations

import json
from pathlib import Path

from server.lsp.settings import SEVERITY_DEFAULTS, SEVERITY_NAMES, Thresholds, parse_settings
from server.protocol.report import UNREQUESTED_KINDS

PACKAGE = Path(__file__).resolve().parents[2] / "client-vscode" / "package.json"


def test_every_unrequested_kind_has_a_severity_and_whitespace_is_a_hint():
    assert set(SEVERITY_DEFAULTS) == UNREQUESTED_KINDS | {"whitespace"}
    assert SEVERITY_DEFAULTS["whitespace"] == 4 and SEVERITY_DEFAULTS["rename"] == 2
    assert Thresholds().whitespace_hint_lines == 10


def test_layout_is_a_hint_by_default_however_many_lines():
    """formatting_only keeps the syntax tree: a hint, even re-indenting a whole function (issue 28: a
    reference whose layout differs from the code it fixes must not be a wall of warnings)."""
    from server.fidelity import measure
    from server.fidelity.judge.flags import flagged_severity

    before = "def f(a):\n" + "".join(f"    x{i} = a + {i}\n" for i in range(30)) + "    return a\n"
    report = measure(before, before.replace("\n    ", "\n  "))
    assert [h.kinds for h in report.hunks] == [["formatting_only"]]
    assert flagged_severity(report.hunks[0], ["formatting_only"]) == 4
    assert SEVERITY_DEFAULTS["formatting_only"] == 4


def test_bad_values_keep_their_default_with_a_problem():
    s, problems = parse_settings(
        {
            "localModel": None,
            "thresholds": {"whitespaceHintLines": 3},
            "severity": {"rename": "error", "docstring": "loud", "nonsense": "hint"},
        }
    )
    levels = s.thresholds.severity_levels()
    assert levels["rename"] == 1 and levels["docstring"] == 2 and s.thresholds.whitespace_hint_lines == 3
    assert problems == [
        "severity.docstring must be one of error, warning, information, hint, got 'loud'",
        "severity.nonsense: unknown kind; known: " + ", ".join(SEVERITY_DEFAULTS),
    ]
    s, problems = parse_settings({"localModel": None, "severity": ["rename"]})
    assert problems == ["severity must be an object of kind: level, got list"] and s.thresholds.severity == {}


def test_vscode_schema_declares_the_same_kinds_levels_and_defaults():
    props = json.loads(PACKAGE.read_text())["contributes"]["configuration"]["properties"]
    client = {
        k.removeprefix("editFidelity.severity."): v for k, v in props.items() if k.startswith("editFidelity.severity.")
    }
    assert sorted(client) == sorted(SEVERITY_DEFAULTS)
    names = {v: k for k, v in SEVERITY_NAMES.items()}
    for kind, schema in client.items():
        assert schema["enum"] == list(SEVERITY_NAMES) and schema["default"] == names[SEVERITY_DEFAULTS[kind]], kind
    raw = {k: v["default"] for k, v in client.items()}
    parsed, problems = parse_settings({"localModel": None, "severity": raw})
    assert problems == [] and parsed.thresholds.severity_levels() == SEVERITY_DEFAULTS
