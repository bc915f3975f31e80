"""`edit-fidelity check --format json`'s document: the fidelity report as the language server sends it
(`server.protocol.report`: camelCase keys), or, with `--json-keys snake`, with the snake_case keys `check`
printed before the report became one typed contract (a transition for scripts that read them; it goes in a
later release). Map keys are data either way: distance variants (`no_comments`), a rename's identifiers.
"""

from __future__ import annotations

from typing import Any

import msgspec

from server.protocol.report import FidelityReport

KEY_CASES = ("camel", "snake")


def report_json(report: FidelityReport, keys: str = "camel") -> bytes:
    """One file's report."""
    return msgspec.json.encode(report if keys == "camel" else snake(report))


def git_json(revision: str, files: list[dict[str, Any]], keys: str = "camel") -> bytes:
    """`--git`: `{"revision", "files": [{"path", "status", "oldPath"?, "similarity"?, "report" | "error"}]}`;
    a file entry's `old_path` is `oldPath` in camelCase."""
    if keys == "camel":
        entries = [{("oldPath" if k == "old_path" else k): v for k, v in f.items()} for f in files]
    else:
        entries = [snake(f) for f in files]
    return msgspec.json.encode({"revision": revision, "files": entries})


def snake(value: Any) -> Any:
    """`value` with every Struct field named as in Python (snake_case), at any depth, defaults omitted where
    the Struct omits them; a text edit's `newText` keeps LSP's name, as it always had."""
    if isinstance(value, msgspec.Struct):
        omit = value.__struct_config__.omit_defaults
        out: dict[str, Any] = {}
        for f in msgspec.structs.fields(value):
            v = getattr(value, f.name)
            if omit and v == _default(f):
                continue
            out[f.encode_name if f.encode_name == "newText" else f.name] = snake(v)
        return out
    if isinstance(value, dict):
        return {k: snake(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [snake(v) for v in value]
    return value


def _default(f: msgspec.structs.FieldInfo) -> Any:
    if f.default is not msgspec.NODEFAULT:
        return f.default
    if f.default_factory is not msgspec.NODEFAULT:
        return f.default_factory()
    return msgspec.NODEFAULT
