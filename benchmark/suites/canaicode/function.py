"""The function under test, as upstream's evaluator sees it (`sbox/sandbox.py`):

- `name` and `args` come from a regular expression over the code text, first match wins (Python
  `def NAME(ARGS)...:`; JavaScript `function NAME(ARGS) {`, else the arrow form `NAME = (ARGS) => {`);
  argument names are the comma-separated pieces, stripped, cut at the first `:` (defaults stay in).
- `call(*args)` runs `NAME(ARG,...)` with each argument written as a JSON literal (so Python sees
  `true`/`null` as undefined names, as upstream) in a fresh process per call: the answer is executed
  first (its example code runs too), then the call; the value comes back as JSON after a `###` marker.
  An exception inside becomes `{"error", "exc_type"}`; a call still running after 5 s gives
  `{"error": "timeout!"}`; a process that dies without the marker gives
  `{"error": "non-zero result code N", "output": ...}`; exit 0 without the marker gives the output text.

The wrappers behave like upstream's templates: the Python one imports `math` and `types` before running
the answer (so an answer may use them without importing) and turns generators into lists; the
JavaScript one appends `var _rv = CALL;` (from a single-quoted string literal, so JS unescapes the
call text first) to the answer and `eval`s it in sloppy mode. Transport is exact (upstream's base64
version): the published samples' template-literal answers (`${x}`) pass, which the older
shell-quoted transport would have broken.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from sandbox.result import ExecResult

CALL_TIMEOUT_S = 5.0
ANSWER_FILE = "answer"
MARKER = "###"

_REGEX = {
    "python": re.compile(r"def\s+(.*)\s*\((.*)\)(.*):", re.MULTILINE),
    "javascript": re.compile(r"function\**\s+(\S*)\s*\((.*)\)(.*){", re.MULTILINE),
    "javascript-arrow": re.compile(r"\s+(\S*)\s*=\s*\((.*)\)(.*)\s*=>\s*{", re.MULTILINE),
}

PYTHON_WRAPPER = """\
import math
import types
try:
  with open({answer!r}) as f:
    exec(f.read())
  _rv = {call}
except Exception as e:
  _rv = {{ 'error': str(e), 'exc_type': type(e).__name__ }}
if isinstance(_rv, types.GeneratorType):
  _rv = list(_rv)
import json
print("###",json.dumps(_rv))
"""

JAVASCRIPT_WRAPPER = """\
const fs = require('fs');
let script = fs.readFileSync({answer});
try {{
  script += '\\nvar _rv = {call};'
  eval(script);
}} catch(error) {{
  _rv = {{ error: error.message, exc_type: error.name }}
}}
console.log('###' + JSON.stringify(_rv));
"""

WRAPPER_FILE = {"python": "wrapper.py", "javascript": "wrapper.js"}


def function_info(language: str, code: str) -> tuple[str, list[str]] | None:
    """(name, argument names) of the first function the upstream regex finds, or None."""
    if language not in ("python", "javascript"):
        raise ValueError(f"can-ai-code checks Python and JavaScript, not {language!r}")
    matches = _REGEX[language].findall(code)
    if not matches and language == "javascript":
        matches = _REGEX["javascript-arrow"].findall(code)
    if not matches:
        return None
    name, arglist = matches[0][0], matches[0][1]
    return name, [arg.strip().split(":")[0] for arg in arglist.split(",") if arg]


def render_call(name: str, args: tuple[Any, ...]) -> str:
    return name + "(" + ",".join(json.dumps(a) for a in args) + ")"


def wrapper(language: str, call: str) -> str:
    if language == "python":
        return PYTHON_WRAPPER.format(answer=ANSWER_FILE, call=call)
    # pasted into a single-quoted JS string literal, as upstream: an argument holding a quote or a
    # backslash breaks the call there too
    return JAVASCRIPT_WRAPPER.format(answer=json.dumps(ANSWER_FILE), call=call)


def parse_output(res: ExecResult) -> Any:
    """The call's value from one run, as upstream's `FunctionSandbox.call` reads its process output.

    Raises (json.JSONDecodeError) where upstream raises: text after the marker that is not JSON."""
    stdout = res.stdout
    if res.status == "timeout":  # upstream's timeout wrapper prints this marker line after killing the call
        stdout += '\n### { "error": "timeout!" }'
    output = stdout.strip()
    exit_code = res.exit_code if res.exit_code is not None else (128 + res.signal if res.signal else -1)
    if output == "" and exit_code != 0:
        output += res.stderr.strip()
    start = output.find(MARKER)
    if start == -1:
        if res.status == "output_limit":
            return {"error": "output limit exceeded", "output": output[-2000:]}
        if exit_code != 0:
            return {"error": f"non-zero result code {exit_code}", "output": output[-2000:]}
        return output
    return json.loads(output[start + len(MARKER) :].strip())


class Runner(Protocol):
    """What the checks need of a sandbox (`sandbox.Sandbox` is one)."""

    def run(
        self,
        files: dict[str, str | bytes],
        entry: str | None = None,
        *,
        language: str | None = None,
        timeout_s: float | None = None,
    ) -> ExecResult: ...


class SandboxFailure(RuntimeError):
    """The sandbox could not run a call at all (not the program's fault): the verdict is unusable."""


@dataclass(frozen=True)
class FunctionArg:
    name: str
    type: str | None = None


@dataclass
class FunctionUnderTest:
    """What a check's `assert` expression sees as `f`: `f.name`, `f.args[i].name`, `f.call(...)`.

    `call` runs synchronously on the sandbox (checks evaluate on worker threads, as expressions)."""

    code: str
    language: str
    box: Runner
    timeout_s: float = CALL_TIMEOUT_S
    name: str = ""
    args: list[FunctionArg] = field(default_factory=list)
    found: bool = False
    runs: list[ExecResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        info = function_info(self.language, self.code)
        if info is not None:
            self.name, self.found = info[0], True
            self.args = [FunctionArg(a) for a in info[1]]

    def call(self, *args: Any, **kwargs: Any) -> Any:  # keyword arguments are ignored, as upstream
        files: dict[str, str | bytes] = {
            WRAPPER_FILE[self.language]: wrapper(self.language, render_call(self.name, args)),
            ANSWER_FILE: self.code,
        }
        res = self.box.run(files, WRAPPER_FILE[self.language], language=self.language, timeout_s=self.timeout_s)
        self.runs.append(res)
        if res.status == "error":
            raise SandboxFailure(f"sandbox: {res.error or 'could not run the call'}")
        return parse_output(res)
