"""`hunkUnrequested` on the wire, through the real server: per unit of a proposal, the unrequested kinds it
is flagged for (what the benchmark counts per kind), empty for a unit nobody flags."""

from __future__ import annotations

from lsp_helpers import execute, settings_for, start_session
from lsprotocol import types

from tools.doubles.scripted import Step, fenced

URI = "file:///tmp/unrequested_kinds.py"

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

# the fix, a renamed local of lcm and an import nothing uses
EDITED = (
    BASE.replace("if v < limit:", "if v > limit:")
    .replace("g = math", "divisor = math")
    .replace("// g", "// divisor")
    .replace("import math\n", "import math\nimport os\n")
)


async def test_each_flagged_unit_says_which_unrequested_kinds_it_is_flagged_for(lsp, backend):
    backend.scripts["kinds"] = [Step(content=lambda req: fenced(EDITED))]
    editor = await start_session(lsp, settings_for(backend, "kinds"))
    editor.open(URI, BASE)
    result = await execute(
        lsp,
        "editFidelity.requestEdit",
        {"uri": URI, "version": 1, "instruction": "fix the comparison in `mean_above`", "backends": ["kinds"]},
    )
    [p] = result["proposals"]
    assert p["status"] == "ok", p
    hunks = p["report"]["hunks"]
    kinds = p["hunkUnrequested"]
    assert len(kinds) == len(hunks) == len(p["hunkSeverities"])
    flagged = set(p["flaggedHunks"])
    imp = next(i for i, h in enumerate(hunks) if "import_change" in h["kinds"])
    renamed = next(i for i, h in enumerate(hunks) if "rename" in h["kinds"])
    [fix] = [i for i in range(len(hunks)) if i not in (imp, renamed)]
    assert {imp, renamed} <= flagged and fix not in flagged
    assert kinds[imp] == ["import_change"] and kinds[renamed] == ["rename"] and kinds[fix] == []
    # every flagged unit names a kind, every other unit none
    assert all(bool(kinds[i]) == (i in flagged) for i in range(len(hunks)))
    assert p["hunkSeverities"][renamed] == types.DiagnosticSeverity.Warning
