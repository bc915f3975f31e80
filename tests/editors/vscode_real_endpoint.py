"""The model backend of scripts/test-vscode-real: the project's scripted OpenAI-compatible endpoint
(tools/doubles/scripted.py) on 127.0.0.1, with two models the real VS Code tests configure.

- `overeditor` fixes the comparison and also renames, drops a comment and adds input validation;
- `careful` fixes the comparison only.

Prints its base URL on one line, then serves until stdin closes (its parent went away) or SIGTERM.
Run from the repository root (PYTHONPATH=.): `python tests/editors/vscode_real_endpoint.py`.
"""

from __future__ import annotations

import re
import signal
import sys
import threading

from tools.doubles.scripted import ScriptedServer, Step, fenced, user_code


def _fix(code: str) -> str:
    return code.replace("if v < limit:", "if v > limit:")


def _overedit(request: dict) -> str:
    code = _fix(user_code(request))
    code = code.replace("        # only the large ones\n", "")
    code = re.sub(r"\bv\b", "value", code)
    code = code.replace(
        '    """Mean of the values above limit."""\n',
        '    """Mean of the values above limit."""\n'
        "    if values is None:\n"
        '        raise ValueError("values must not be None")\n',
    )
    return fenced(code, "Here is the improved version:")


def _careful(request: dict) -> str:
    return fenced(_fix(user_code(request)))


SCRIPTS = {
    "overeditor": [Step(content=_overedit)],
    "careful": [Step(content=_careful)],
}


def main() -> int:
    with ScriptedServer({k: list(v) for k, v in SCRIPTS.items()}) as server:
        print(server.base_url, flush=True)
        done = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: done.set())
        threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
        done.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
