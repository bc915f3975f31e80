"""Where a step ran, for the tests that kill a node or a worker while a step is known to be running on it.

Every execution (`judge.py`) and every session's request (`sessions.py`) appends `start`/`end` lines to the
file TRACE_ENV names, on the node that runs it (set in that node's environment); with HOLD_ENV too, each step
waits that many seconds after its start line, so that the kill lands inside the step on a machine of any speed.
"""

from __future__ import annotations

import json
import os
from typing import Any

TRACE_ENV = "EDIT_FIDELITY_RAY_TRACE"
HOLD_ENV = "EDIT_FIDELITY_RAY_HOLD_S"


def trace(event: str, task: Any) -> float:
    """A line in the node's trace file (TRACE_ENV), when it has one; the seconds the step is to wait."""
    path = os.environ.get(TRACE_ENV)
    if not path:
        return 0.0
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"event": event, "task_id": task.task_id, "pid": os.getpid()}) + "\n")
    return float(os.environ.get(HOLD_ENV) or 0) if event.endswith("start") else 0.0
