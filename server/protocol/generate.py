"""Write the extension's copy of the wire contract from server.protocol:

- `client-vscode/package.json` `contributes.configuration` (the settings UI), from SettingsWire;
- `client-vscode/src/protocol.generated.ts`: command names, every command's argument and result
  type (the fidelity report included), the settings types, their defaults and numeric ranges, the
  shared name lists.

    python -m server.protocol.generate          # rewrite both
    python -m server.protocol.generate --check  # exit 1 with one line when either is stale
"""

from __future__ import annotations

import argparse
import json
import sys
import typing
from pathlib import Path
from typing import Any

import msgspec
from msgspec import inspect as mi

from server.protocol import commands, names, report
from server.protocol import settings as wire

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path("client-vscode/package.json")
TYPES = Path("client-vscode/src/protocol.generated.ts")
TITLE = "Edit Fidelity"


# ---- package.json ------------------------------------------------------------------------------


def _plain(v: Any) -> Any:
    """JSON-ready: tuples as lists, integral floats as integers (1 rather than 1.0)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _schema(t: mi.Type, *, nullable: bool = True) -> dict[str, Any]:
    """The JSON schema VS Code reads for one setting or property."""
    extra: dict[str, Any] = {}
    order = None
    while isinstance(t, mi.Metadata):  # the outermost Meta wins
        extra = {**(t.extra_json_schema or {}), **extra}
        order = order or (t.extra or {}).get("order")
        t = t.type
    if isinstance(t, mi.UnionType):
        members = [u for u in t.types if not isinstance(u, mi.NoneType)]
        has_null = len(members) < len(t.types)
        parts = [_schema(u) for u in members]
        # null is offered only where it means something (no editor default stands in for it)
        nullable = nullable and has_null and not (len(parts) == 1 and parts[0].get("default") is not None)
        if len(parts) == 1 and not nullable:
            out = parts[0]
        else:
            out, types = {}, []
            for p in parts:
                types += p["type"] if isinstance(p["type"], list) else [p["type"]]
                out.update({k: v for k, v in p.items() if k != "type"})
            types += ["null"] if nullable else []
            out = {"type": types[0] if len(types) == 1 else types, **out}
    elif isinstance(t, mi.IntType):
        out = {"type": "integer", "minimum": t.ge, "maximum": t.le}
    elif isinstance(t, mi.FloatType):
        out = {"type": "number", "minimum": t.ge, "maximum": t.le}
    elif isinstance(t, mi.StrType):
        out = {"type": "string", "minLength": t.min_length, "maxLength": t.max_length, "pattern": t.pattern}
    elif isinstance(t, mi.BoolType):
        out = {"type": "boolean"}
    elif isinstance(t, mi.LiteralType):
        out = {"type": "string", "enum": list(order or t.values)}
    elif isinstance(t, (mi.ListType, mi.VarTupleType)):
        out = {"type": "array", "items": _schema(t.item_type, nullable=False), "minItems": t.min_length}
    elif isinstance(t, mi.StructType):
        props = {f.encode_name: _schema(f.type, nullable=False) for f in t.fields}
        out = {
            "type": "object",
            "required": [f.encode_name for f in t.fields if f.required],
            "additionalProperties": False,
            "properties": props,
        }
    else:
        raise TypeError(f"no JSON schema for {t!r}")
    out = {k: v for k, v in out.items() if v is not None}
    if out.get("pattern") == r"\S":  # "not blank" is the server's check; the editor's pattern is in extra
        del out["pattern"]
    out.update(extra)
    return _plain(out)


def _default(field: mi.Field) -> Any:
    if field.default_factory is not msgspec.NODEFAULT:
        return field.default_factory()
    return None if field.default is msgspec.NODEFAULT else field.default


def _setting(field: mi.Field) -> dict[str, Any]:
    out = _schema(field.type)
    if "default" not in out:
        out["default"] = _plain(msgspec.to_builtins(_default(field)))
    first: dict[str, Any] = {k: out.pop(k) for k in ("type", "enum", "items") if k in out}
    return {**first, "default": out.pop("default", None), **out}


def configuration() -> dict[str, Any]:
    """`contributes.configuration`: the client's own settings around the server's, one key per setting."""
    props: dict[str, Any] = {f"{names.SECTION}.{k}": v for k, v in wire.CLIENT_SETTINGS.items()}
    for field in mi.type_info(wire.SettingsWire).fields:  # type: ignore[attr-defined]
        if field.encode_name in wire.EDITOR_HIDDEN:
            continue
        if field.encode_name in wire.FLATTENED:
            for sub in mi.type_info(typing.get_type_hints(wire.SettingsWire)[field.name]).fields:  # type: ignore[attr-defined]
                props[f"{names.SECTION}.{field.encode_name}.{sub.encode_name}"] = _setting(sub)
        else:
            props[f"{names.SECTION}.{field.encode_name}"] = _setting(field)
    props.update({f"{names.SECTION}.{k}": v for k, v in wire.CLIENT_SETTINGS_AFTER.items()})
    return {"title": TITLE, "properties": props}


def package_json(current: str) -> str:
    package = json.loads(current)
    package["contributes"]["configuration"] = configuration()
    return json.dumps(package, indent=2, ensure_ascii=False) + "\n"


# ---- TypeScript --------------------------------------------------------------------------------


def _ts(t: mi.Type, structs: dict[str, type]) -> str:
    while isinstance(t, mi.Metadata):
        order = (t.extra or {}).get("order")
        if order and isinstance(t.type, mi.LiteralType):
            return " | ".join(json.dumps(v) for v in order)
        t = t.type
    if isinstance(t, (mi.IntType, mi.FloatType)):
        return "number"
    if isinstance(t, mi.StrType):
        return "string"
    if isinstance(t, mi.BoolType):
        return "boolean"
    if isinstance(t, mi.NoneType):
        return "null"
    if isinstance(t, mi.AnyType):
        return "unknown"
    if isinstance(t, mi.LiteralType):
        return " | ".join(json.dumps(v) for v in t.values)
    if isinstance(t, (mi.ListType, mi.VarTupleType)):
        item = _ts(t.item_type, structs)
        return f"({item})[]" if "|" in item else f"{item}[]"
    if isinstance(t, mi.DictType):
        return f"Record<string, {_ts(t.value_type, structs)}>"
    if isinstance(t, mi.StructType):
        structs.setdefault(t.cls.__name__, t.cls)
        return t.cls.__name__
    if isinstance(t, mi.UnionType):  # `int | float` is one TypeScript number
        return " | ".join(dict.fromkeys(_ts(u, structs) for u in t.types))
    raise TypeError(f"no TypeScript type for {t!r}")


def _description(t: mi.Type) -> str | None:
    while isinstance(t, (mi.Metadata, mi.UnionType)):
        if isinstance(t, mi.Metadata):
            schema = t.extra_json_schema or {}
            text = schema.get("description") or schema.get("markdownDescription")
            if text:
                return text
            t = t.type
        else:
            t = next((u for u in t.types if isinstance(u, mi.Metadata)), mi.NoneType())
    return None


def _interface(cls: type, structs: dict[str, type], inputs: set[str]) -> str:
    """One Struct as an interface. Arguments and settings may leave out a field that has a default;
    results carry every field (unless the Struct omits defaults)."""
    info = mi.type_info(cls)
    omits = cls.__struct_config__.omit_defaults  # type: ignore[attr-defined]
    lines = []
    doc = (cls.__doc__ or "").strip()
    if doc and not doc.startswith(f"{cls.__name__}("):  # msgspec's own signature docstring is no help
        lines.append(f"/** {' '.join(doc.split())} */")
    lines.append(f"export interface {cls.__name__} {{")
    for f in info.fields:  # type: ignore[attr-defined]
        text = _description(f.type)
        if text:
            lines.append(f"  /** {' '.join(text.split())} */")
        optional = "?" if (cls.__name__ in inputs or omits) and not f.required else ""
        key = f.encode_name if f.encode_name.isidentifier() else json.dumps(f.encode_name)
        lines.append(f"  {key}{optional}: {_ts(f.type, structs)};")
    lines.append("}")
    return "\n".join(lines)


def _ranges(cls: type) -> str:
    """`key: [integer?, minimum, maximum, default]` for the Struct's numeric fields."""
    rows = []
    for f in mi.type_info(cls).fields:  # type: ignore[attr-defined]
        t = f.type
        while isinstance(t, (mi.Metadata, mi.UnionType)):
            t = t.type if isinstance(t, mi.Metadata) else next(u for u in t.types if not isinstance(u, mi.NoneType))
        if isinstance(t, (mi.IntType, mi.FloatType)):
            value = _default(f)
            default = "undefined" if value is None else json.dumps(_plain(value))
            rows.append(
                f"  {f.encode_name}: [{json.dumps(isinstance(t, mi.IntType))}, {json.dumps(_plain(t.ge))}, "
                f"{json.dumps(_plain(t.le))}, {default}],"
            )
    return "\n".join(rows)


