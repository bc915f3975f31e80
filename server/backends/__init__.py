"""Model backends: OpenAI-compatible chat endpoints, prompts, and code extraction from answers."""

from server.backends.config import (
    STYLES,
    BackendConfig,
    ConfigError,
    parse_backend,
    parse_backends,
)
from server.backends.extract import extract_code, strip_reasoning
from server.backends.openai_backend import (
    BackendError,
    Completion,
    OpenAIBackend,
    parse_retry_after,
)
from server.backends.pool import BackendPool
from server.backends.prompts import ChatMessage, build_messages

__all__ = [
    "STYLES",
    "BackendConfig",
    "BackendError",
    "BackendPool",
    "ChatMessage",
    "Completion",
    "ConfigError",
    "OpenAIBackend",
    "build_messages",
    "extract_code",
    "parse_backend",
    "parse_backends",
    "parse_retry_after",
    "strip_reasoning",
]
