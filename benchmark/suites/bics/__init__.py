"""Bug In The Code Stack (SPEC 3.5): syntax-bug location in long numbered Python haystacks.

- `snippets`: the snippet table (clean snippets and the paper's pre-bugged ones) with per-row problems;
- `inserters`: our own seven bug inserters, each insertion verified by the interpreter's SyntaxError line;
- `tokens`: tiktoken cl100k_base counts of numbered text, incrementally;
- `haystack`: the paper's haystack builder (numbered lines, target length and depth), seeded;
- `scoring`: answer against label, the length x depth matrix and its headline means;
- `published`: the published per-trial results (stats/MODEL/*.csv) and their report;
- `render`: text, JSON and HTML (heatmap SVG) for our runs and the published ones alike;
- `suite`: the `bics` suite of the replay engine (`editFidelity.locateBug` through the server).
"""

# the paper's seven bug types, as the server's answer parser knows them (the wire contract's list)
from server.protocol.names import BUG_TYPES

__all__ = ["BUG_TYPES"]
