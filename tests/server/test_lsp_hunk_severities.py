"""Severities on the wire, through the real server: `hunkSeverities` of requestEdit and checkChange say
how loud each unit's diagnostic is (what the benchmark counts as warning or hint), and a proposal
carried over after a partial apply is judged with its texts, as when it was first proposed."""

from __future__ import annotations

from lsp_helpers import execute, settings_for, start_session, wait_for
from lsprotocol import types

from tools.doubles.scripted import Step, fenced

URI = "file:///tmp/severities.py"

BASE = '''import math


def lcm(a, b):
    """Least common multiple."""
    g = math.gcd(a, b)
    return a * b // g


def mean_above(values, limit):
    """Mean of the values above limit."""
    total = 0
    count = 0
    for v in values:
        if v < limit:
            total += v
            count += 1
    return total / count if count else 0.0
'''

FIXED = BASE.replace("if v < limit:", "if v > limit:")
# the fix, a blank line (whitespace only: a hint) and a renamed local of lcm (a warning)
MIXED = (
    FIXED.replace("    total = 0\n", "    total = 0\n\n")
    .replace("g = math", "divisor = math")
    .replace("// g", "// divisor")
)
# the fix and an import nothing uses: never requested, though the instruction speaks of imports
IMPORTED = FIXED.replace("import math\n", "import math\nimport os\n")


def _script(backend, name: str, text: str) -> str:
    backend.scripts[name] = [Step(content=lambda req, code=text: fenced(code))]
    return name


async def _propose(lsp, name: str, instruction: str) -> dict:
    result = await execute(
        lsp, "editFidelity.requestEdit", {"uri": URI, "version": 1, "instruction": instruction, "backends": [name]}
    )
    [p] = result["proposals"]
    assert p["status"] == "ok", p
    return p


def _diagnostics(lsp) -> list[types.Diagnostic]:
    return list(lsp.diagnostics.get(URI, ()))


async def test_request_edit_and_check_change_report_each_units_severity(lsp, backend):
    name = _script(backend, "sev-mixed", MIXED)
    editor = await start_session(lsp, settings_for(backend, name))
    editor.open(URI, BASE)
    p = await _propose(lsp, name, "fix the comparison in `mean_above`")
    hunks = p["report"]["hunks"]
    assert len(p["hunkSeverities"]) == len(hunks) == len(p["hunkMessages"])
    by_kind = {tuple(h["kinds"]): i for i, h in enumerate(hunks)}
    blank = next(i for k, i in by_kind.items() if k == ("formatting_only",))
    renamed = next(i for k, i in by_kind.items() if "rename" in k)
    assert {blank, renamed} <= set(p["flaggedHunks"])
    assert p["hunkSeverities"][blank] == types.DiagnosticSeverity.Hint
    assert p["hunkSeverities"][renamed] == types.DiagnosticSeverity.Warning
    # the diagnostics the editor shows have exactly these severities
    diags = await wait_for(lambda: _diagnostics(lsp))
    assert sorted(d.severity for d in diags) == sorted(p["hunkSeverities"])

    check = await execute(lsp, "editFidelity.checkChange", {"uri": URI, "baseline": {"text": MIXED}})
    assert len(check["hunkSeverities"]) == len(check["report"]["hunks"]) > 0
    assert all(1 <= s <= 4 for s in check["hunkSeverities"])
    for i in check["flaggedHunks"]:  # an observed change of unrequested kinds: flagged at its kind's level
        assert check["hunkSeverities"][i] in (
            types.DiagnosticSeverity.Error,
            types.DiagnosticSeverity.Warning,
            types.DiagnosticSeverity.Hint,
        )


async def test_carried_over_rest_is_judged_with_its_texts(lsp, backend):
    name = _script(backend, "sev-import", IMPORTED)
    editor = await start_session(lsp, settings_for(backend, name))
    editor.open(URI, BASE)
    p = await _propose(lsp, name, "fix the comparison in `mean_above` and update the imports")
    hunks = p["report"]["hunks"]
    imp = next(i for i, h in enumerate(hunks) if "import_change" in h["kinds"])
    fix = next(i for i, h in enumerate(hunks) if i != imp)
    # the import is unused: unrequested whatever the instruction says of imports (read from the texts)
    assert imp in p["flaggedHunks"] and fix not in p["flaggedHunks"]
    assert p["hunkSeverities"][imp] == types.DiagnosticSeverity.Warning
    result = await execute(lsp, "editFidelity.applyProposal", {"id": p["id"], "hunks": [fix]})
    assert result["applied"] is True
    await wait_for(lambda: editor.texts[URI] == FIXED)

    # the rest (the import) is carried over to version 2 and still warned about
    def carried() -> list[types.Diagnostic]:
        diags = _diagnostics(lsp)
        return (
            diags if diags and all("changes logic" not in d.message and d.range.start.line <= 1 for d in diags) else []
        )

    diags = await wait_for(carried)
    assert [d.severity for d in diags] == [types.DiagnosticSeverity.Warning], [(d.severity, d.message) for d in diags]
