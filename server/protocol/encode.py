"""camelCase on the wire for records whose Python fields are snake_case and whose JSON form is shared
with scripts (the fidelity report, which `edit-fidelity check --format json` prints as it is).

`with_camel_keys` gives every snake_case field of a Struct (at any depth) a camelCase twin holding the
same value, so a reply is camelCase throughout while the snake_case keys that scripts read stay. It is
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


def with_camel_keys(value: Any, typ: Any) -> Any:
    """`value` (builtins encoded from `typ`) with a camelCase twin beside every snake_case field."""
    return _walk(value, _info(typ))


def _walk(value: Any, t: mi.Type) -> Any:
    while isinstance(t, mi.Metadata):
        t = t.type
    if value is None:
        return None
    if isinstance(t, mi.UnionType):
        member = next((u for u in t.types if _fits(value, u)), None)
        return value if member is None else _walk(value, member)
    if isinstance(t, mi.StructType) and isinstance(value, dict):
        out: dict[str, Any] = {}
        for f in t.fields:
            if f.encode_name in value:
                v = _walk(value[f.encode_name], f.type)
                out[f.encode_name] = v
                if "_" in f.encode_name:
                    out[camel(f.encode_name)] = v
        return out
    if isinstance(t, (mi.ListType, mi.VarTupleType)) and isinstance(value, list):
        return [_walk(v, t.item_type) for v in value]
    if isinstance(t, mi.DictType) and isinstance(value, dict):
        return {k: _walk(v, t.value_type) for k, v in value.items()}
    return value


def _fits(value: Any, t: mi.Type) -> bool:
    while isinstance(t, mi.Metadata):
        t = t.type
    if isinstance(t, (mi.StructType, mi.DictType)):
        return isinstance(value, dict)
    if isinstance(t, (mi.ListType, mi.VarTupleType)):
        return isinstance(value, list)
    return False
