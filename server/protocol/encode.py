"""camelCase on the wire for records whose Python fields are snake_case (the fidelity report, which
`edit-fidelity check --format json` prints with the core's snake_case field names).

`camel_keys` renames every snake_case field of a Struct (at any depth) to camelCase for a reply;
`snake_keys` is its inverse, for a client that reads the core's document (the benchmark). Both are
type-directed: map keys (variant names, a rename's identifiers) are data and are left alone.
"""

from __future__ import annotations

import functools
from typing import Any

from msgspec import inspect as mi


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


@functools.lru_cache(maxsize=32)
def _info(typ: Any) -> mi.Type:
    return mi.type_info(typ)


def camel_keys(value: Any, typ: Any) -> Any:
    """`value` (builtins encoded from `typ`) with every snake_case field named in camelCase."""
    return _walk(value, _info(typ), to_wire=True)


def snake_keys(value: Any, typ: Any) -> Any:
    """The inverse of `camel_keys`: a reply's record with the Struct's own field names again."""
    return _walk(value, _info(typ), to_wire=False)


def _walk(value: Any, t: mi.Type, *, to_wire: bool) -> Any:
    while isinstance(t, mi.Metadata):
        t = t.type
    if value is None:
        return None
    if isinstance(t, mi.UnionType):
        member = next((u for u in t.types if _fits(value, u)), None)
        return value if member is None else _walk(value, member, to_wire=to_wire)
    if isinstance(t, mi.StructType) and isinstance(value, dict):
        out: dict[str, Any] = {}
        for f in t.fields:
            wire = camel(f.encode_name)
            src, dst = (f.encode_name, wire) if to_wire else (wire, f.encode_name)
            if src in value:
                out[dst] = _walk(value[src], f.type, to_wire=to_wire)
        return out
    if isinstance(t, (mi.ListType, mi.VarTupleType)) and isinstance(value, list):
        return [_walk(v, t.item_type, to_wire=to_wire) for v in value]
    if isinstance(t, mi.DictType) and isinstance(value, dict):
        return {k: _walk(v, t.value_type, to_wire=to_wire) for k, v in value.items()}
    return value


def _fits(value: Any, t: mi.Type) -> bool:
    while isinstance(t, mi.Metadata):
        t = t.type
    if isinstance(t, (mi.StructType, mi.DictType)):
        return isinstance(value, dict)
    if isinstance(t, (mi.ListType, mi.VarTupleType)):
        return isinstance(value, list)
    return False
