"""Backend configuration records, parsed from editor settings (camelCase JSON objects): the wire
entry is server.protocol.settings.BackendEntry; this module resolves it into what a backend runs with
(the embedded model's spec, its longer timeout)."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from server.backends.local_spec import (
    LocalSpecError,
    dependency_problem,
    is_local_spec,
    parse_spec,
)
from server.protocol.commands import BackendDescription
from server.protocol.decode import DecodeError, convert
from server.protocol.names import STYLES
from server.protocol.settings import BACKEND_NAME, LOCAL, BackendEntry

__all__ = ["LOCAL", "STYLES", "BackendConfig", "ConfigError", "parse_backend", "parse_backends"]

_NAME = re.compile(BACKEND_NAME)  # checked first: every later message names the backend
LOCAL_TIMEOUT_S = 600.0  # a CPU model needs minutes where an endpoint needs seconds


class ConfigError(ValueError):
    """A backend entry in the settings is unusable; the message says which field and why."""


class BackendConfig(msgspec.Struct, frozen=True):
    name: str
    base_url: str
    model: str
    api_key_env: str | None = None
    style: str | None = None  # None: the server's default style
    temperature: float = 0.0
    top_p: float | None = None  # None: the endpoint's default
    max_tokens: int = 2048
    timeout_s: float = 60.0
    max_concurrency: int = 4
    max_retries: int = 2

    def describe(self) -> BackendDescription:
        """What may be shown to the user: never a key, only the variable's name."""
        return BackendDescription(
            name=self.name,
            base_url=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            style=self.style,
            temperature=self.temperature,
            top_p=self.top_p,
            max_tokens=self.max_tokens,
            timeout_s=self.timeout_s,
            max_concurrency=self.max_concurrency,
        )


def parse_backend(obj: Any) -> BackendConfig:
    """One entry of `editFidelity.backends` (protocol.BackendEntry). Raises ConfigError with a precise message."""
    if not isinstance(obj, dict):
        raise ConfigError(f"a backend must be an object, got {type(obj).__name__}")
    name = obj.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(f"`name` must be a short identifier, got {name!r}")
    try:
        entry = convert({k: v for k, v in obj.items() if v is not None}, BackendEntry)
    except DecodeError as exc:
        raise ConfigError(f"backend {name!r}: {exc}") from None
    base_url, model = entry.base_url, entry.model
    local = model is not None and is_local_spec(model.strip()) or base_url == LOCAL
    if local:
        model, base_url = local_model(name, model), LOCAL
    elif base_url is None or not re.match(r"^https?://[^\s]+$", base_url):
        raise ConfigError(f"backend {name!r}: `baseUrl` must be an http(s) URL, got {base_url!r}")
    if model is None or not model.strip():
        raise ConfigError(f"backend {name!r}: `model` must be a non-empty string")
    assert base_url is not None
    return BackendConfig(
        name=name,
        base_url=base_url.rstrip("/"),
        model=model,
        api_key_env=entry.api_key_env or None,
        style=entry.style,
        temperature=entry.temperature,
        top_p=entry.top_p,
        max_tokens=entry.max_tokens,
        timeout_s=entry.timeout_s if entry.timeout_s is not None else LOCAL_TIMEOUT_S if local else 60.0,
        max_concurrency=entry.max_concurrency,
        max_retries=entry.max_retries,
    )


def local_model(name: str, model: object) -> str:
    """The `local...` spec of an entry served by the embedded model (`model` local, local:PATH or
    local:HUB_ID; with baseUrl "local" a bare hub id or path also works); ConfigError when the
    optional dependencies are missing or the model cannot be found."""
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(f"backend {name!r}: `model` must be a non-empty string")
    spec = model.strip() if is_local_spec(model.strip()) else f"local:{model.strip()}"
    problem = dependency_problem()
    if problem:
        raise ConfigError(f"backend {name!r}: {problem}")
    try:
        parse_spec(spec)
    except LocalSpecError as exc:
        raise ConfigError(f"backend {name!r}: {exc}") from None
    return spec


def _plain_http_remote(url: str) -> bool:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    local = host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost")
    return parts.scheme == "http" and not local


def parse_backends(value: Any) -> tuple[list[BackendConfig], list[str]]:
    """All usable backends plus one message per rejected entry (duplicates included)."""
    if value is None:
        return [], []
    if not isinstance(value, list):
        return [], [f"`backends` must be a list, got {type(value).__name__}"]
    backends: list[BackendConfig] = []
    problems: list[str] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        try:
            cfg = parse_backend(item)
        except ConfigError as exc:
            problems.append(f"backends[{i}]: {exc}")
            continue
        if cfg.name in seen:
            problems.append(f"backends[{i}]: duplicate backend name {cfg.name!r} ignored")
            continue
        seen.add(cfg.name)
        backends.append(cfg)
        if cfg.api_key_env and _plain_http_remote(cfg.base_url):
            problems.append(
                f"backends[{i}]: {cfg.name!r} sends its API key over plain http to a remote host; use https"
            )
    return backends, problems
