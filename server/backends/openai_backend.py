"""The OpenAI-compatible chat-completions backend (vLLM, OpenAI, Ollama, llama.cpp alike).

Built on the `openai` async client, whose own retries (`max_retries`, exponential backoff honouring
`Retry-After` / `retry-after-ms`, also after a failed connection) follow this module's policy: a response
hook tells the SDK, through its `x-should-retry` header, to retry exactly the RETRYABLE statuses and never
when the server asks for a wait over MAX_RETRY_AFTER_S. `timeout_s` is a hard deadline on the whole
request, retries included (a slow-drip server cannot stretch it); at most `max_concurrency` requests are in
flight per backend; task cancellation closes the HTTP request.
The API key is read from the environment variable the settings name, at request time; it is never
logged or returned, and is masked in anything a (possibly hostile) backend sends back.
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import msgspec

from server.backends.config import BackendConfig
from server.backends.extract import extract_code
from server.backends.prompts import ChatMessage
from server.tasks import TaskSet

logger = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 4_000_000
MAX_RETRY_AFTER_S = 30.0
RETRYABLE = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 524, 529})


class BackendError(Exception):
    """A failed backend call. `kind`: missing_key, connection, timeout, http, rate_limited,
    bad_response, empty, no_code, too_large; the local backend adds missing_dependency and
    model_unavailable."""

    def __init__(self, kind: str, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.attempts = attempts


class Completion(msgspec.Struct):
    text: str  # the answer as received (reasoning included), key masked
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    latency_ms: float
    attempts: int
    # the other samples of an `n > 1` request: (text, finish_reason), in choice order
    more: list[tuple[str, str | None]] = []
    cached_tokens: int | None = None  # prompt tokens the server took from its cache (when it says)

    @property
    def code(self) -> str | None:
        """The Python code in the answer by our default reading (None when it has none). The server reads
        answers per prompt style and language (`extract_for`), so nothing on its request path pays for this."""
        return extract_code(self.text)


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait according to `retry-after-ms` or `Retry-After` (seconds or HTTP date)."""
    if not headers:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            value = float(ms) / 1000.0
            return value if value >= 0 else None
    except (TypeError, ValueError):
        pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
        return value if value >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


# the requests one `_request` has sent (the SDK's attempts), counted by the client's request hook
_sent: contextvars.ContextVar[list[int]] = contextvars.ContextVar("edit_fidelity_requests_sent")


async def _count_request(_request: Any) -> None:
    counter = _sent.get(None)
    if counter is not None:
        counter[0] += 1


def _too_long(headers: Mapping[str, str] | None) -> float | None:
    """The wait a server asks for when it is over MAX_RETRY_AFTER_S (then the request is not retried)."""
    wait = parse_retry_after(headers)
    return wait if wait is not None and wait > MAX_RETRY_AFTER_S else None


async def _retry_policy(response: Any) -> None:
    """Which error answers the SDK retries (it obeys `x-should-retry` before its own rules)."""
    if response.status_code >= 400:
        retry = response.status_code in RETRYABLE and _too_long(response.headers) is None
        response.headers["x-should-retry"] = "true" if retry else "false"


