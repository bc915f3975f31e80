"""Backends without LSP: code extraction, Retry-After, prompts, settings, retries and cancellation
against the scripted HTTP server, selection assembly."""

from __future__ import annotations

import asyncio
import importlib
import time

import pytest

from server.backends import (
    BackendError,
    ConfigError,
    OpenAIBackend,
    build_messages,
    extract_code,
    parse_backend,
    parse_retry_after,
)
from server.lsp.flagging import allowed_kinds
from server.lsp.lines import assemble_selection, whole_lines
from server.lsp.observe import changed_lines
from server.lsp.settings import parse_settings
from server.lsp.unit_edits import UnitGeometry
from tools.doubles.scripted import ScriptedServer, Step, fenced

CODE = "def f(x):\n    return x + 1\n"


@pytest.mark.parametrize(
    "answer, expected",
    [
        (f"Sure:\n```python\n{CODE}```\nDone.", CODE),
        (f"```py\n{CODE}```", CODE),
        (f"```\n{CODE}```", CODE),
        # the longest python block wins over a short usage example
        (f"```python\nf(1)\n```\nand the fix:\n```python\n{CODE}```", CODE),
        # python beats untagged, and non-python blocks are not the answer
        (f"```bash\npip install x\n```\n```python\n{CODE}```", CODE),
        # reasoning removed, including code inside it
        (f"<think>maybe ```python\nwrong = 1\n``` no</think>\n```python\n{CODE}```", CODE),
        (f"I think it's fine.</think>\n```python\n{CODE}```", CODE),
        # an answer that is only code
        (CODE, CODE),
        ("    return x + 1\n", "    return x + 1\n"),
        # a block cut off by the token limit
        (f"```python\n{CODE}", CODE),
        # a longer fence around code that itself contains ```
        ('````python\ns = """```"""\n````', 's = """```"""\n'),
        # CRLF answers
        ("```python\r\nx = 1\r\n```", "x = 1\n"),
        # markers echoed back are dropped
        ("```python\n# >>> SELECTION START\nx = 1\n# <<< SELECTION END\n```", "x = 1\n"),
    ],
)
def test_extract_code(answer, expected):
    assert extract_code(answer) == expected


@pytest.mark.parametrize(
    "answer",
    [
        None,
        "",
        "   ",
        "I cannot help with that.",
        "Sure",
        "<think>still thinking",
        "```diff\n-a\n+b\n```",
        "Here you go: def f(x) return",
    ],
)
def test_no_code(answer):
    assert extract_code(answer) is None


def test_retry_after():
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-1"}) is None
    assert parse_retry_after({}) is None
    when = "Wed, 21 Oct 2015 07:28:05 GMT"
    import email.utils

    now = email.utils.parsedate_to_datetime(when).timestamp() - 3
    assert parse_retry_after({"retry-after": when}, now=now) == pytest.approx(3.0)


def test_prompts():
    generic = build_messages("fix it", CODE, style="generic")
    minimal = build_messages("fix it", CODE, style="minimal")
    assert generic[0].role == "system" and generic[1].role == "user"
    assert "Keep as much of the original code as possible" in minimal[1].content
    assert "Keep as much" not in generic[1].content
    sel = build_messages("fix", "a = 1\nb = 2\nc = 3\n", selection=(1, 1))
    assert "# >>> SELECTION START\nb = 2\n# <<< SELECTION END" in sel[1].content
    tricky = build_messages("fix", 's = "```"\n')
    assert "````python" in tricky[1].content


def test_backend_settings_validation():
    ok = parse_backend(
        {
            "name": "a",
            "baseUrl": "http://h:1/v1/",
            "model": "m",
            "apiKeyEnv": "KEY",
            "temperature": 0.2,
            "maxTokens": 100,
            "timeoutS": 5,
            "maxConcurrency": 3,
        }
    )
    assert ok.base_url == "http://h:1/v1" and ok.max_concurrency == 3 and ok.api_key_env == "KEY"
    for bad, fragment in [
        ({"name": "a", "baseUrl": "ftp://x", "model": "m"}, "baseUrl"),
        ({"name": "", "baseUrl": "http://x", "model": "m"}, "name"),
        ({"name": "a", "baseUrl": "http://x", "model": ""}, "model"),
        ({"name": "a", "baseUrl": "http://x", "model": "m", "apiKeyEnv": "sk-123 abc"}, "NAME of an environment"),
        ({"name": "a", "baseUrl": "http://x", "model": "m", "maxTokens": 1.5}, "integer"),
        ({"name": "a", "baseUrl": "http://x", "model": "m", "timeoutS": float("nan")}, "number"),
        ({"name": "a", "baseUrl": "http://x", "model": "m", "maxConcurrency": 0}, "between"),
        ({"name": "a", "baseUrl": "http://x", "model": "m", "style": "loud"}, "style"),
    ]:
        with pytest.raises(ConfigError, match=fragment):
            parse_backend(bad)
    settings, problems = parse_settings(
        {
            "editFidelity": {
                "backends": [{"name": "a", "baseUrl": "http://x", "model": "m"}],
                "thresholds": {"debounceMs": 10, "hunkTokensError": "x"},
            }
        }
    )
    assert [b.name for b in settings.backends] == ["a"] and settings.thresholds.debounce_ms == 10
    assert any("hunkTokensError" in p for p in problems)


