"""Provider faults at every stream position, through the whole engine, on every wire.

Each case scripts the fake LLM server with one faulty reply followed by good ones, then runs a
real turn of a real `AgentSession` (its log on disk, the production HTTP client, retries with no
delay, a short idle timeout so a stall is bounded). Whatever the fault, the turn must end (no
hang: every turn runs under a deadline), either in a retry success whose answer is the good
reply's, or in an error that says what went wrong; the session log must still make a history
a provider accepts (every call answered), and a follow-up turn must work.

The matrix (`CASES`) covers: 429 with retry-after, 5xx, 529 overloaded, a connection reset or a
closed connection at byte offsets across the whole stream (before the headers, in them, in each
event), malformed SSE JSON after each event, the wire's in-band error event after each event, a
stall that never ends (first byte, and mid-stream), an HTML page with status 200, and a server
that fails every attempt. docs/security.md publishes the figures (a test below checks them).

Budget: about 200 turns, each a few hundred milliseconds; well under a minute on two cores.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.engine import assert_valid_log, engine_session
from xum.engine.agent import AgentSession
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.limits import ReplyLimits
from xum.llm.retry import RetryPolicy
from xum.llm.types import Wire
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(300)

GOOD = "The good answer, after whatever went wrong before it."
FOLLOW_UP = "A follow-up answer."
WIRES: tuple[Wire, ...] = ("anthropic", "openai-responses", "openai-chat")
TURN_DEADLINE_S = 30.0
IDLE_S = 0.4  # the client's idle timeout in this suite: a stall ends in a timeout, then a retry
STALL_S = 5.0  # how long the fake server stalls (far beyond the idle timeout)
# Byte offsets into the faulty reply's body where the connection drops: before anything, in the
# first frame, and spread over the rest (the reply is a few KiB on every wire).
BYTE_OFFSETS = (0, 1, 7, 40, 120, 300, 600, 1000, 1600, 2400)
EVENT_POSITIONS = (0, 1, 2, 4, 8, 16)


def content(**options: Any) -> fakellm.Reply:
    """A reply with reasoning, text in small pieces and a tool-free end: a long stream."""
    return fakellm.reply(
        fakellm.Reasoning("thinking about it " * 4),
        "A partial answer that the fault may cut anywhere. " * 4,
        chunk_size=8,
        **options,
    )


@dataclass(frozen=True)
class Case:
    name: str
    fault: fakellm.Reply
    # "retry": the turn must end completed with the good answer; "error": it must end in an
    # error; "either": a fault both handlings are right for (a cut the client may resume).
    expect: str
    xfail: str | None = None


def cases() -> Iterator[Case]:
    yield Case("429-retry-after", fakellm.rate_limited(retry_after=0), "retry")
    yield Case("500", fakellm.error(500, message="internal"), "retry")
    yield Case("503", fakellm.error(503, message="unavailable"), "retry")
    yield Case("529-overloaded", fakellm.overloaded(), "retry")
    yield Case("400-bad-request", fakellm.error(400, message="no such parameter"), "error")
    yield Case("401-auth", fakellm.error(401, message="bad key"), "error")
    yield Case("reset-before-headers", fakellm.reply(disconnect=_cut(0, before=True)), "retry")
    for offset in BYTE_OFFSETS:
        yield Case(f"reset-at-{offset}", content(disconnect=_cut(offset, reset=True)), "retry")
        yield Case(f"closed-at-{offset}", content(disconnect=_cut(offset)), "retry")
    for position in EVENT_POSITIONS:
        yield Case(
            f"malformed-json-after-{position}",
            content(malformed=fakellm.Malformed(position)),
            "either",
        )
        yield Case(
            f"error-event-after-{position}",
            content(stream_error=fakellm.StreamError(after_event=position)),
            "either",
        )
    yield Case("stall-before-first-byte", content(first_byte_delay=STALL_S), "retry")
    yield Case("stall-mid-stream", content(delay=STALL_S), "retry")
    html = b"<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>"
    yield Case(
        "html-with-200",
        fakellm.Reply(replay=fakellm.Replay(data=html, content_type="text/html")),
        "either",
    )


def _cut(after: int, *, reset: bool = False, before: bool = False) -> fakellm.Disconnect:
    return fakellm.Disconnect(after_bytes=after, reset=reset, before_headers=before)


CASES = list(cases())
MATRIX = [(wire, case) for wire in WIRES for case in CASES]


def route_for(server: FakeLLM, wire: Wire) -> Any:
    provider = "anthropic:claude-sonnet-5-5" if wire == "anthropic" else "openai:gpt-6.1-sol"
    env = {
        "ANTHROPIC_API_KEY": "k",
        "ANTHROPIC_BASE_URL": server.url,
        "OPENAI_API_KEY": "k",
        "OPENAI_BASE_URL": server.url,
    }
    route = resolve_route(provider, env=env, config={})
    if wire == "openai-chat":
        route = dataclasses.replace(route, endpoint=dataclasses.replace(route.endpoint, wire=wire))
    return route


def session_for(server: FakeLLM, wire: Wire, workdir: Path, ws_id: str) -> AgentSession:
    route = route_for(server, wire)
    client = open_client(
        route.endpoint,
        retry=RetryPolicy(max_retries=2, base_delay_s=0.0, max_delay_s=0.0, jitter=0.0),
        limits=ReplyLimits(connect_s=5.0, idle_s=IDLE_S, write_s=5.0),
    )
    return engine_session(workdir, route, client, ws_id=ws_id, name="faults")


@pytest.mark.parametrize(("wire", "case"), MATRIX, ids=[f"{w}:{c.name}" for w, c in MATRIX])
async def test_a_fault_ends_in_a_retry_or_a_clear_error(
    fake_llm: FakeLLM, tmp_path: Path, wire: Wire, case: Case
) -> None:
    if case.xfail:
        pytest.xfail(case.xfail)
    fake_llm.script(
        case.fault, fakellm.text(GOOD), fakellm.text(FOLLOW_UP), fakellm.text(FOLLOW_UP)
    )
    # A loaded machine can make a retry more (a slow read taken for a stall): it gets an answer.
    fake_llm.set_default(fakellm.text(FOLLOW_UP))
    ws_id = "ws-" + re.sub(r"[^a-z0-9]", "", f"{wire}{case.name}")[:40]
    session = session_for(fake_llm, wire, tmp_path, ws_id)
    try:
        result = await asyncio.wait_for(session.run_turn("hello"), TURN_DEADLINE_S)
        if result.reason == "completed":
            assert case.expect in ("retry", "either"), f"{case.name} should have failed"
            assert result.text == GOOD
        else:
            assert case.expect in ("error", "either"), (
                f"{case.name}: {result.reason} {result.error}"
            )
            assert result.reason == "error"
            assert result.error and result.error.get("code") and result.error.get("message")
        assert_valid_log(ws_id)
        follow = await asyncio.wait_for(session.run_turn("again"), TURN_DEADLINE_S)
        assert follow.reason == "completed" and follow.text in (GOOD, FOLLOW_UP)
    finally:
        await session.aclose()
        await session.client.aclose()
    assert_valid_log(ws_id)


@pytest.mark.parametrize("wire", WIRES)
async def test_a_server_that_fails_every_attempt_ends_the_turn_with_its_error(
    fake_llm: FakeLLM, tmp_path: Path, wire: Wire
) -> None:
    fake_llm.script(*(fakellm.error(500, message="down") for _ in range(3)), fakellm.text(GOOD))
    session = session_for(fake_llm, wire, tmp_path, f"ws-down-{wire}")
    try:
        result = await asyncio.wait_for(session.run_turn("hello"), TURN_DEADLINE_S)
        assert result.reason == "error" and result.error is not None
        assert result.error.get("kind") == "server"
        assert len(fake_llm.requests) == 3  # the first attempt and both retries
        assert_valid_log(f"ws-down-{wire}")
    finally:
        await session.aclose()
        await session.client.aclose()


def test_docs_publish_this_matrix() -> None:
    """docs/security.md states how many provider faults this suite injects."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    match = re.search(r"\| Provider faults \| (\d+) \|", docs)
    assert match is not None, "docs/security.md has no provider-faults row"
    assert int(match.group(1)) == len(MATRIX) + len(WIRES)
