"""The settings the server takes (section `editFidelity` of initializationOptions and
`workspace/configuration`), as the editor sends them: camelCase keys, constraints in `Meta`.

The generator writes the extension's `contributes.configuration` and its TypeScript types from these
Structs: `description` and `extra_json_schema` are what the editor shows, `extra={"expect": ...}` is
how a problem names a value that does not fit (`secret`: the value is never quoted back).
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from server.protocol.names import EDITOR_STYLES, SANDBOXES, SEVERITY_NAMES, STYLES


def choice(values: tuple[str, ...]) -> Any:
    """A string among `values`, named in their order in messages and in the editor's enums."""
    return Annotated[Literal[values], Meta(extra={"order": values})]


Style = Annotated[
    Literal["generic", "minimal", "canitedit-chat", "canitedit-direct", "bare"], Meta(extra={"order": STYLES})
]
assert typing.get_args(typing.get_args(Style)[0]) == STYLES
SeverityLevel = choice(tuple(SEVERITY_NAMES))

BACKEND_NAME = r"^[\w.:@/+-]{1,64}$"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
ENVIRONMENT_NAME = r"^[A-Za-z0-9][\w.-]{0,63}$"  # a sandbox environment: a folder name, never a path
LOCAL = "local"  # baseUrl of an entry served by the embedded model


def _num(lo: float, hi: float, description: str | None = None, **schema: Any) -> Meta:
    return Meta(ge=lo, le=hi, description=description, extra_json_schema=schema or None)


