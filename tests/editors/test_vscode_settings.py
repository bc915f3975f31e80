"""The VS Code extension's settings schema (client-vscode/package.json, generated from
server.protocol.settings) and the server's settings parser (server/lsp/settings.py) describe the same
thing: same keys, same defaults and bounds, no key the server would ignore, and what the schema allows
is accepted. Guards against the generator or the parser drifting."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

settings = pytest.importorskip("server.lsp.settings", reason="the language server package is not importable")
wire = pytest.importorskip("server.protocol.settings")
msgspec = pytest.importorskip("msgspec")
backend_config = pytest.importorskip("server.backends.config")
prompts = pytest.importorskip("server.backends.prompts")

PACKAGE = Path(__file__).resolve().parents[2] / "client-vscode" / "package.json"
PROPS = json.loads(PACKAGE.read_text())["contributes"]["configuration"]["properties"]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# The editor offers the interactive styles; the server's whole-document styles replay benchmarks'
# own prompt formats and are not offered in the editor.
EDITOR_STYLES = [s for s in backend_config.STYLES if s not in prompts.WHOLE_DOCUMENT_STYLES]


def _numbers(struct) -> dict[str, tuple[str, int, str, object, object]]:
    """wire key -> (field, kind, minimum, maximum) of a Struct's numeric fields, from its Meta."""
    out = {}
    for f in msgspec.inspect.type_info(struct).fields:
        t = f.type
        while isinstance(t, (msgspec.inspect.Metadata, msgspec.inspect.UnionType)):
            t = (
                t.type
                if isinstance(t, msgspec.inspect.Metadata)
                else next(u for u in t.types if not isinstance(u, msgspec.inspect.NoneType))
            )
        if isinstance(t, (msgspec.inspect.IntType, msgspec.inspect.FloatType)):
            out[f.encode_name] = (f.name, int if isinstance(t, msgspec.inspect.IntType) else float, t.ge, t.le)
    return out


_THRESHOLD_KEYS = _numbers(wire.Thresholds)
_NECESSITY_KEYS = _numbers(wire.NecessitySettings)


def test_threshold_keys_and_defaults_match_the_server():
    client = {
        k.removeprefix("editFidelity.thresholds."): v
        for k, v in PROPS.items()
        if k.startswith("editFidelity.thresholds.")
    }
    server_defaults = settings.Thresholds()
    assert sorted(client) == sorted(_THRESHOLD_KEYS), "threshold keys differ"
    for key, schema in client.items():
        field, kind, lo, hi = _THRESHOLD_KEYS[key]
        assert schema["default"] == getattr(server_defaults, field), key
        assert schema["type"] == ("integer" if kind is int else "number"), key
        assert (schema["minimum"], schema["maximum"]) == (lo, hi), key
        # the bounds are accepted, one step outside them is a problem that keeps the default
        for value, ok in ((lo, True), (hi, True), (hi * 2 + 1, False), (lo - 1, False)):
            parsed, problems = settings.parse_settings({"localModel": None, "thresholds": {key: value}})
            assert (problems == []) is ok, (key, value, problems)
            assert getattr(parsed.thresholds, field) == (value if ok else getattr(server_defaults, field))


def test_backend_fields_are_the_servers():
    item = PROPS["editFidelity.backends"]["items"]
    fields = set(item["properties"])
    server_fields = set(backend_config.BackendConfig.__struct_fields__)
    assert {_snake(f) for f in fields} == server_fields
    # An entry using every field the schema allows is accepted as it is.
    entry = {
        "name": "local-vllm",
        "baseUrl": "http://127.0.0.1:8000/v1",
        "model": "m",
        "apiKeyEnv": "VLLM_KEY",
        "style": "minimal",
        "temperature": 0.2,
        "topP": 0.9,
        "maxTokens": 512,
        "timeoutS": 30,
        "maxConcurrency": 2,
        "maxRetries": 1,
    }
    assert set(entry) == fields
    parsed, problems = backend_config.parse_backends([entry])
    assert problems == [] and parsed[0].base_url == entry["baseUrl"]
    assert item["properties"]["style"]["enum"] == EDITOR_STYLES


