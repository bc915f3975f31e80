"""llama.cpp's C API through ctypes, from the library inside the pinned `xllamacpp` wheel (it exports
every `llama_*` symbol): what the direct engine (`local_llama_direct`) needs and llama.cpp's own server
does not offer, namely editing the KV cache (drop, shift and insert ranges of positions).

The parameter structs change between llama.cpp versions and no header comes with the wheel, so they
are handled as opaque bytes from `llama_*_default_params()`: only fields at offsets this module
knows are written, and only after the defaults match the known layout's fingerprint; each write is
read back through the library's own getters once the context exists. Anything that does not match
is `CapiUnavailable` and the worker falls back to llama.cpp's server (prefix reuse only).
`llama_batch` and `llama_chat_message` have kept their layout for years; a decode that fails says so.
"""

from __future__ import annotations

import ctypes as C
import glob
import os
import struct
from typing import Any

I32, U32, F32, PTR = C.c_int32, C.c_uint32, C.c_float, C.c_void_p


class CapiUnavailable(Exception):
    """This build's library cannot be driven directly (missing, or a parameter layout not known here)."""


class Batch(C.Structure):
    _fields_ = [
        ("n_tokens", I32),
        ("token", C.POINTER(I32)),
        ("embd", C.POINTER(F32)),
        ("pos", C.POINTER(I32)),
        ("n_seq_id", C.POINTER(I32)),
        ("seq_id", C.POINTER(C.POINTER(I32))),
        ("logits", C.POINTER(C.c_int8)),
    ]


class _Params(C.Structure):
    """A parameter struct as bytes: larger than any llama.cpp version's, so returning and passing it by
    value (both in memory on x86-64 and arm64 for structs this size) copies the real one whole."""

    _fields_ = [("raw", C.c_uint8 * 1024)]


class ChatMessage(C.Structure):
    _fields_ = [("role", C.c_char_p), ("content", C.c_char_p)]


AbortCallback = C.CFUNCTYPE(C.c_bool, PTR)

# llama_context_params of the pinned build: n_ctx, n_batch, n_ubatch, n_seq_max are its first four
# uint32; `kv_unified` is the last of the six bools at 136 (embeddings, offload_kqv, no_perf,
# op_offload, swa_full, kv_unified). The fingerprint is those defaults.
_N_CTX, _N_BATCH, _N_UBATCH, _N_SEQ_MAX = 0, 4, 8, 12
_BOOLS, _KV_UNIFIED = 136, 141
_FINGERPRINT = {_N_CTX: 512, _N_SEQ_MAX: 1}
_BOOL_DEFAULTS = bytes([0, 1, 1, 1, 1, 0])

_SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "llama_backend_init": (None, []),
    "llama_model_default_params": (_Params, []),
    "llama_context_default_params": (_Params, []),
    "llama_model_load_from_file": (PTR, [C.c_char_p, _Params]),
    "llama_model_free": (None, [PTR]),
    "llama_init_from_model": (PTR, [PTR, _Params]),
    "llama_free": (None, [PTR]),
    "llama_model_get_vocab": (PTR, [PTR]),
    "llama_model_chat_template": (C.c_char_p, [PTR, C.c_char_p]),
    "llama_chat_apply_template": (I32, [C.c_char_p, C.POINTER(ChatMessage), C.c_size_t, C.c_bool, C.c_char_p, I32]),
    "llama_tokenize": (I32, [PTR, C.c_char_p, I32, C.POINTER(I32), I32, C.c_bool, C.c_bool]),
    "llama_token_to_piece": (I32, [PTR, I32, C.c_char_p, I32, I32, C.c_bool]),
    "llama_vocab_is_eog": (C.c_bool, [PTR, I32]),
    "llama_n_ctx": (U32, [PTR]),
    "llama_n_ctx_seq": (U32, [PTR]),
    "llama_n_batch": (U32, [PTR]),
    "llama_n_ubatch": (U32, [PTR]),
    "llama_n_seq_max": (U32, [PTR]),
    "llama_n_threads": (I32, [PTR]),
    "llama_set_n_threads": (None, [PTR, I32, I32]),
    "llama_set_abort_callback": (None, [PTR, AbortCallback, PTR]),
    "llama_batch_init": (Batch, [I32, I32, I32]),
    "llama_batch_free": (None, [Batch]),
    "llama_decode": (I32, [PTR, Batch]),
    "llama_get_memory": (PTR, [PTR]),
    "llama_memory_can_shift": (C.c_bool, [PTR]),
    "llama_memory_clear": (None, [PTR, C.c_bool]),
    "llama_memory_seq_rm": (C.c_bool, [PTR, I32, I32, I32]),
    "llama_memory_seq_cp": (None, [PTR, I32, I32, I32, I32]),
    "llama_memory_seq_add": (None, [PTR, I32, I32, I32, I32]),
    "llama_memory_seq_pos_max": (I32, [PTR, I32]),
    "llama_sampler_init_greedy": (PTR, []),
    "llama_sampler_init_top_p": (PTR, [F32, C.c_size_t]),
    "llama_sampler_init_temp": (PTR, [F32]),
    "llama_sampler_init_dist": (PTR, [U32]),
    "llama_sampler_chain_init": (PTR, [C.c_bool]),  # llama_sampler_chain_params is one bool (no_perf)
    "llama_sampler_chain_add": (None, [PTR, PTR]),
    "llama_sampler_sample": (I32, [PTR, PTR, I32]),
    "llama_sampler_free": (None, [PTR]),
}


