"""The fidelity core: pure functions over strings that say how faithfully an edit kept the original.

Nothing here knows about editors, models or I/O. Public API:

- `measure(original, edited, gold=None, target=None) -> FidelityReport`
- `distances(original, edited)` and `token_distance(a_tokens, b_tokens)`
- `paper_tokens(text)`, `normalize(text)`, `function_body(text)`: the paper's building blocks
- `apply_text_edits(text, edits)`
"""

from server.fidelity.measure import measure
from server.fidelity.metrics.distance import distances, token_distance
from server.fidelity.text.normalize import function_body, normalize
from server.fidelity.text.textedits import apply_text_edits
from server.fidelity.text.tokens import paper_tokens
from server.fidelity.units.regions import common_affix
from server.protocol.report import (
    HUNK_KINDS,
    UNREQUESTED_KINDS,
    VARIANTS,
    ComplexityDelta,
    Distance,
    FidelityReport,
    FunctionChange,
    Hunk,
    ParseStatus,
    Position,
    Range,
    TextEdit,
)

__all__ = [
    "HUNK_KINDS",
    "UNREQUESTED_KINDS",
    "VARIANTS",
    "ComplexityDelta",
    "Distance",
    "FidelityReport",
    "FunctionChange",
    "Hunk",
    "ParseStatus",
    "Position",
    "Range",
    "TextEdit",
    "apply_text_edits",
    "common_affix",
    "distances",
    "function_body",
    "measure",
    "normalize",
    "paper_tokens",
    "token_distance",
]
