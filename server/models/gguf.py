"""A bounded reader of a GGUF file's header: enough to tell a usable model file from a missing,
truncated or foreign one in one line, and to say how many bytes of weights a decoded token reads.

GGUF (llama.cpp's format, little-endian): magic `GGUF`, version, tensor count, metadata count, the
metadata key/values, the tensor infos (name, dims, type, offset), then the tensor data at the next
multiple of `general.alignment`. Every length read is checked against the file's size first, so a
damaged or hostile file ends in GGUFError, never in a huge allocation.
"""

from __future__ import annotations

import os
import struct
from typing import Any, BinaryIO

import msgspec

MAGIC = b"GGUF"
# metadata value types
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
# ggml tensor types: (elements per block, bytes per block), for the ones the models here use
BLOCKS: dict[int, tuple[int, int]] = {
    0: (1, 4),  # F32
    1: (1, 2),  # F16
    2: (32, 18),  # Q4_0
    3: (32, 20),  # Q4_1
    6: (32, 22),  # Q5_0
    7: (32, 24),  # Q5_1
    8: (32, 34),  # Q8_0
    9: (32, 36),  # Q8_1
    10: (256, 84),  # Q2_K
    11: (256, 110),  # Q3_K
    12: (256, 144),  # Q4_K
    13: (256, 176),  # Q5_K
    14: (256, 210),  # Q6_K
    15: (256, 292),  # Q8_K
    20: (32, 18),  # IQ4_NL
    24: (1, 1),  # I8
    25: (1, 2),  # I16
    26: (1, 4),  # I32
    27: (1, 8),  # I64
    28: (1, 8),  # F64
    30: (1, 2),  # BF16
}
_MAX_STRING = 64 << 20  # a chat template or a vocabulary entry is far smaller
_MAX_COUNT = 1 << 24


class GGUFError(ValueError):
    """The file is not a usable GGUF model; the message says what is wrong and what to do."""


class TensorInfo(msgspec.Struct, frozen=True):
    name: str
    shape: tuple[int, ...]
    type: int
    offset: int  # from the start of the data section
    nbytes: int | None  # None: a type this reader does not know the size of


class GGUFInfo(msgspec.Struct, frozen=True):
    path: str
    version: int
    file_bytes: int
    data_offset: int
    metadata: dict[str, Any]  # arrays longer than 16 items are kept as their length only
    tensors: list[TensorInfo]

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name") or os.path.basename(self.path))

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", "?"))

    @property
    def chat_template(self) -> str | None:
        template = self.metadata.get("tokenizer.chat_template")
        return template if isinstance(template, str) and template.strip() else None

    @property
    def context_length(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if isinstance(value, int) else None

    def weight_bytes(self) -> int:
        return sum(t.nbytes or 0 for t in self.tensors)

    def bytes_per_token(self) -> int:
        """Weight bytes one decoded token reads: every matrix once, except an input embedding that a
        separate output matrix leaves to row look-ups (one row a token). With tied embeddings (no
        `output.weight`) the embedding is the output projection and is read whole."""
        total = self.weight_bytes()
        tied = not any(t.name == "output.weight" for t in self.tensors)
        for t in self.tensors:
            if t.name == "token_embd.weight" and not tied and t.nbytes and t.shape:
                rows = t.shape[-1]
                total -= t.nbytes - t.nbytes // max(rows, 1)
        return total


class _Reader:
    def __init__(self, f: BinaryIO, size: int, path: str) -> None:
        self.f, self.size, self.path = f, size, path

    def need(self, n: int, what: str) -> bytes:
        if n < 0 or self.f.tell() + n > self.size:
            raise GGUFError(
                f"{self.path} is truncated (it ends inside its {what}); delete it and fetch it again "
                "(edit-fidelity model fetch)"
            )
        return self.f.read(n)

    def unpack(self, fmt: str, what: str) -> Any:
        return struct.unpack(fmt, self.need(struct.calcsize(fmt), what))[0]

    def string(self, what: str) -> str:
        n = self.unpack("<Q", what)
        if n > _MAX_STRING:
            raise GGUFError(f"{self.path} is damaged (a {n:,}-byte string in its {what})")
        return self.need(n, what).decode("utf-8", "replace")

    def value(self, kind: int, what: str, depth: int = 0) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind], what)
        if kind == _STRING:
            return self.string(what)
        if kind == _ARRAY and depth == 0:
            inner, count = self.unpack("<I", what), self.unpack("<Q", what)
            if count > _MAX_COUNT:
                raise GGUFError(f"{self.path} is damaged (an array of {count:,} items in its {what})")
            if inner in _SCALARS:  # skipped in one seek: vocabularies have 150k scores
                width = struct.calcsize(_SCALARS[inner])
                if count <= 16:
                    return [self.value(inner, what, 1) for _ in range(count)]
                self.need(width * count, what) if width * count < (1 << 20) else self.skip(width * count, what)
                return count
            items = [self.value(inner, what, 1) for _ in range(count)]
            return items if count <= 16 else count
        raise GGUFError(f"{self.path} is damaged (unknown metadata type {kind} in its {what})")

    def skip(self, n: int, what: str) -> None:
        if self.f.tell() + n > self.size:
            self.need(n, what)  # raises: truncated
        self.f.seek(n, os.SEEK_CUR)