def library_path() -> str:
    import xllamacpp  # the wheel that carries the library

    found = glob.glob(os.path.join(os.path.dirname(xllamacpp.__file__), "xllamacpp*.so"))
    if not found:
        raise CapiUnavailable("the xllamacpp wheel has no shared library to load")
    return found[0]


_LIB: Any = None


def lib() -> Any:
    """The library with every signature this module uses declared (loaded once per process)."""
    global _LIB
    if _LIB is None:
        handle = C.CDLL(library_path())
        for name, (restype, argtypes) in _SIGNATURES.items():
            try:
                fn = getattr(handle, name)
            except AttributeError:
                raise CapiUnavailable(f"llama.cpp's library lacks {name}") from None
            fn.restype, fn.argtypes = restype, argtypes
        handle.llama_backend_init()
        _LIB = handle
    return _LIB


def _u32(params: _Params, offset: int) -> int:
    return int(struct.unpack_from("<I", bytes(params.raw), offset)[0])


def _set_u32(params: _Params, offset: int, value: int) -> None:
    struct.pack_into("<I", params.raw, offset, value)


def context_params(n_ctx: int, n_batch: int, *, seqs: int) -> _Params:
    """Context parameters with the sizes set and, for more than one sequence, one KV cache shared by
    all of them (`kv_unified`: a sequence can then take another's cells without copying)."""
    params = lib().llama_context_default_params()
    raw = bytes(params.raw)
    if any(_u32(params, off) != want for off, want in _FINGERPRINT.items()) or (
        raw[_BOOLS : _BOOLS + 6] != _BOOL_DEFAULTS
    ):
        raise CapiUnavailable("this llama.cpp build's context parameters are not the layout the direct engine knows")
    for off, value in ((_N_CTX, n_ctx), (_N_BATCH, n_batch), (_N_UBATCH, n_batch), (_N_SEQ_MAX, seqs)):
        _set_u32(params, off, value)
    params.raw[_KV_UNIFIED] = 1 if seqs > 1 else 0
    return params


def check_context(ctx: int, n_ctx: int, n_batch: int, seqs: int) -> None:
    """What the library made of the parameters written by offset: anything else means a wrong layout."""
    api = lib()
    got = {
        "n_ctx": api.llama_n_ctx(ctx),
        "n_batch": api.llama_n_batch(ctx),
        "n_ubatch": api.llama_n_ubatch(ctx),
        "n_seq_max": api.llama_n_seq_max(ctx),
        "n_ctx_seq": api.llama_n_ctx_seq(ctx),  # the whole context for every sequence: unified
    }
    want = {"n_ctx": n_ctx, "n_batch": n_batch, "n_ubatch": n_batch, "n_seq_max": seqs, "n_ctx_seq": n_ctx}
    if got != want:
        raise CapiUnavailable(f"llama.cpp made {got} of the context parameters {want}: not the layout known here")