def test_top_level_settings_are_understood_by_the_server():
    raw = {
        "backends": [],
        "defaultStyle": PROPS["editFidelity.defaultStyle"]["default"],
        "observeChanges": PROPS["editFidelity.observeChanges"]["default"],
        "thresholds": {
            k.removeprefix("editFidelity.thresholds."): v["default"] for k, v in PROPS.items() if ".thresholds." in k
        },
        "sandbox": PROPS["editFidelity.sandbox"]["default"],
        "testCommand": PROPS["editFidelity.testCommand"]["default"],
        "necessity": {
            k.removeprefix("editFidelity.necessity."): v["default"] for k, v in PROPS.items() if ".necessity." in k
        },
    }
    parsed, problems = settings.parse_settings({"editFidelity": raw})
    assert problems == []
    assert parsed.default_style == raw["defaultStyle"] and parsed.observe_changes is True
    assert sorted(PROPS["editFidelity.defaultStyle"]["enum"]) == sorted(EDITOR_STYLES)
    assert parsed.test_command is None and parsed.necessity == settings.NecessitySettings()


def test_necessity_keys_defaults_and_ranges_match_the_server():
    client = {
        k.removeprefix("editFidelity.necessity."): v
        for k, v in PROPS.items()
        if k.startswith("editFidelity.necessity.")
    }
    server_defaults = settings.NecessitySettings()
    assert {_snake(k) for k in client} == set(settings.NecessitySettings.__struct_fields__), "necessity keys differ"
    assert sorted(k for k in client if k not in ("environment", "include", "packages")) == sorted(_NECESSITY_KEYS)
    assert client["packages"]["default"] == list(server_defaults.packages) == []
    for key, (field, kind, lo, hi) in _NECESSITY_KEYS.items():
        schema = client[key]
        assert schema["default"] == getattr(server_defaults, field), key
        assert schema["type"] == ("integer" if kind is int else "number"), key
        assert (schema["minimum"], schema["maximum"]) == (lo, hi), key
    assert client["environment"]["default"] is None and server_defaults.environment is None
    assert client["include"]["default"] == list(server_defaults.include) == list(settings.NECESSITY_INCLUDE)
    # The bounds the schema allows are accepted; what it forbids is refused.
    for key in _NECESSITY_KEYS:
        for value, ok in (
            (client[key]["minimum"], True),
            (client[key]["maximum"], True),
            (client[key]["maximum"] * 2, False),
        ):
            _, problems = settings.parse_settings({"necessity": {key: value}})
            assert (problems == []) is ok, (key, value)
    _, problems = settings.parse_settings({"necessity": {"environment": "canitedit", "include": ["src/*.py"]}})
    assert problems == []
    _, problems = settings.parse_settings({"necessity": {"include": []}})
    assert problems  # the schema's minItems: 1


def test_test_command_forms_are_the_servers():
    schema = PROPS["editFidelity.testCommand"]
    assert schema["default"] is None and set(schema["type"]) == {"string", "array", "null"}
    assert schema["items"] == {"type": "string"}
    for value, argv in (
        ("python -m pytest -x 'tests/test x.py'", ("python", "-m", "pytest", "-x", "tests/test x.py")),
        (["python", "-m", "unittest"], ("python", "-m", "unittest")),
    ):
        parsed, problems = settings.parse_settings({"testCommand": value})
        assert problems == [] and parsed.test_command == argv
    assert "never on the host" in schema["markdownDescription"]


def test_sandbox_levels_are_the_servers():
    sandbox = pytest.importorskip("sandbox")
    necessity = pytest.importorskip("server.lsp.necessity.analysis")
    enum = PROPS["editFidelity.sandbox"]["enum"]
    # Every level the server's make_sandbox understands, and nothing else: auto, local (= none) and its LEVELS.
    assert set(enum) == {"auto", "local", *sandbox.LEVELS}
    assert PROPS["editFidelity.sandbox"]["default"] == "auto"
    for level in enum:
        parsed, problems = settings.parse_settings({"sandbox": level})
        assert problems == [] and parsed.sandbox == level
    with pytest.raises(ValueError):
        necessity.make_sandbox("firejail", 1)
