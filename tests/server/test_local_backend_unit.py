"""The `local` backend's model specs and dependency check (no model is run)."""

from __future__ import annotations

import sys

import pytest

from server.backends import BackendError
from server.backends.local_backend import (
    LocalBackend,
    check_available,
    local_backend_config,
)
from server.backends.local_spec import (
    DEFAULT_MODEL,
    INSTALL_HINT,
    LocalSpecError,
    dependency_problem,
    is_local_spec,
    parse_spec,
)


def test_default_model_is_chosen_by_the_worker_and_names_are_catalogued():
    spec = parse_spec("local")
    assert (spec.source, spec.model, spec.engine) == ("default", DEFAULT_MODEL, "gguf")
    assert parse_spec("local:") == spec
    assert parse_spec("local:Qwen2.5-Coder-1.5B") == parse_spec("local:qwen2.5-coder-1.5b")
    assert parse_spec("local:qwen2.5-coder-1.5b").source == "named"


def test_hub_ids_and_paths(tmp_path, monkeypatch):
    assert parse_spec("local:Qwen/Qwen2.5-Coder-1.5B-Instruct").model == "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    spec = parse_spec(f"local:{tmp_path / 'm'}")
    assert (spec.source, spec.model) == ("path", str(tmp_path / "m"))
    monkeypatch.chdir(tmp_path)
    assert parse_spec("local:./m").model == str(tmp_path / "m")
    assert parse_spec("local:m").source == "path"  # an existing directory wins over a hub id


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("local:/no/such/dir", "does not exist"),
        ("local:./nowhere", "does not exist"),
        ("local:not a model!", "neither a model name"),
        ("local:/no/such/model.gguf", "does not exist"),
        ("gpt-4o", "not a local model spec"),
    ],
)
def test_bad_specs_say_why(model, message):
    with pytest.raises(LocalSpecError, match=message):
        parse_spec(model)


def test_a_directory_without_config_is_refused(tmp_path):
    with pytest.raises(LocalSpecError, match="no config.json"):
        parse_spec(f"local:{tmp_path}")


def test_is_local_spec():
    assert is_local_spec("local") and is_local_spec("local:/x") and not is_local_spec("localhost-model")


def test_missing_dependencies_name_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)  # find_spec answers None for a blocked module
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    problem = dependency_problem(engine="hf")
    assert problem is not None and "torch" in problem and INSTALL_HINT in problem
    problem = dependency_problem()  # the default engine: GGUF on llama.cpp
    assert problem is not None and "xllamacpp" in problem and INSTALL_HINT in problem
    with pytest.raises(BackendError) as err:
        check_available("local")
    assert err.value.kind == "missing_dependency" and "pip install 'edit-fidelity[local]'" in err.value.message
    with pytest.raises(BackendError, match=r"edit-fidelity\[local\]"):
        LocalBackend(local_backend_config("local"))
    (tmp_path / "config.json").write_text("{}")  # a transformers directory needs torch, not llama.cpp
    with pytest.raises(BackendError, match="torch"):
        check_available(f"local:{tmp_path}")


def test_unusable_spec_is_a_backend_error(monkeypatch):
    monkeypatch.setattr("server.backends.local_backend.dependency_problem", lambda: None)
    with pytest.raises(BackendError) as err:
        LocalBackend(local_backend_config("local:/no/such/dir"))
    assert err.value.kind == "model_unavailable"


def test_the_cache_reuse_comes_from_the_argument_else_the_environment(monkeypatch):
    from server.backends.local_backend import CACHE_REUSE, CACHE_REUSE_ENV

    monkeypatch.delenv(CACHE_REUSE_ENV, raising=False)
    assert LocalBackend(local_backend_config("local")).worker_config().cache_reuse == CACHE_REUSE > 0
    monkeypatch.setenv(CACHE_REUSE_ENV, "0")  # the exact prefix only
    assert LocalBackend(local_backend_config("local")).worker_config().cache_reuse == 0
    assert LocalBackend(local_backend_config("local"), cache_reuse=64).worker_config().cache_reuse == 64
