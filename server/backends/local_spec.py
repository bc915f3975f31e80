"""Model specs of the embedded `local` backend, and the check for its optional dependencies.

    local              the default model (DEFAULT_MODEL, from the Hugging Face hub, cached)
    local:HUB_ID       another hub model, e.g. local:Qwen/Qwen2.5-Coder-1.5B-Instruct
    local:PATH         a directory with config.json, weights and a tokenizer (absolute, ./, ../ or ~)

Nothing here imports torch or transformers: the server process never does, only the worker.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable
from typing import Any

import msgspec

DEFAULT_MODEL = "Qwen/Qwen2.5-Coder-0.5B-Instruct"
PREFIX = "local"
INSTALL_HINT = "pip install 'edit-fidelity[local]'"
# import names of what the worker needs; the distribution names are in the `local` extra
REQUIRED_MODULES = ("torch", "transformers", "tokenizers", "safetensors", "huggingface_hub")

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")


class LocalSpecError(ValueError):
    """A `local...` model string that names neither a directory nor a hub model."""


class ModelSpec(msgspec.Struct, frozen=True):
    source: str  # "hub" or "path"
    model: str  # hub id, or an absolute directory path

    def describe(self) -> str:
        return self.model if self.source == "hub" else f"directory {self.model}"


def is_local_spec(model: str) -> bool:
    return model == PREFIX or model.startswith(PREFIX + ":")


def parse_spec(model: str) -> ModelSpec:
    """`local`, `local:PATH` or `local:HUB_ID` -> ModelSpec; raises LocalSpecError."""
    if not is_local_spec(model):
        raise LocalSpecError(f"not a local model spec: {model!r} (expected local, local:PATH or local:HUB_ID)")
    rest = model[len(PREFIX) + 1 :].strip()
    if not rest:
        return ModelSpec("hub", DEFAULT_MODEL)
    path_like = rest.startswith(("/", "./", "../", "~")) or rest in (".", "..")
    expanded = os.path.abspath(os.path.expanduser(rest))
    if path_like or os.path.isdir(rest):
        if not os.path.isdir(expanded):
            raise LocalSpecError(f"local model directory {expanded} does not exist")
        if not os.path.isfile(os.path.join(expanded, "config.json")):
            raise LocalSpecError(
                f"{expanded} is not a model directory (no config.json); expected the output of save_pretrained"
            )
        return ModelSpec("path", expanded)
    if _HUB_ID.match(rest):
        return ModelSpec("hub", rest)
    raise LocalSpecError(
        f"{rest!r} is neither a directory nor a Hugging Face model id (ORG/NAME); "
        "write a path as /abs/path or ./relative/path"
    )


def missing_dependencies(find_spec: Callable[[str], Any] = importlib.util.find_spec) -> list[str]:
    """The worker's modules that cannot be imported here (checked without importing them)."""
    missing = []
    for name in REQUIRED_MODULES:
        try:
            found = find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            missing.append(name)
    return missing


def dependency_problem(find_spec: Callable[[str], Any] = importlib.util.find_spec) -> str | None:
    """None when the local backend can run; else the message that says what to install."""
    missing = missing_dependencies(find_spec)
    if not missing:
        return None
    return (
        f"the local model backend needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
        f"not installed; install the optional dependencies with: {INSTALL_HINT}"
    )