def read_gguf(path: str | os.PathLike[str]) -> GGUFInfo:
    """The header of a GGUF file, checked to be complete; GGUFError (one line) otherwise."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise GGUFError(f"model file {path} does not exist; fetch one with: edit-fidelity model fetch")
    if os.path.isdir(path):
        raise GGUFError(f"{path} is a directory, not a GGUF model file")
    size = os.path.getsize(path)
    try:
        with open(path, "rb") as f:
            head = f.read(4)
            if head != MAGIC:
                raise GGUFError(
                    f"{path} is not a GGUF model file (it starts with {head!r}, not b'GGUF'); the embedded "
                    "backend runs GGUF files (llama.cpp's format): fetch one with edit-fidelity model fetch"
                )
            r = _Reader(f, size, path)
            version = r.unpack("<I", "header")
            if version not in (2, 3):
                raise GGUFError(f"{path} is GGUF version {version}; only versions 2 and 3 are supported")
            n_tensors, n_kv = r.unpack("<Q", "header"), r.unpack("<Q", "header")
            if n_tensors > _MAX_COUNT or n_kv > _MAX_COUNT:
                raise GGUFError(f"{path} is damaged ({n_tensors:,} tensors, {n_kv:,} metadata entries)")
            metadata: dict[str, Any] = {}
            for _ in range(n_kv):
                key = r.string("metadata")
                metadata[key] = r.value(r.unpack("<I", "metadata"), "metadata")
            tensors = []
            for _ in range(n_tensors):
                name = r.string("tensor table")
                dims = r.unpack("<I", "tensor table")
                if dims > 8:
                    raise GGUFError(f"{path} is damaged (tensor {name} has {dims} dimensions)")
                shape = tuple(r.unpack("<Q", "tensor table") for _ in range(dims))
                kind, offset = r.unpack("<I", "tensor table"), r.unpack("<Q", "tensor table")
                tensors.append(TensorInfo(name, shape, kind, offset, _nbytes(shape, kind)))
            align = metadata.get("general.alignment", 32)
            align = align if isinstance(align, int) and align > 0 else 32
            data_offset = -(-f.tell() // align) * align
    except OSError as exc:
        raise GGUFError(f"cannot read {path}: {exc.strerror or exc}") from None
    end = max((data_offset + t.offset + (t.nbytes or 0) for t in tensors), default=data_offset)
    if end > size:
        raise GGUFError(
            f"{path} is truncated ({size:,} bytes; its tensors need {end:,}); delete it and fetch it again "
            "(edit-fidelity model fetch)"
        )
    return GGUFInfo(path, version, size, data_offset, metadata, tensors)


def _nbytes(shape: tuple[int, ...], kind: int) -> int | None:
    block = BLOCKS.get(kind)
    if block is None:
        return None
    count = 1
    for d in shape:
        count *= d
    per, size = block
    return count // per * size