class OpenAIBackend:
    """One configured backend. Create inside the running event loop's lifetime; `aclose` at the end."""

    def __init__(
        self,
        config: BackendConfig,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self._environ = environ if environ is not None else os.environ
        self._semaphore = asyncio.Semaphore(config.max_concurrency)
        self._client: Any = None
        self._client_key: str | None = None
        self._closing = TaskSet()  # clients replaced by a new key, closing in the background
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def name(self) -> str:
        return self.config.name

    # -- keys ---------------------------------------------------------------------------------
    def _api_key(self) -> str:
        env = self.config.api_key_env
        if not env:
            return "EMPTY"  # local servers (vLLM, Ollama, llama.cpp) accept any key
        key = self._environ.get(env)
        if not key:
            raise BackendError(
                "missing_key",
                f"backend {self.name!r}: environment variable {env} is not set (it must hold the API key)",
            )
        return key

    def _mask(self, text: str) -> str:
        key = self._client_key
        if key and key != "EMPTY" and len(key) >= 6 and key in text:
            text = text.replace(key, "***")
        return text

    def _get_client(self, key: str) -> Any:  # openai.AsyncOpenAI, imported when first needed
        if self._client is None or key != self._client_key:
            from openai import AsyncOpenAI, DefaultAsyncHttpxClient  # import here: ~0.3 s at server start

            old = self._client
            self._client = AsyncOpenAI(
                api_key=key,
                base_url=self.config.base_url,
                max_retries=self.config.max_retries,
                timeout=self.config.timeout_s,
                http_client=DefaultAsyncHttpxClient(
                    event_hooks={"request": [_count_request], "response": [_retry_policy]}
                ),
            )
            self._client_key = key
            if old is not None:
                self._closing.spawn(old.close(), name=f"close:{self.name}")
        return self._client

    async def aclose(self) -> None:
        await self._closing.wait()
        client, self._client = self._client, None
        if client is not None:
            try:
                await client.close()
            except Exception:  # pragma: no cover - closing is best effort
                logger.debug("closing backend %s failed", self.name, exc_info=True)

    # -- the call -----------------------------------------------------------------------------
    def _short(self, text: object, limit: int = 300) -> str:  # a message or an exception
        text = self._mask(" ".join(str(text).split()))
        return text if len(text) <= limit else text[: limit - 1] + "…"

    async def complete(self, messages: list[ChatMessage], *, n: int = 1) -> Completion:
        """Send one chat request (`n` samples); retries as configured. Raises BackendError (never a key in it)."""
        payload = [{"role": m.role, "content": m.content} for m in messages]
        return await self._request(
            lambda client: client.chat.completions.create(
                model=self.config.model, messages=payload, **self._sampling(n)
            )
        )

    async def complete_prompt(self, prompt: str, *, stop: list[str] | None = None, n: int = 1) -> Completion:
        """Send one text-completion request (`/v1/completions`, for base models and the paper formats
        that use it)."""
        return await self._request(
            lambda client: client.completions.create(
                model=self.config.model, prompt=prompt, stop=stop or None, **self._sampling(n)
            )
        )

    def _sampling(self, n: int) -> dict[str, Any]:
        cfg = self.config
        out: dict[str, Any] = {"temperature": cfg.temperature, "max_tokens": cfg.max_tokens}
        if cfg.top_p is not None:
            out["top_p"] = cfg.top_p
        if n > 1:
            out["n"] = n
        return out

    async def _request(self, call: Callable[[Any], Awaitable[Any]]) -> Completion:
        import openai

        key = self._api_key()
        client = self._get_client(key)
        cfg = self.config
        started = time.perf_counter()
        sent = [0]
        token = _sent.set(sent)
        try:
            async with self._semaphore:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    async with asyncio.timeout(cfg.timeout_s):
                        response = await call(client)
                finally:
                    self.in_flight -= 1
            return self._completion(response, started, max(sent[0], 1))
        except (TimeoutError, openai.APITimeoutError):
            raise BackendError(
                "timeout",
                f"backend {self.name!r} did not answer within {cfg.timeout_s:g} s",
                attempts=max(sent[0], 1),
            ) from None
        except openai.APIStatusError as exc:
            status, attempts = exc.status_code, max(sent[0], 1)
            detail = self._short(getattr(exc, "message", "") or str(exc))
            wait = _too_long(exc.response.headers if exc.response is not None else None)
            if status in RETRYABLE and wait is not None:
                detail = f"asked to retry after {wait:.0f} s; {detail}"
            kind = "rate_limited" if status == 429 else "http"
            if status in (401, 403):
                detail = "authentication failed (check the key in " + (cfg.api_key_env or "the environment") + ")"
            raise BackendError(
                kind,
                f"backend {self.name!r}: HTTP {status}"
                + (f" after {attempts} attempts" if attempts > 1 else "")
                + f": {detail}",
                status=status,
                attempts=attempts,
            ) from None
        except openai.APIConnectionError as exc:
            raise BackendError(
                "connection",
                f"backend {self.name!r}: cannot reach {cfg.base_url} ({self._short(exc.__cause__ or exc, 120)})",
                attempts=max(sent[0], 1),
            ) from None
        except (openai.APIResponseValidationError, openai.APIError, ValueError, TypeError, KeyError) as exc:
            raise BackendError(
                "bad_response",
                f"backend {self.name!r} sent an answer that is not a chat completion: {self._short(exc, 160)}",
                attempts=max(sent[0], 1),
            ) from None
        finally:
            _sent.reset(token)

    def _completion(self, response: Any, started: float, attempts: int) -> Completion:
        latency = (time.perf_counter() - started) * 1000.0
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list):
            raise BackendError(
                "bad_response",
                f"backend {self.name!r} sent an answer that is not a chat completion "
                f"({self._short(repr(response), 120)})",
                attempts=attempts,
            )
        if not choices:
            raise BackendError("empty", f"backend {self.name!r} answered with no choices", attempts=attempts)
        texts = [self._choice_text(c, attempts) for c in choices]
        choice = choices[0]
        content = texts[0]
        usage = getattr(response, "usage", None)

        def _int(v: Any) -> int | None:
            return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

        return Completion(
            text=content,
            prompt_tokens=_int(getattr(usage, "prompt_tokens", None)),
            completion_tokens=_int(getattr(usage, "completion_tokens", None)),
            finish_reason=_finish(choice),
            latency_ms=latency,
            attempts=attempts,
            more=[(t, _finish(c)) for t, c in zip(texts[1:], choices[1:], strict=True)],
            cached_tokens=_int(getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)),
        )

    def _choice_text(self, choice: Any, attempts: int) -> str:
        message = getattr(choice, "message", None)
        # chat completions carry a message; text completions (`/v1/completions`) a text
        content = getattr(message, "content", None) if message is not None else getattr(choice, "text", None)
        if not isinstance(content, str) or not content.strip():
            raise BackendError("empty", f"backend {self.name!r} answered with an empty message", attempts=attempts)
        if len(content) > MAX_ANSWER_CHARS:
            raise BackendError(
                "too_large", f"backend {self.name!r} answered with {len(content):,} characters", attempts=attempts
            )
        return self._mask(content)


def _finish(choice: Any) -> str | None:
    reason = getattr(choice, "finish_reason", None)
    return reason if isinstance(reason, str) else None