async def test_retries_backoff_and_limits():
    scripts = {
        "flaky": [Step(status=503), Step(status=502), Step(content=fenced(CODE))],
        "limited": [Step(status=429, headers={"retry-after": "0.3"}), Step(content=fenced(CODE))],
        "forever429": [Step(status=429, headers={"retry-after": "120"})],
        "auth": [Step(status=401)],
        "slow": [Step(content=fenced(CODE), delay_s=0.2)],
    }
    with ScriptedServer(scripts) as srv:

        def backend(model, **kw):
            return OpenAIBackend(
                parse_backend({"name": model, "baseUrl": srv.base_url, "model": model, **kw}), environ={}
            )

        msgs = build_messages("fix", CODE)
        c = await backend("flaky", maxRetries=2).complete(msgs)
        assert c.code == CODE and c.attempts == 3
        t0 = time.perf_counter()
        c = await backend("limited").complete(msgs)
        assert c.attempts == 2 and time.perf_counter() - t0 >= 0.3
        with pytest.raises(BackendError, match="retry after 120 s") as info:
            await backend("forever429").complete(msgs)
        assert info.value.kind == "rate_limited" and len(srv.requests_for("forever429")) == 1
        with pytest.raises(BackendError, match="authentication failed") as info:
            await backend("auth").complete(msgs)
        assert len(srv.requests_for("auth")) == 1  # 401 is not retried
        slow = backend("slow", maxConcurrency=2)
        await asyncio.gather(*(slow.complete(msgs) for _ in range(6)))
        assert slow.max_in_flight == 2
        # no key in the environment for a backend that names one
        with pytest.raises(BackendError, match="MY_KEY is not set"):
            await backend("slow", apiKeyEnv="MY_KEY").complete(msgs)


async def test_cancellation_closes_the_connection():
    with ScriptedServer({"hang": [Step(hang=True)]}) as srv:
        be = OpenAIBackend(parse_backend({"name": "h", "baseUrl": srv.base_url, "model": "hang"}))
        task = asyncio.create_task(be.complete(build_messages("x", CODE)))
        while not srv.active:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(100):
            if srv.disconnects:
                break
            await asyncio.sleep(0.02)
        assert srv.disconnects == ["hang"]
        await be.aclose()


def test_selection_assembly():
    text = "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n"
    # the answer lost the method's indentation: restored
    out = assemble_selection(text, 1, 2, "def f(self):\n    return 10\n")
    assert out == text.replace("return 1\n", "return 10\n")
    # the answer is the whole file: taken as such
    whole = text.replace("return 2", "return 20")
    assert assemble_selection(text + "\n" * 6, 4, 5, whole + "\n" * 6) == whole + "\n" * 6
    # a selection ending at column 0 of the next line does not include it
    assert whole_lines(text, (1, 0), (3, 0)) == (1, 2)
    # last line without newline stays without
    assert assemble_selection("a = 1\nb = 2", 1, 1, "b = 3\n") == "a = 1\nb = 3"


def test_revert_edit_and_change_size():
    import msgspec

    from server.fidelity import TextEdit, apply_text_edits, measure

    before = "a = 1\nb = 2\nc = 3\n"
    after = "a = 1\nbee = 2\nc = 3\nd = 4"
    report = measure(before, after)
    geometry = UnitGeometry(before, after, report)
    edits = [msgspec.convert(e, TextEdit) for e in geometry.revert(range(len(report.hunks)))]
    assert apply_text_edits(after, edits) == before
    # one unit at a time: only its own text comes back
    for i in range(len(report.hunks)):
        one = [msgspec.convert(e, TextEdit) for e in geometry.revert([i])]
        rest = [j for j in range(len(report.hunks)) if j != i]
        assert apply_text_edits(after, one) == apply_text_edits(before, report.unit_edits(rest))
    from lsprotocol import types

    typing = [
        types.TextDocumentContentChangePartial(range=types.Range(types.Position(1, 1), types.Position(1, 1)), text="x")
    ]
    assert changed_lines(before, "a = 1\nbx = 2\nc = 3\n", typing) == 0
    paste = [
        types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(1, 0), types.Position(1, 0)), text="x\n" * 12
        )
    ]
    assert changed_lines(before, "a = 1\n" + "x\n" * 12 + "b = 2\nc = 3\n", paste) == 13
    # the whole document: the lines that differ (b changed, d added; c kept)
    assert changed_lines(before, after, [types.TextDocumentContentChangeWholeDocument(text=after)]) == 2
    # several small changes count as the document they leave, not one by one (0 lines each)
    in_line = [
        types.TextDocumentContentChangePartial(range=types.Range(types.Position(i, 0), types.Position(i, 1)), text="z")
        for i in (2, 1, 0)
    ]
    assert changed_lines(before, "z = 1\nz = 2\nz = 3\n", in_line) == 3


