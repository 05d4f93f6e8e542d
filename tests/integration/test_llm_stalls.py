"""A stalled or trickling reply ends within the idle timeout, a slow healthy one does not, and
the client says a reply is stalling before it gives up (field report S7).

Against the fake server on all three wires, with limits of a second or two: the fake server's
own pauses are sleeps of fixed length, so a stall advisory is certain (the silence is longer
than a quarter of the limit) and a healthy slow reply keeps a wide margin under the limit.
Nothing asserts how long anything took."""

from __future__ import annotations

from typing import Any

import pytest

from xum.llm.client import LLMClient, open_client
from xum.llm.endpoint import Endpoint
from xum.llm.errors import LLMError
from xum.llm.limits import ReplyLimits
from xum.llm.retry import RetryPolicy
from xum.llm.types import (
    Finish,
    LLMRequest,
    Retrying,
    Stalled,
    StreamEvent,
    TextDelta,
    Wire,
    text_message,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(90)
WIRES: list[Wire] = ["anthropic", "openai-responses", "openai-chat"]


async def _no_sleep(_: float) -> None:
    return None


def client_for(server: FakeLLM, wire: Wire, *, retries: int = 0, **limits: Any) -> LLMClient:
    endpoint = Endpoint(
        provider="anthropic" if wire == "anthropic" else "openai",
        wire=wire,
        base_url=server.base_url(),
        api_key="sk-test-stalls",
        auth_style="x-api-key" if wire == "anthropic" else "bearer",
        limits=ReplyLimits(**limits),
    )
    policy = RetryPolicy(max_retries=retries, base_delay_s=0.0, jitter=0.0, sleep=_no_sleep)
    return open_client(endpoint, retry=policy)


def request(wire: Wire) -> LLMRequest:
    model = "claude-test" if wire == "anthropic" else "gpt-test"
    return LLMRequest(model=model, system="test", messages=[text_message("user", "hi")])


async def run(client: LLMClient, wire: Wire) -> tuple[list[StreamEvent], LLMError | None]:
    """The events of one request, and the error that ended it (None when it finished)."""
    events: list[StreamEvent] = []
    try:
        async for event in client.stream(request(wire)):
            events.append(event)
    except LLMError as err:
        return events, err
    finally:
        await client.aclose()
    return events, None


@pytest.mark.parametrize("wire", WIRES)
async def test_a_byte_trickle_without_whole_events_ends_with_the_stall_error(
    fake_llm: FakeLLM, wire: Wire
) -> None:
    # A valid stream at one byte every 20 ms never completes its first event (hundreds of
    # bytes) within the 1 s idle limit; before the fix each byte reset the idle timer.
    fake_llm.script(fakellm.text("trickled", byte_delay=0.02))
    events, err = await run(client_for(fake_llm, wire, idle_s=1.0), wire)
    assert err is not None and err.kind == "timeout" and err.retryable
    assert "not one whole event (the stream trickles)" in err.message
    assert "before the reply began" in err.message
    assert "modelRequests.idleTimeoutSeconds" in (err.hint or "")
    assert any(isinstance(e, Stalled) for e in events)


@pytest.mark.parametrize("wire", WIRES)
async def test_a_slow_stream_of_whole_events_is_not_cut(fake_llm: FakeLLM, wire: Wire) -> None:
    # Every event 0.6 s after the last: the whole reply takes longer than the 2 s idle limit,
    # each gap is well inside it, and each gap passes the 0.5 s advisory mark.
    fake_llm.script(fakellm.text("slow but fine", chunk_size=0, delay=0.6))
    events, err = await run(client_for(fake_llm, wire, idle_s=2.0), wire)
    assert err is None
    assert isinstance(events[-1], Finish)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "slow but fine"
    stalls = [e for e in events if isinstance(e, Stalled)]
    assert stalls and all(s.idle_s == 2.0 and s.silent_s >= 0.5 for s in stalls)
    assert not any(isinstance(e, Retrying) for e in events)


@pytest.mark.parametrize("wire", WIRES)
async def test_the_advisory_comes_once_per_silence_and_the_stall_is_retried(
    fake_llm: FakeLLM, wire: Wire
) -> None:
    fake_llm.set_default(fakellm.text("never finished", stall=fakellm.Stall(after_event=0)))
    events, err = await run(client_for(fake_llm, wire, retries=1, idle_s=1.0), wire)
    assert err is not None and err.kind == "timeout" and err.attempts == 2
    assert len(fake_llm.requests) == 2
    kinds = [type(e).__name__ for e in events]
    # One advisory in each attempt's silence, the retry between them.
    assert kinds == ["Stalled", "Retrying", "Stalled"]
    first = events[0]
    assert isinstance(first, Stalled) and not first.began and first.idle_s == 1.0


@pytest.mark.parametrize("wire", WIRES)
async def test_the_error_says_where_the_reply_stalled(fake_llm: FakeLLM, wire: Wire) -> None:
    fake_llm.script(fakellm.text("late", first_byte_delay=5))
    _, before = await run(client_for(fake_llm, wire, idle_s=0.5), wire)
    assert before is not None
    assert "sent no reply within 0.5 s (not even the response headers)" in before.message

    fake_llm.script(fakellm.text("never", stall=fakellm.Stall(after_event=0)))
    events, after = await run(client_for(fake_llm, wire, idle_s=1.0), wire)
    assert after is not None
    assert "sent nothing for 1 s after its response headers, before the reply began" in (
        after.message
    )
    assert "middle" not in after.message

    fake_llm.script(fakellm.text("never finished", stall=fakellm.Stall(after_event=3)))
    events, mid = await run(client_for(fake_llm, wire, idle_s=1.0), wire)
    assert mid is not None
    # (Anthropic's third event is its `ping`: "only keep-alives" there, "nothing" elsewhere.)
    assert "for 1 s in the middle of the reply" in mid.message
    assert "before the reply began" not in mid.message and "trickles" not in mid.message
    stalled = [e for e in events if isinstance(e, Stalled)]
    assert len(stalled) == 1 and stalled[0].began


def test_the_default_idle_limit_ends_a_stall_within_two_minutes() -> None:
    limits = ReplyLimits()
    assert limits.idle_s <= 120.0
    assert limits.retry_budget_s >= limits.idle_s  # a stalled attempt can still be retried
