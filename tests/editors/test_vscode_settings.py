"""The VS Code extension's settings schema (client-vscode/package.json) and the server's settings
parser (server/lsp/settings.py) describe the same thing: same keys, same defaults, no key the
server would ignore. Guards against one side drifting."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

settings = pytest.importorskip("server.lsp.settings", reason="the language server package is not importable")
backend_config = pytest.importorskip("server.backends.config")

PACKAGE = Path(__file__).resolve().parents[2] / "client-vscode" / "package.json"
PROPS = json.loads(PACKAGE.read_text())["contributes"]["configuration"]["properties"]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_threshold_keys_and_defaults_match_the_server():
    client = {k.removeprefix("editFidelity.thresholds."): v for k, v in PROPS.items() if k.startswith("editFidelity.thresholds.")}
    server_defaults = settings.Thresholds()
    assert sorted(client) == sorted(settings._THRESHOLD_KEYS), "threshold keys differ"
    for key, schema in client.items():
        field, kind, lo, hi = settings._THRESHOLD_KEYS[key]
        assert schema["default"] == getattr(server_defaults, field), key
        assert schema["type"] == ("integer" if kind is int else "number"), key
        assert schema["minimum"] == lo, key
        if "maximum" in schema:
            assert schema["maximum"] == hi, key


def test_backend_fields_are_the_servers():
    item = PROPS["editFidelity.backends"]["items"]
    fields = set(item["properties"])
    server_fields = {f for f in backend_config.BackendConfig.__struct_fields__}
    assert {_snake(f) for f in fields} == server_fields
    # An entry using every field the schema allows is accepted as it is.
    entry = {
        "name": "local-vllm",
        "baseUrl": "http://127.0.0.1:8000/v1",
        "model": "m",
        "apiKeyEnv": "VLLM_KEY",
        "style": "minimal",
        "temperature": 0.2,
        "maxTokens": 512,
        "timeoutS": 30,
        "maxConcurrency": 2,
        "maxRetries": 1,
    }
    assert set(entry) == fields
    parsed, problems = backend_config.parse_backends([entry])
    assert problems == [] and parsed[0].base_url == entry["baseUrl"]
    assert item["properties"]["style"]["enum"] == list(backend_config.STYLES)


def test_top_level_settings_are_understood_by_the_server():
    raw = {
        "backends": [],
        "defaultStyle": PROPS["editFidelity.defaultStyle"]["default"],
        "observeChanges": PROPS["editFidelity.observeChanges"]["default"],
        "thresholds": {k.removeprefix("editFidelity.thresholds."): v["default"] for k, v in PROPS.items() if ".thresholds." in k},
        "sandbox": PROPS["editFidelity.sandbox"]["default"],
    }
    parsed, problems = settings.parse_settings({"editFidelity": raw})
    assert problems == []
    assert parsed.default_style == raw["defaultStyle"] and parsed.observe_changes is True
    assert sorted(PROPS["editFidelity.defaultStyle"]["enum"]) == sorted(backend_config.STYLES)
