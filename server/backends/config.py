"""Backend configuration records, parsed from editor settings (camelCase JSON objects)."""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec

from server.backends.local_spec import (
    LocalSpecError,
    dependency_problem,
    is_local_spec,
    parse_spec,
)
from server.backends.prompts import STYLES

_NAME = re.compile(r"^[\w.:@/+-]{1,64}$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
LOCAL = "local"  # baseUrl of an entry served by the embedded model (server.backends.local_backend)
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

    def describe(self) -> dict[str, Any]:
        """What may be shown to the user: never a key, only the variable's name."""
        return {
            "name": self.name,
            "baseUrl": self.base_url,
            "model": self.model,
            "apiKeyEnv": self.api_key_env,
            "style": self.style,
            "temperature": self.temperature,
            "topP": self.top_p,
            "maxTokens": self.max_tokens,
            "timeoutS": self.timeout_s,
            "maxConcurrency": self.max_concurrency,
        }


def _number(obj: dict, key: str, default: float, lo: float, hi: float, *, integer: bool = False):
    value = obj.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"`{key}` must be a number, got {value!r}")
    if integer and value != int(value):
        raise ConfigError(f"`{key}` must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise ConfigError(f"`{key}` must be between {lo} and {hi}, got {value!r}")
    return int(value) if integer else float(value)


def parse_backend(obj: Any) -> BackendConfig:
    """One entry of `editFidelity.backends`. Raises ConfigError with a precise message."""
    if not isinstance(obj, dict):
        raise ConfigError(f"a backend must be an object, got {type(obj).__name__}")
    name = obj.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(f"`name` must be a short identifier, got {name!r}")
    base_url = obj.get("baseUrl")
    model = obj.get("model")
    local = isinstance(model, str) and is_local_spec(model.strip()) or base_url == LOCAL
    if local:
        model, base_url = local_model(name, model), LOCAL
    elif not isinstance(base_url, str) or not re.match(r"^https?://[^\s]+$", base_url):
        raise ConfigError(f"backend {name!r}: `baseUrl` must be an http(s) URL, got {base_url!r}")
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(f"backend {name!r}: `model` must be a non-empty string")
    key_env = obj.get("apiKeyEnv")
    if key_env is not None and (not isinstance(key_env, str) or not _ENV.match(key_env)):
        raise ConfigError(
            f"backend {name!r}: `apiKeyEnv` must be the NAME of an environment variable "
            "(the key itself never goes into settings)"
        )
    style = obj.get("style")
    if style is not None and style not in STYLES:
        raise ConfigError(f"backend {name!r}: `style` must be one of {', '.join(STYLES)}, got {style!r}")
    try:
        return BackendConfig(
            name=name,
            base_url=base_url.rstrip("/"),
            model=model,
            api_key_env=key_env or None,
            style=style,
            temperature=_number(obj, "temperature", 0.0, 0.0, 2.0),
            top_p=None if obj.get("topP") is None else _number(obj, "topP", 1.0, 0.0, 1.0),
            max_tokens=_number(obj, "maxTokens", 2048, 1, 1_000_000, integer=True),
            timeout_s=_number(obj, "timeoutS", LOCAL_TIMEOUT_S if local else 60.0, 0.05, 3600.0),
            max_concurrency=_number(obj, "maxConcurrency", 4, 1, 1024, integer=True),
            max_retries=_number(obj, "maxRetries", 2, 0, 10, integer=True),
        )
    except ConfigError as exc:
        raise ConfigError(f"backend {name!r}: {exc}") from None


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
