"""How long and how big a reply may be: the idle timer (which keep-alives do not reset), the
reply deadline, the retry budget and the size cap, against the fake server streaming exactly
the stalls real servers produce. Limits are a fraction of a second here; nothing asserts how
long anything took, only which limit the error names and how many attempts were made. Where
the message depends on what arrived before a limit ran out, the limit is a second, far longer
than the fake server needs even on a loaded machine."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.llm_wires import KEY, Sleeps, collect, make_request, texts
from xum.llm.client import LLMClient, open_client
from xum.llm.endpoint import Endpoint
from xum.llm.errors import LLMError
from xum.llm.limits import ReplyLimits, limits_from_config
from xum.llm.retry import RetryPolicy
from xum.llm.types import Finish, Wire
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(60)
WIRES: list[Wire] = ["anthropic", "openai-responses", "openai-chat"]


def limited_client(
    server: FakeLLM, wire: Wire, *, retries: int = 0, budget_s: float = 600.0, **limits: Any
) -> LLMClient:
    endpoint = Endpoint(
        provider="anthropic" if wire == "anthropic" else "openai",
        wire=wire,
        base_url=server.base_url(),
        api_key=KEY,
        auth_style="x-api-key" if wire == "anthropic" else "bearer",
        limits=ReplyLimits(**limits),
    )
    policy = RetryPolicy(
        max_retries=retries, budget_s=budget_s, base_delay_s=0.0, jitter=0.0, sleep=Sleeps()
    )
    return open_client(endpoint, retry=policy)


async def failure(client: LLMClient, wire: Wire, *, stream: bool = True) -> LLMError:
    try:
        with pytest.raises(LLMError) as info:
            await collect(client, make_request(wire), stream=stream)
    finally:
        await client.aclose()
    return info.value


@pytest.mark.parametrize("wire", WIRES)
async def test_keepalive_comments_do_not_keep_a_stalled_reply_alive(
    fake_llm: FakeLLM, wire: Wire
) -> None:
    # Three events, then an SSE comment every 20 ms for ever: the idle timer must still fire.
    stall = fakellm.Stall(after_event=3, keepalive_s=0.02)
    fake_llm.script(fakellm.text("never finished", stall=stall))
    err = await failure(limited_client(fake_llm, wire, idle_s=1.0), wire)
    assert err.kind == "timeout" and err.retryable
    assert "only keep-alives for 1 s" in err.message
    assert "modelRequests.idleTimeoutSeconds" in (err.hint or "")


async def test_anthropic_pings_are_keepalives_too(fake_llm: FakeLLM) -> None:
    stall = fakellm.Stall(after_event=2, keepalive_s=0.02, keepalive="ping")
    fake_llm.script(fakellm.text("never finished", stall=stall))
    err = await failure(limited_client(fake_llm, "anthropic", idle_s=1.0), "anthropic")
    assert err.kind == "timeout" and "only keep-alives" in err.message


async def test_a_silent_stall_names_the_idle_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("never finished", stall=fakellm.Stall(after_event=3)))
    err = await failure(limited_client(fake_llm, "openai-chat", idle_s=1.0), "openai-chat")
    assert err.kind == "timeout"
    assert "sent nothing for 1 s in the middle of the reply" in err.message


async def test_no_headers_within_the_idle_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("late", first_byte_delay=5))
    err = await failure(limited_client(fake_llm, "openai-chat", idle_s=0.2), "openai-chat")
    assert err.kind == "timeout" and "sent no reply within 0.2 s" in err.message


async def test_a_reply_that_keeps_streaming_meets_its_deadline(fake_llm: FakeLLM) -> None:
    # Real content every 20 ms (progress, so the idle timer never fires), 200 events in all:
    # the per-reply deadline ends it.
    fake_llm.script(fakellm.text("x" * 200, chunk_size=1, delay=0.02))
    client = limited_client(fake_llm, "anthropic", idle_s=30, reply_s=0.4)
    err = await failure(client, "anthropic")
    assert err.kind == "timeout"
    assert "took longer than 0.4 s, the limit for one reply" in err.message
    assert "modelRequests.replyTimeoutSeconds" in (err.hint or "")


async def test_a_whole_reply_may_take_longer_than_the_idle_timeout(fake_llm: FakeLLM) -> None:
    # Asked for whole, a reply sends its headers when it is done: only the deadline applies.
    fake_llm.script(fakellm.text("worth the wait", stall=fakellm.Stall(seconds=0.4)))
    client = limited_client(fake_llm, "openai-chat", idle_s=0.1, reply_s=30)
    try:
        events = await collect(client, make_request("openai-chat"), stream=False)
    finally:
        await client.aclose()
    assert isinstance(events[-1], Finish) and texts(events) == "worth the wait"


async def test_the_retry_budget_ends_a_run_of_stalled_attempts(fake_llm: FakeLLM) -> None:
    stall = fakellm.Stall(after_event=2, keepalive_s=0.02)
    fake_llm.set_default(fakellm.text("never finished", stall=stall))
    client = limited_client(fake_llm, "openai-chat", retries=50, budget_s=2.0, idle_s=0.25)
    err = await failure(client, "openai-chat")
    assert err.kind == "timeout"
    assert "retry budget of 2 s (modelRequests.retryBudgetSeconds) is spent" in err.message
    assert 1 < err.attempts < 51 and len(fake_llm.requests) == err.attempts


async def test_a_reply_over_the_size_cap_is_refused_and_not_retried(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("y" * 20_000, chunk_size=500))
    client = limited_client(fake_llm, "openai-responses", retries=3, max_reply_bytes=8_000)
    err = await failure(client, "openai-responses")
    assert err.kind == "invalid_response" and not err.retryable
    assert "larger than" in err.message and "modelRequests.maxReplyMiB" in (err.hint or "")
    assert len(fake_llm.requests) == 1


async def test_an_unreachable_server_does_not_promise_more_retries(fake_llm: FakeLLM) -> None:
    # Item 11 of the field report: the final error said it gave up, then that it would retry.
    port = fake_llm.port
    fake_llm.stop()
    endpoint = Endpoint(
        provider="ollama", wire="openai-chat", base_url=f"http://127.0.0.1:{port}/v1"
    )
    client = open_client(endpoint, retry=RetryPolicy(max_retries=2, jitter=0.0, sleep=Sleeps()))
    err = await failure(client, "openai-chat")
    assert err.kind == "network" and "gave up after 3 attempts" in err.message
    assert "retried" not in (err.hint or "") and "baseUrl" in (err.hint or "")


def test_limits_from_config() -> None:
    limits = limits_from_config(
        {"idleTimeoutSeconds": 90, "replyTimeoutSeconds": 600.5, "maxRetries": 0, "maxReplyMiB": 8}
    )
    assert (limits.idle_s, limits.reply_s, limits.max_retries) == (90, 600.5, 0)
    assert limits.max_reply_bytes == 8 * 1024 * 1024
    assert limits_from_config(None) == ReplyLimits()
    for bad, says in [
        ({"idleTimeoutSeconds": 0}, "idleTimeoutSeconds"),
        ({"maxRetries": 1.5}, "a whole number"),
        ({"maxRetries": True}, "a whole number"),
        ({"retryBudgetSeconds": -1}, "0 or more"),
        ({"idleTimeout": 5}, "unknown key"),
        ([1], "must be an object"),
    ]:
        with pytest.raises(ValueError, match=says):
            limits_from_config(bad)
