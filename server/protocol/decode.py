"""The one place wire values are decoded: `msgspec.convert` (strict) against the protocol's Structs,
its errors turned into one precise sentence naming the field ("`range.start.character` must be a
non-negative integer", "missing `uri`", "thresholds.debounceMs must be between 0 and 60000, got -1").

`convert` decodes a whole value or raises `DecodeError`; `convert_fields` decodes a settings object
field by field, so a field that does not fit keeps its default and becomes a problem.
"""

from __future__ import annotations

import copy
import math
import re
import typing
from typing import Any

import msgspec
from msgspec import inspect as mi

MAX_INT = 2**31 - 1
_AT = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>\$[^`]*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


class DecodeError(ValueError):
    """A value does not fit the protocol; the message is one sentence naming the field."""


def convert(raw: Any, typ: Any, *, prefix: str = "", quote: bool = True) -> Any:
    """`raw` (JSON-like builtins) as `typ`; DecodeError with a precise message otherwise.

    Integral floats are accepted where an integer is expected (JSON has one number type)."""
    value = raw
    for _ in range(64):
        try:
            out = msgspec.convert(value, typ, strict=True)
        except msgspec.ValidationError as exc:
            msg, steps = _split(str(exc))
            if msg in ("Expected `int`, got `float`", "Expected `int | null`, got `float`"):
                got = _value_at(value, steps)
                if isinstance(got, float) and math.isfinite(got) and got == int(got):
                    value = _replaced(value, steps, int(got))
                    continue
            raise DecodeError(_explain(msg, steps, value, typ, prefix, quote)) from None
        _check_unique(out, typ, prefix, quote)
        return out
    raise DecodeError(f"{_name(prefix, quote) or 'value'} has too many numbers written as floats")


def convert_fields(raw: dict, typ: type[msgspec.Struct], prefix: str) -> tuple[dict[str, Any], list[str]]:
    """Each field of `typ` that `raw` gives (by wire name, null meaning absent) decoded on its own:
    keyword arguments for `typ`, and one problem per field that does not fit (it keeps its default)."""
    hints = typing.get_type_hints(typ, include_extras=True)
    values: dict[str, Any] = {}
    problems: list[str] = []
    for field in mi.type_info(typ).fields:  # type: ignore[attr-defined]
        if raw.get(field.encode_name) is None:
            continue
        try:
            values[field.name] = convert(
                raw[field.encode_name],
                hints[field.name],
                prefix=f"{prefix}.{field.encode_name}" if prefix else field.encode_name,
                quote=False,
            )
        except DecodeError as exc:
            problems.append(str(exc))
    return values, problems


def _split(message: str) -> tuple[str, list[str | int]]:
    m = _AT.match(message)
    assert m is not None
    path = m.group("path") or "$"
    steps: list[str | int] = [s if s else int(i) for s, i in _STEP.findall(path[1:])]
    return m.group("msg"), steps


def _value_at(value: Any, steps: list[str | int]) -> Any:
    for s in steps:
        try:
            value = value[s]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _replaced(value: Any, steps: list[str | int], new: Any) -> Any:
    if not steps:
        return new
    out = copy.copy(value)
    out[steps[0]] = _replaced(value[steps[0]], steps[1:], new)
    return out


def _unwrap(t: mi.Type) -> tuple[mi.Type, dict]:
    """The type under Metadata and `| None`, with the merged `extra` of its Meta."""
    extra: dict = {}
    while True:
        if isinstance(t, mi.Metadata):
            extra = {**(t.extra or {}), **extra}
            t = t.type
        elif isinstance(t, mi.UnionType):
            rest = [u for u in t.types if not isinstance(u, mi.NoneType)]
            if len(rest) != 1:
                return t, extra
            t = rest[0]
        else:
            return t, extra


def _type_at(typ: Any, steps: list[str | int]) -> tuple[mi.Type, dict]:
    t, extra = _unwrap(mi.type_info(typ))
    for s in steps:
        if isinstance(t, mi.UnionType):  # a literal or an object: the step picks the object
            t = next((u for u in t.types if isinstance(u, (mi.StructType, mi.DictType))), t)
        if isinstance(s, int) and isinstance(t, (mi.ListType, mi.VarTupleType)):
            t, extra = _unwrap(t.item_type)
        elif isinstance(s, str) and isinstance(t, mi.StructType):
            field = next((f for f in t.fields if f.encode_name == s), None)
            if field is None:
                break
            t, extra = _unwrap(field.type)
        else:
            break
    return t, extra


def json_kind(v: Any) -> str:
    """How an error message names a JSON value's type ("a string", "null", ...)."""
    if v is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(v), type(v).__name__)


def _bounds(t: mi.Type) -> tuple[Any, Any]:
    return getattr(t, "ge", None), getattr(t, "le", None)


def _what(t: mi.Type, extra: dict, *, ranged: bool) -> str:
    """How a message names what a value must be."""
    if extra.get("expect"):
        return extra["expect"]
    if isinstance(t, (mi.IntType, mi.FloatType)):
        base = "an integer" if isinstance(t, mi.IntType) else "a number"
        lo, hi = _bounds(t)
        if ranged and lo is not None and hi is not None and not (lo == 0 and hi == MAX_INT):
            return f"{base} between {_num(lo)} and {_num(hi)}"
        return base
    if isinstance(t, mi.StrType):
        return "a string"
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.LiteralType):  # in the order the Struct declares them (`choice`), not sorted
        return f"one of {', '.join(map(str, extra.get('order') or t.values))}"
    if isinstance(t, (mi.ListType, mi.VarTupleType)):
        item, _ = _unwrap(t.item_type)
        return {mi.StrType: "an array of strings", mi.IntType: "an array of integers"}.get(type(item), "an array")
    if isinstance(t, mi.StructType):
        names = [f.encode_name for f in t.fields]
        label = {"Range": "a range", "Position": "a position"}.get(t.cls.__name__, "an")
        return f"{label} object {{{', '.join(names)}}}"
    if isinstance(t, mi.UnionType):
        return " or ".join(_what(u, {}, ranged=ranged) for u in t.types if not isinstance(u, mi.NoneType))
    return "something else"


def _num(x: Any) -> str:
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def _name(path: str, quote: bool) -> str:
    return f"`{path}`" if quote and path else path


def _explain(msg: str, steps: list[str | int], raw: Any, typ: Any, prefix: str, quote: bool) -> str:
    dotted = ".".join(str(s) if isinstance(s, str) else f"[{s}]" for s in steps).replace(".[", "[")
    path = prefix + ("." if prefix and dotted and not dotted.startswith("[") else "") + dotted
    missing = re.fullmatch(r"Object missing required field `([^`]+)`", msg)
    if missing:
        field = missing.group(1)
        t, extra = _type_at(typ, [*steps, field])
        full = ".".join(p for p in (path, field) if p)
        if not path:
            return f"missing {_name(field, quote)}" + (f" ({extra['expect']})" if extra.get("expect") else "")
        if isinstance(t, mi.IntType) and _bounds(t) in ((0, None), (0, MAX_INT)):
            return f"{_name(full, quote)} must be a non-negative integer"
        return f"{_name(full, quote)} must be {_what(t, extra, ranged=True)}"
    value = _value_at(raw, steps)
    if steps and isinstance(steps[-1], int) and msg.startswith("Expected"):  # a bad item: name the array
        list_path = path[: path.rindex("[")]
        t, extra = _type_at(typ, steps[:-1])
        return f"{_name(list_path, quote)} must be {_what(t, extra, ranged=False)}"
    t, extra = _type_at(typ, steps)
    name = _name(path, quote) or "the value"
    got = "" if extra.get("secret") else (f", got {json_kind(value)} {value!r}" if quote else f", got {value!r}")
    if re.fullmatch(r"Expected `[^`]+`, got `[^`]+`", msg) or msg.startswith("Invalid enum value"):
        return f"{name} must be {_what(t, extra, ranged=True)}{got}"[:300]
    if "matching regex" in msg:
        if getattr(t, "pattern", None) == r"\S" and not extra.get("expect"):
            return f"{name} must not be empty"
        return f"{name} must be {_what(t, extra, ranged=False)}{got}"[:300]
    length = re.fullmatch(r"Expected `(str|array|object)` of length (<=|>=) (\d+)", msg)
    if length:
        kind, op, n = length.groups()
        if op == ">=":
            hint = extra.get("hint") or ""
            return (
                extra.get("expect")
                and f"{name} must be {extra['expect']}"
                or f"{name} must not be empty" + (f" ({hint})" if hint else "")
            )
        size = len(value) if isinstance(value, (str, list, dict)) else 0
        unit = "characters" if kind == "str" else "items"
        return f"{name} is too long ({size:,} {unit}, at most {int(n):,})"
    if re.fullmatch(r"Expected `(int|float)` (>=|<=|>|<) .*", msg):
        lo, hi = _bounds(t)
        if isinstance(t, mi.IntType) and lo == 0 and hi in (None, MAX_INT):
            return f"{name} must be a non-negative integer{got}"[:300]
        what = "a number between" if isinstance(t, mi.FloatType) else "between"
        return f"{name} must be {what} {_num(lo)} and {_num(hi)}{got}"[:300]
    return f"{name} {msg}" if path else msg  # a Struct's own check (__post_init__): "ends before it starts"


def _check_unique(out: Any, typ: Any, prefix: str, quote: bool) -> None:
    """Arrays marked `Meta(extra={"unique": True})` hold no value twice (top-level fields)."""
    info = mi.type_info(typ)
    if not isinstance(info, mi.StructType):
        return
    for field in info.fields:
        _, extra = _unwrap(field.type)
        v = getattr(out, field.name, None)
        if extra.get("unique") and v is not None and len(set(v)) != len(v):
            path = ".".join(p for p in (prefix, field.encode_name) if p)
            raise DecodeError(f"{_name(path, quote)} has duplicates")