def test_instruction_words():
    assert "rename" in allowed_kinds("Rename the variable x to count")
    assert "defensive" in allowed_kinds("add input validation")
    assert allowed_kinds("fix the off-by-one") & {"rename", "defensive", "formatting_only"} == set()
    # words that appear in ordinary bug-fix requests do not excuse validation, renames or new imports
    for instruction in (
        "Fix the off-by-one error",
        "check why the loop stops early",
        "return None on a miss",
        "use a set here",
        "make the name lookup case-insensitive",
    ):
        assert allowed_kinds(instruction) & {"defensive", "rename", "import_change"} == set(), instruction
    assert "defensive" in allowed_kinds("handle invalid input gracefully")


def test_unfenced_code_inside_prose():
    answer = "Here is the corrected function:\n\ndef f(x):\n    return x + 1\n\nThis adds one to x."
    assert extract_code(answer) == CODE


async def test_hostile_backends():
    import json as _json

    huge = "```python\n" + "x = 1\n" * 800_000 + "```"
    scripts = {
        "drip": [Step(content=fenced(CODE), drip_s=0.05)],
        "huge": [Step(content=huge, usage=None)],
        "null": [
            Step(
                body=_json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 1,
                        "model": "m",
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": None}}
                        ],
                    }
                ).encode()
            )
        ],
        "nochoices": [
            Step(body=b'{"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}')
        ],
        "binary": [Step(body=bytes(range(256)) * 4)],
        "html": [
            Step(status=502, body=b"<html><body>Bad gateway</body></html>", headers={"content-type": "text/html"})
        ],
        "textplain": [Step(body=b"just words", headers={"content-type": "text/plain"})],
    }
    with ScriptedServer(scripts) as srv:

        def backend(model, **kw):
            return OpenAIBackend(
                parse_backend({"name": model, "baseUrl": srv.base_url, "model": model, "maxRetries": 0, **kw}),
                environ={},
            )

        msgs = build_messages("fix", CODE)
        importlib.import_module("openai")  # the SDK's import (seconds on a loaded machine) before the clock
        t0 = time.perf_counter()
        # each byte arrives in time (no read timeout fires), the whole would take 0.05 s a byte, over
        # 10 s on any machine: only the deadline over the whole request ends it
        with pytest.raises(BackendError, match="did not answer within 0.5 s") as info:
            await backend("drip", timeoutS=0.5).complete(msgs)
        assert time.perf_counter() - t0 < 5  # a safety net only: 10x the deadline
        assert info.value.kind == "timeout" and info.value.attempts == 1 and len(srv.requests_for("drip")) == 1
        # and the client hung up: the scripted server stops dripping once its writes fail, long before
        # the body's 17 s are through (a client that only stopped waiting would leave it dripping)
        while srv.active and time.perf_counter() - t0 < 10:
            await asyncio.sleep(0.02)
        assert srv.active == 0
        expectations = {
            "huge": "too_large",
            "null": "empty",
            "nochoices": "empty",
            "binary": "bad_response",
            "html": "http",
            "textplain": "bad_response",
        }
        for model, kind in expectations.items():
            with pytest.raises(BackendError) as info:
                await backend(model).complete(msgs)
            assert info.value.kind == kind, (model, info.value.kind, info.value.message)
            assert len(info.value.message) < 400


def test_plain_http_key_warning():
    from server.backends import parse_backends

    backends, problems = parse_backends(
        [
            {"name": "remote", "baseUrl": "http://models.example.com/v1", "model": "m", "apiKeyEnv": "K"},
            {"name": "local", "baseUrl": "http://127.0.0.1:8000/v1", "model": "m", "apiKeyEnv": "K"},
            {"name": "tls", "baseUrl": "https://api.example.com/v1", "model": "m", "apiKeyEnv": "K"},
        ]
    )
    assert [b.name for b in backends] == ["remote", "local", "tls"]  # a warning, not a refusal
    assert len(problems) == 1 and "'remote' sends its API key over plain http" in problems[0]


def test_an_applied_edit_moves_the_observation_baseline():
    """After an apply, the observed change is measured against its baseline with the applied edits on it:
    the accepted change is not observed, the observed rename still is; an edit inside an observed unit
    has no such baseline."""
    from server.fidelity import measure
    from server.lsp.observe import _rebased
    from server.lsp.state import Observation
    from server.lsp.unit_edits import UnitGeometry

    before = "def f(a):\n    return a + 1\n\n\ndef g(x):\n    return x * 2\n"
    observed = before.replace("(a)", "(alpha)").replace("a + 1", "alpha + 1")
    report = measure(before, observed)
    obs = Observation(
        uri="u",
        version=1,
        baseline=before,
        current=observed,
        source="observed",
        report=report,
        flagged=[],
        views=[],
        geometry=UnitGeometry(before, observed, report),
    )
    accepted = observed.replace("x * 2", "x * 3")
    moved = _rebased(obs, observed, measure(observed, accepted).edits)
    assert moved == before.replace("x * 2", "x * 3")
    assert [h.kinds for h in measure(moved, accepted).hunks] == [["rename", "signature_change"]]
    inside = observed.replace("(alpha)", "(beta)")
    assert _rebased(obs, observed, measure(observed, inside).edits) is None