def typescript() -> str:
    structs: dict[str, type] = {}
    inputs: set[str] = set()
    roots: list[type] = []
    for args_type, result_type in commands.COMMANDS.values():
        roots += [args_type, result_type]
    roots += [wire.SettingsWire, report.TextEdit]
    for cls in roots:  # collect every Struct reachable from the roots, in a stable order
        _ts(mi.type_info(cls), structs)
    for cls in [a for a, _ in commands.COMMANDS.values()] + [wire.SettingsWire]:
        stack = [cls]
        while stack:
            c = stack.pop()
            if c.__name__ in inputs:
                continue
            inputs.add(c.__name__)
            found: dict[str, type] = {}
            for f in mi.type_info(c).fields:  # type: ignore[attr-defined]
                _ts(f.type, found)
            stack += found.values()
    seen: dict[str, type] = {}
    pending = list(structs.values())
    while pending:
        c = pending.pop(0)
        if c.__name__ in seen:
            continue
        seen[c.__name__] = c
        found = {}
        for f in mi.type_info(c).fields:  # type: ignore[attr-defined]
            _ts(f.type, found)
        pending += found.values()
    commands_ts = "\n".join(
        f"  {c.name.lower().split('_')[0]}{''.join(w.title() for w in c.name.lower().split('_')[1:])}:"
        f" {json.dumps(c.value)},"
        for c in names.Command
    )
    severity = ", ".join(f"{k}: {json.dumps(v)}" for k, (v, _) in wire.SEVERITY_KINDS.items())
    sent = [
        f.encode_name
        for f in mi.type_info(wire.SettingsWire).fields  # type: ignore[attr-defined]
        if f.encode_name not in wire.EDITOR_HIDDEN
    ]
    out = [
        "// GENERATED by `python -m server.protocol.generate` from server/protocol: do not edit.",
        "// The wire contract as the extension sees it: camelCase keys (server/lsp/PROTOCOL.md).",
        "/* eslint-disable */",
        "",
        f"export const SECTION = {json.dumps(names.SECTION)};",
        "",
        "/** Every command the server registers. */",
        "export const Commands = {",
        commands_ts,
        "} as const;",
        "export type CommandName = (typeof Commands)[keyof typeof Commands];",
        "",
        f"export const STYLES = {json.dumps(list(names.STYLES))} as const;",
        "/** The styles the editor offers (the others replay a paper's own prompt format). */",
        f"export const EDITOR_STYLES = {json.dumps(list(names.EDITOR_STYLES))} as const;",
        f"export const BUG_TYPES = {json.dumps(list(names.BUG_TYPES))} as const;",
        f"export const SEVERITY_LEVELS = {json.dumps(list(names.SEVERITY_NAMES))} as const;",
        f"export const SANDBOXES = {json.dumps(list(names.SANDBOXES))} as const;",
        f"export const APPLY_REASONS = {json.dumps(list(names.APPLY_REASONS))} as const;",
        f"export const NECESSITY_INCLUDE: readonly string[] = {json.dumps(list(wire.NECESSITY_INCLUDE))};",
        "/** The settings the extension sends the server (a change to one restarts it). */",
        f"export const SERVER_SETTINGS = {json.dumps(sent)} as const;",
        "/** How loud a flagged unit of each kind is by default (`whitespace`: whitespace-only units). */",
        f"export const SEVERITY_DEFAULTS = {{ {severity} }} as const;",
        "",
        "/** Patterns the server checks (a backend's name, an environment variable's, a sandbox environment's). */",
        f"export const BACKEND_NAME = /{wire.BACKEND_NAME}/;",
        f"export const ENV_NAME = /{wire.ENV_NAME}/;",
        f"export const ENVIRONMENT_NAME = /{wire.ENVIRONMENT_NAME}/;",
        "",
        "/** [integer?, minimum, maximum, default] of a numeric setting. */",
        "export type NumberRange = readonly [boolean, number, number, number | undefined];",
        "export const THRESHOLD_RANGES = {",
        _ranges(wire.Thresholds),
        "} as const satisfies Record<string, NumberRange>;",
        "export const NECESSITY_RANGES = {",
        _ranges(wire.NecessitySettings),
        "} as const satisfies Record<string, NumberRange>;",
        "export const BACKEND_RANGES = {",
        _ranges(wire.BackendEntry),
        "} as const satisfies Record<string, NumberRange>;",
        "",
    ]
    for name in sorted(seen):
        out += [_interface(seen[name], {}, inputs), ""]
    return "\n".join(out)


# ---- entry point -------------------------------------------------------------------------------


def outputs(root: Path = ROOT) -> dict[Path, str]:
    return {PACKAGE: package_json((root / PACKAGE).read_text(encoding="utf-8")), TYPES: typescript()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m server.protocol.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated file is stale; write nothing")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    if not (args.root / PACKAGE).is_file():
        print(f"generate: {args.root / PACKAGE} not found; give the checkout with --root", file=sys.stderr)
        return 2
    wanted = outputs(args.root)
    stale = [
        p
        for p, text in wanted.items()
        if not (args.root / p).is_file() or (args.root / p).read_text(encoding="utf-8") != text
    ]
    if args.check:
        if stale:
            print(
                f"generate: stale {', '.join(map(str, stale))}: run `python -m server.protocol.generate`",
                file=sys.stderr,
            )
            return 1
        return 0
    for p in stale:
        (args.root / p).write_text(wanted[p], encoding="utf-8")
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
