"""The OpenAI backend's retry policy as the SDK carries it out (its own retries, told by a response hook
which answers to retry), and `timeoutS` as one deadline over the whole request, retries included; against
the scripted server on 127.0.0.1."""

from __future__ import annotations

import time

import pytest

from server.backends import BackendError, OpenAIBackend, build_messages, parse_backend
from tools.doubles.scripted import ScriptedServer, Step, fenced

CODE = "def f(x):\n    return x + 1\n"
MSGS = build_messages("fix", CODE)


def _backend(srv: ScriptedServer, model: str, **kw: object) -> OpenAIBackend:
    return OpenAIBackend(parse_backend({"name": model, "baseUrl": srv.base_url, "model": model, **kw}), environ={})


async def test_the_sdk_retries_exactly_the_retryable_statuses() -> None:
    scripts = {
        "too-early": [Step(status=425, headers={"retry-after": "0"}), Step(content=fenced(CODE))],  # not an SDK default
        "not-implemented": [Step(status=501), Step(content=fenced(CODE))],  # an SDK default we do not retry
        "gone": [Step(status=404)],
    }
    with ScriptedServer(scripts) as srv:
        done = await _backend(srv, "too-early", maxRetries=2).complete(MSGS)
        assert done.code == CODE and done.attempts == 2 and len(srv.requests_for("too-early")) == 2
        for model, status in (("not-implemented", 501), ("gone", 404)):
            with pytest.raises(BackendError) as info:
                await _backend(srv, model, maxRetries=2).complete(MSGS)
            assert info.value.status == status and info.value.attempts == 1 and len(srv.requests_for(model)) == 1
            assert f"HTTP {status}: " in info.value.message and "\n" not in info.value.message


async def test_exhausted_retries_say_how_many_attempts() -> None:
    with ScriptedServer({"down": [Step(status=503, headers={"retry-after": "0.05"})]}) as srv:
        with pytest.raises(BackendError, match=r"HTTP 503 after 3 attempts: ") as info:
            await _backend(srv, "down", maxRetries=2).complete(MSGS)
        assert info.value.kind == "http" and info.value.attempts == 3 and len(srv.requests_for("down")) == 3


async def test_timeout_is_one_deadline_over_the_retries() -> None:
    # each answer comes at once and asks for a retry 0.4 s later: the ten retries wait 4 s in all, on
    # any machine, so a 2 s deadline over the whole request ends it among them (a deadline per attempt
    # never fires: each attempt is answered at once, and the last 503 would be the error)
    with ScriptedServer({"busy": [Step(status=503, headers={"retry-after": "0.4"})]}) as srv:
        t0 = time.perf_counter()
        with pytest.raises(BackendError, match="did not answer within 2 s") as info:
            await _backend(srv, "busy", maxRetries=10, timeoutS=2).complete(MSGS)
        assert info.value.kind == "timeout" and info.value.status is None
        # it retried (the first 503 came well inside the deadline) and was cut before the last retry
        assert 2 <= info.value.attempts == len(srv.requests_for("busy")) < 11
        assert time.perf_counter() - t0 < 20  # a safety net only: 10x the deadline