class BackendEntry(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    """One entry of `editFidelity.backends`. A `model` of `local`, `local:PATH` or `local:HUB_ID` (or a
    baseUrl of "local") is served by the embedded CPU model; otherwise baseUrl is an http(s) URL."""

    name: Annotated[
        str,
        Meta(
            pattern=BACKEND_NAME,
            description="A short unique name shown in tables and diagnostics.",
            extra_json_schema={"patternErrorMessage": "Letters, digits and . : @ / + - _ only, at most 64 characters."},
            extra={"expect": "a short identifier"},
        ),
    ]
    base_url: (
        Annotated[str, Meta(description="Base URL of the OpenAI-compatible API, for example http://localhost:8000/v1.")]
        | None
    ) = None
    model: Annotated[str, Meta(description="Model name sent with each request.")] | None = None
    api_key_env: (
        Annotated[
            str,
            Meta(
                pattern=ENV_NAME,
                description="Name of the environment variable that holds the API key (for example OPENAI_API_KEY). "
                "The key itself never goes into settings.",
                extra={
                    "expect": "the NAME of an environment variable (the key itself never goes into settings)",
                    "secret": True,
                },
            ),
        ]
        | None
    ) = None
    style: (
        Annotated[
            Style,
            Meta(
                description="Prompt style; overrides editFidelity.defaultStyle for this backend.",
                extra_json_schema={"enum": list(EDITOR_STYLES)},
            ),
        ]
        | None
    ) = None
    temperature: Annotated[float, _num(0.0, 2.0)] = 0.0
    top_p: Annotated[float, _num(0.0, 1.0, "Nucleus sampling (top_p). When unset, the endpoint's default.")] | None = (
        None
    )
    max_tokens: Annotated[int, _num(1, 1_000_000)] = 2048
    timeout_s: Annotated[float, _num(0.05, 3600.0)] | None = None  # None: 60 s, 600 s for the embedded model
    max_concurrency: Annotated[int, _num(1, 1024)] = 4
    max_retries: Annotated[
        int,
        _num(
            0,
            10,
            "Retries on 429 and 5xx answers and on a failed connection (with backoff, honouring Retry-After; timeoutS bounds them all).",
        ),
    ] = 2


class Thresholds(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    """editFidelity.thresholds: when a change is observed, how it is measured, how loud a hunk is."""

    large_change_lines: Annotated[
        int, _num(1, 10**7, "A single change that replaces more lines than this is observed and measured.")
    ] = 10
    debounce_ms: Annotated[int, _num(0, 60_000, "Wait this long after the last large change before measuring it.")] = (
        300
    )
    large_file_lines: Annotated[
        int, _num(10, 10**8, "Above this many lines, observed changes are measured per top-level block.")
    ] = 1500
    complexity_warning: Annotated[
        float, _num(0, 10**6, "Mention a cognitive-complexity increase of at least this much.")
    ] = 1.0
    complexity_error: Annotated[
        float, _num(0, 10**6, "A flagged hunk that adds this much cognitive complexity is an error, not a warning.")
    ] = 5.0
    hunk_tokens_error: Annotated[
        int, _num(1, 10**9, "An unrequested hunk that changes this many tokens is an error, not a warning.")
    ] = 60
    distance_warning: Annotated[
        float,
        _num(
            0,
            1,
            "A proposal whose normalised token distance (no_comments "
            "variant) exceeds this rewrites too much: the request says so "
            "in a warning and the proposal is marked `heavy`.",
        ),
    ] = 0.3
    whitespace_hint_lines: Annotated[
        int,
        _num(
            0,
            10**7,
            "A whitespace-only change (blank lines, trailing spaces, indentation that keeps every token) "
            "that nobody asked for is a hint; over more lines than this it has the severity of "
            "formatting_only.",
        ),
    ] = 10


# Per unrequested hunk kind (and `whitespace`, whitespace-only units): its default level and what it is.
# Keys are hunk kinds, which are report values, so they keep their snake_case spelling.
SEVERITY_KINDS: dict[str, tuple[str, str]] = {
    "whitespace": (
        "hint",
        ("Whitespace-only changes (blank lines, trailing spaces, re-indentation) up to whitespaceHintLines lines."),
    ),
    "formatting_only": (
        "hint",
        (
            "Reformatting that keeps the syntax tree (quotes, parentheses, line wrapping), and large whitespace "
            "changes: layout, not behaviour, so a hint unless raised here."
        ),
    ),
    "comment_removed": ("warning", "Comments removed."),
    "rename": ("warning", "Identifiers renamed."),
    "docstring": ("warning", "Docstrings edited or removed."),
    "signature_change": ("warning", "Function signatures changed."),
    "import_change": ("warning", "Imports added, removed or changed."),
    "defensive": ("warning", "Input validation added (guards, raises, asserts)."),
    "lazy_placeholder": ("warning", 'Code replaced by a placeholder such as "# rest of the code unchanged".'),
    "deletion": ("warning", "Code deleted with nothing in its place."),
    "outside_target": (
        "warning",
        "Changes outside the selected lines, or to code other than what the instruction names.",
    ),
    "added_code": (
        "warning",
        "New functions, methods or classes the instruction does not ask for and no other code uses, "
        "verbatim copies of existing code, and output (print, logging) nobody asked for.",
    ),
    "comment_added": ("information", "Comments added on code the edit does not change."),
}

Severity = msgspec.defstruct(
    "Severity",
    [
        (
            kind,
            Annotated[
                SeverityLevel,
                Meta(description=f"Severity of a flagged unit of this kind (not requested by the instruction): {text}"),
            ],
            level,
        )
        for kind, (level, text) in SEVERITY_KINDS.items()
    ],
    frozen=True,
    kw_only=True,
    module=__name__,
)
Severity.__doc__ = "editFidelity.severity: how loud a flagged unit of each kind is."

# Workspace files copied into the sandbox for the test command (fnmatch over the path relative to
# the workspace root; `*` crosses folders).
NECESSITY_INCLUDE = ("*.py", "*.pyi", "pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini")


class NecessitySettings(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    """editFidelity.necessity: the runs of `testCommand` in the sandbox for analyzeNecessity."""

    max_runs: Annotated[int, _num(1, 1000, "Test runs at most per analysis.")] = 32
    parallel: Annotated[int, _num(1, 64, "Test runs at once.")] = 2
    timeout_s: Annotated[float, _num(0.1, 3600, "Time limit of one test run, in seconds.")] = 60.0
    environment: (
        Annotated[
            str,
            Meta(
                pattern=r"\S",
                extra={"expect": "a sandbox environment name"},
                extra_json_schema={
                    "pattern": ENVIRONMENT_NAME,
                    "patternErrorMessage": "The name of a prepared sandbox environment: letters, digits and . _ - only.",
                    "markdownDescription": "A prepared sandbox environment to run the tests with (its Python and packages), "
                    "for example `canitedit`; prepare it with `edit-fidelity sandbox prepare --suite "
                    "NAME`. Null: the server's own test environment, which has pytest and "
                    "`#editFidelity.necessity.packages#`.",
                },
            ),
        ]
        | None
    ) = None
    # pip requirements for the server's own test environment (pytest is always in it); not with `environment`
    packages: Annotated[
        tuple[str, ...],
        Meta(
            extra_json_schema={
                "items": {"type": "string", "minLength": 1, "pattern": "^[A-Za-z0-9]"},
                "markdownDescription": "The packages the workspace's tests need, as pip requirements (for example "
                "`numpy==2.4.6`, `requests[socks]>=2`, `mylib @ file:///path/mylib-1.0-py3-none-any.whl`; "
                "no pip options). They are installed, with pytest, into the server's own sandbox test "
                "environment on the first analysis (pip, once; the same list reuses it). Your own "
                "virtual environment is not used: the sandbox cannot read it. Ignored with "
                "`#editFidelity.necessity.environment#`.",
            }
        ),
    ] = ()
    include: Annotated[
        tuple[Annotated[str, Meta(min_length=1)], ...],
        Meta(
            min_length=1,
            extra={"expect": "a non-empty array of file patterns"},
            extra_json_schema={
                "markdownDescription": "The workspace files copied into the sandbox for each test run "
                "(patterns over the path relative to the workspace folder; `*` "
                "crosses folders). Open editors count with their unsaved text."
            },
        ),
    ] = NECESSITY_INCLUDE
    max_files: Annotated[
        int, _num(1, 10**6, "At most this many files are copied into the sandbox; more refuses the analysis.")
    ] = 2000
    max_bytes: Annotated[
        int, _num(1, 10**10, "At most this many bytes are copied into the sandbox; more refuses the analysis.")
    ] = 20_000_000


class SettingsWire(msgspec.Struct, rename="camel", frozen=True, kw_only=True):
    """The `editFidelity` settings object as sent. Unknown keys are ignored; a value that does not fit
    keeps its default and is reported (server.lsp.settings)."""

    # the editor's entries name an endpoint (the embedded model is the default when there is none)
    backends: Annotated[
        list[Annotated[BackendEntry, Meta(extra_json_schema={"required": ["name", "baseUrl", "model"]})]],
        Meta(
            extra_json_schema={
                "markdownDescription": "Model backends (any OpenAI-compatible endpoint: vLLM, OpenAI, Ollama, llama.cpp). "
                "API keys are never stored in settings: `apiKeyEnv` names the environment variable "
                "that holds the key."
            }
        ),
    ] = []
    default_style: Annotated[
        Style,
        Meta(
            description="Prompt style used when a backend sets none.",
            extra_json_schema={
                "enum": list(EDITOR_STYLES),
                "enumDescriptions": [
                    "Just the instruction.",
                    "The instruction plus the request to keep as much of the original code as possible.",
                ],
            },
        ),
    ] = "minimal"
    observe_changes: Annotated[
        bool,
        Meta(
            description="Observe large incoming changes (another assistant applying an "
            "edit, a paste) and show what they changed that nobody asked "
            "for."
        ),
    ] = True
    thresholds: Thresholds = Thresholds()
    severity: Severity = Severity()  # type: ignore[valid-type]
    sandbox: (
        Annotated[
            str,
            Meta(
                extra_json_schema={
                    "enum": list(SANDBOXES),
                    "default": "auto",
                    "scope": "machine",
                    "markdownDescription": "Where the server runs code: the test runs of *Which Hunks Do the Tests Need?* "
                    "(`#editFidelity.testCommand#`). Code never runs on the host directly. A machine "
                    "setting: user or remote settings only, so a workspace cannot weaken it.",
                    "enumDescriptions": [
                        (
                            "The strongest isolation that works here (Docker, then bubblewrap, then unshare); refuses to run when "
                            "none works."
                        ),
                        "bubblewrap namespaces (Linux).",
                        "Unprivileged user namespaces via unshare (Linux).",
                        "A Docker container.",
                        (
                            "No isolation: a local process with resource limits, a timeout and an unprivileged user only. Use only "
                            "for code you trust."
                        ),
                        "The same as local.",
                    ],
                }
            ),
        ]
        | None
    ) = None  # None: auto
    test_command: (
        Annotated[
            str | list[str],
            Meta(
                extra_json_schema={
                    "markdownDescription": "The workspace's test command for *Which Hunks Do the Tests Need?*, for example "
                    '`python -m pytest -x tests/test_x.py` or `["python", "-m", "unittest"]`. It runs '
                    "only in the sandbox (`#editFidelity.sandbox#`), on a copy of the workspace files "
                    "matching `#editFidelity.necessity.include#`, never on the host directly. No shell runs "
                    "it: a string is split into arguments like a shell would, but `&&`, `|`, `>` and "
                    "`$VARS` are not interpreted. `python` is the sandbox environment's interpreter. Empty "
                    "or null: no command (the analysis is refused)."
                }
            ),
        ]
        | None
    ) = None
    necessity: NecessitySettings = NecessitySettings()
    local_model: str | None = LOCAL  # the default backend when none is configured: local, local:PATH, local:HUB_ID


# Settings only the extension reads (how to start the server, what the status bar shows): in
# package.json, never sent to the server.
CLIENT_SETTINGS: dict[str, dict[str, Any]] = {
    "server.path": {
        "type": "string",
        "default": "",
        # window, not machine(-overridable): in a remote window (code-server, SSH, WSL, containers)
        # VS Code drops machine-scoped values of the User settings, and code-server's only user
        # settings are those; Remote settings still take precedence where there are both
        "scope": "window",
        "markdownDescription": "Absolute path of the `edit-fidelity` executable. When empty, the extension looks for "
        "it next to `#editFidelity.server.pythonPath#`, then in the Python extension's active "
        "environment, then on `PATH`. In a remote window (code-server, SSH, WSL, a container) it is a path on "
        "the remote machine: User settings count there too, Remote settings take precedence.",
    },
    "server.pythonPath": {
        "type": "string",
        "default": "",
        "scope": "window",
        "markdownDescription": "Python interpreter that has the `edit-fidelity` package installed (the server runs as "
        "`python -m server.cli serve` when no `edit-fidelity` script sits next to it). When "
        "empty, the Python extension's active interpreter is used if it is installed.",
    },
    "server.extraArgs": {
        "type": "array",
        "items": {"type": "string"},
        "default": [],
        "markdownDescription": "Extra arguments after `edit-fidelity serve`.",
    },
}
CLIENT_SETTINGS_AFTER: dict[str, dict[str, Any]] = {
    "statusBar.enabled": {
        "type": "boolean",
        "default": True,
        "description": "Show the last edit's fidelity in the status bar.",
    },
    "trace.server": {
        "type": "string",
        "enum": ["off", "messages", "verbose"],
        "default": "off",
        "description": "Trace the communication between VS Code and the language server.",
    },
}
# Settings sections the extension lays out one key per setting (editFidelity.thresholds.debounceMs ...).
FLATTENED = ("thresholds", "severity", "necessity")
# Not offered in the editor (the extension has its own way to pick the model, or none).
EDITOR_HIDDEN = ("localModel",)
