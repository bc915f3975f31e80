"""Model specs of the embedded `local` backend, and the check for its optional dependencies.

    local              the default: a catalogued GGUF model (server/models/catalog.py), the 1.5B coder
                       where this machine decodes it at >= 5 tokens/s, else the 0.5B
    local:NAME         a catalogued model by name (`edit-fidelity model list`), e.g. local:smollm2-135m
    local:FILE.gguf    a GGUF file (absolute, ./, ../ or ~)
    local:DIR          a transformers model directory (config.json, weights, tokenizer)
    local:HUB_ID       a transformers model on the Hugging Face hub, e.g. local:Qwen/Qwen2.5-Coder-0.5B-Instruct

GGUF models run on llama.cpp (the `xllamacpp` wheel); transformers models on torch. Nothing here
imports either: the server process never does, only the worker.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable
from typing import Any

import msgspec

from server.models.catalog import CATALOG, lookup

PREFIX = "local"
DEFAULT_MODEL = "default"  # the `local` spec's model: chosen by the worker (catalog.LARGE or SMALL)
INSTALL_HINT = "pip install 'edit-fidelity[local]'"
# import names of what each engine needs; the distribution names are in the `local` extra
ENGINE_MODULES: dict[str, tuple[str, ...]] = {
    "gguf": ("xllamacpp",),
    "hf": ("torch", "transformers", "tokenizers", "safetensors", "huggingface_hub"),
}
REQUIRED_MODULES = ENGINE_MODULES["hf"]  # what the transformers engine needs (kept for callers)

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[\w.-]{1,96}$")


class LocalSpecError(ValueError):
    """A `local...` model string that names no usable model."""


class ModelSpec(msgspec.Struct, frozen=True):
    source: str  # default | named | file | path | hub
    model: str  # catalog name, absolute file or directory path, or hub id

    @property
    def engine(self) -> str:
        return "hf" if self.source in ("path", "hub") else "gguf"

    def describe(self) -> str:
        if self.source == "default":
            return "the default model"
        return {"path": f"directory {self.model}", "file": f"file {self.model}"}.get(self.source, self.model)


def is_local_spec(model: str) -> bool:
    return model == PREFIX or model.startswith(PREFIX + ":")


def parse_spec(model: str) -> ModelSpec:
    """`local`, `local:NAME`, `local:FILE.gguf`, `local:DIR` or `local:HUB_ID` -> ModelSpec; raises
    LocalSpecError (a missing file, a file that is not GGUF: the file's full check is the worker's)."""
    if not is_local_spec(model):
        raise LocalSpecError(
            f"not a local model spec: {model!r} (expected local, local:NAME, local:FILE.gguf, local:DIR or local:HUB_ID)"
        )
    rest = model[len(PREFIX) + 1 :].strip()
    if not rest:
        return ModelSpec("default", DEFAULT_MODEL)
    if lookup(rest) is not None:
        return ModelSpec("named", rest.lower())
    path_like = rest.startswith(("/", "./", "../", "~")) or rest in (".", "..")
    expanded = os.path.abspath(os.path.expanduser(rest))
    if rest.lower().endswith(".gguf") or os.path.isfile(expanded):
        return ModelSpec("file", _check_file(expanded))
    if path_like or os.path.isdir(rest):
        if not os.path.isdir(expanded):
            raise LocalSpecError(f"local model {expanded} does not exist")
        if not os.path.isfile(os.path.join(expanded, "config.json")):
            raise LocalSpecError(
                f"{expanded} is not a model directory (no config.json); expected the output of save_pretrained "
                "or a .gguf file"
            )
        return ModelSpec("path", expanded)
    if _HUB_ID.match(rest):
        return ModelSpec("hub", rest)
    raise LocalSpecError(
        f"{rest!r} is neither a model name ({', '.join(CATALOG)}), a .gguf file, a directory nor a Hugging Face "
        "model id (ORG/NAME); write a path as /abs/path or ./relative/path"
    )


def _check_file(path: str) -> str:
    """The cheap checks (exists, a file, GGUF magic); truncation is found when the worker loads it."""
    if not os.path.exists(path):
        raise LocalSpecError(f"model file {path} does not exist")
    if not os.path.isfile(path):
        raise LocalSpecError(f"{path} is not a file")
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise LocalSpecError(f"cannot read {path}: {exc.strerror or exc}") from None
    if head != b"GGUF":
        raise LocalSpecError(
            f"{path} is not a GGUF model file (it starts with {head!r}); use a .gguf file, a model name "
            f"({', '.join(CATALOG)}) or a transformers model directory"
        )
    return path


def missing_dependencies(find_spec: Callable[[str], Any] = importlib.util.find_spec, engine: str = "gguf") -> list[str]:
    """The engine's modules that cannot be imported here (checked without importing them)."""
    missing = []
    for name in ENGINE_MODULES[engine]:
        try:
            found = find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            missing.append(name)
    return missing


def dependency_problem(find_spec: Callable[[str], Any] = importlib.util.find_spec, engine: str = "gguf") -> str | None:
    """None when the local backend can run models of `engine` (gguf: the default); else the message
    that says what to install."""
    missing = missing_dependencies(find_spec, engine)
    if not missing:
        return None
    return (
        f"the local model backend needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
        f"not installed; install the optional dependencies with: {INSTALL_HINT}"
    )
