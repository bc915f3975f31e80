"""Selecting the embedded `local` backend in settings, and the default backend (no model is run)."""

from __future__ import annotations

import sys

import pytest

from server.backends import BackendPool, OpenAIBackend, parse_backend, parse_backends
from server.backends.config import LOCAL_TIMEOUT_S, ConfigError
from server.backends.local_backend import LocalBackend
from server.backends.local_spec import DEFAULT_MODEL, dependency_problem
from server.lsp.settings import parse_settings

needs_local = pytest.mark.skipif(dependency_problem() is not None, reason="the [local] extra is not installed")


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    return tmp_path


@needs_local
def test_a_local_model_needs_no_base_url(model_dir):
    cfg = parse_backend({"name": "cpu", "model": f"local:{model_dir}"})
    assert (cfg.base_url, cfg.model, cfg.timeout_s) == ("local", f"local:{model_dir}", LOCAL_TIMEOUT_S)
    assert parse_backend({"name": "d", "model": "local", "timeoutS": 30}).timeout_s == 30
    # baseUrl "local" (what the VS Code schema, which requires a baseUrl, lets a user write)
    assert parse_backend({"name": "q", "baseUrl": "local", "model": "Qwen/Qwen2.5-Coder-1.5B-Instruct"}).model == (
        "local:Qwen/Qwen2.5-Coder-1.5B-Instruct"
    )


@needs_local
def test_a_missing_local_model_is_a_config_problem():
    backends, problems = parse_backends([{"name": "cpu", "model": "local:/no/such/model"}])
    assert backends == [] and "backend 'cpu'" in problems[0] and "does not exist" in problems[0]


def test_without_the_extra_selecting_local_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    with pytest.raises(ConfigError, match=r"pip install 'edit-fidelity\[local\]'"):
        parse_backend({"name": "cpu", "model": "local"})
    # and there is no default backend, silently
    settings, problems = parse_settings({})
    assert settings.backends == [] and problems == []


@needs_local
@pytest.mark.parametrize("raw", [None, {}, {"backends": []}, {"editFidelity": {"backends": []}}])
def test_no_backends_means_the_embedded_default(raw):
    settings, problems = parse_settings(raw)
    assert problems == []
    [cfg] = settings.backends
    assert (cfg.name, cfg.model, cfg.base_url) == ("local", "local", "local")


@needs_local
def test_the_default_can_be_chosen_or_switched_off(model_dir):
    settings, _ = parse_settings({"localModel": f"local:{model_dir}"})
    assert [b.model for b in settings.backends] == [f"local:{model_dir}"]
    assert parse_settings({"localModel": None})[0].backends == []
    settings, problems = parse_settings({"localModel": "local:/no/such/model"})
    assert settings.backends == [] and "localModel" in problems[0]
    settings, problems = parse_settings({"localModel": "gpt-4o"})
    assert [b.model for b in settings.backends] == ["local"] and "localModel must be" in problems[0]


@needs_local
def test_configured_backends_replace_the_default():
    entry = {"name": "remote", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}
    assert [b.name for b in parse_settings({"backends": [entry]})[0].backends] == ["remote"]
    # entries that were all rejected are a mistake to show, not a reason to switch models
    settings, problems = parse_settings({"backends": [{"name": "bad"}]})
    assert settings.backends == [] and problems


@needs_local
async def test_the_pool_builds_the_right_backend_without_starting_a_model(model_dir):
    pool = BackendPool()
    settings, _ = parse_settings(
        {
            "backends": [
                {"name": "cpu", "model": f"local:{model_dir}"},
                {"name": "remote", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"},
            ]
        }
    )
    pool.configure(settings.backends)
    assert isinstance(pool.get("cpu"), LocalBackend) and isinstance(pool.get("remote"), OpenAIBackend)
    assert pool.get("cpu")._worker is None  # the model loads on first use
    assert parse_backend({"name": "d", "model": "local"}).model == "local" and DEFAULT_MODEL
    await pool.aclose()
