"""Failure modes: HTTP errors, cut connections, malformed frames, in-band stream errors, and
byte-for-byte replay of recorded provider streams."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fixtures import ANTHROPIC_SSE
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

# One client per module: creating an httpx.Client costs ~20 ms (its TLS context).
HTTP = httpx.Client(timeout=10)

ANTHROPIC: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "hi"}],
}
RESPONSES: dict[str, Any] = {"model": "gpt-5", "input": "hi"}
CHAT: dict[str, Any] = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}


FIXTURES = ANTHROPIC_SSE
FIXTURE_FILES = sorted(FIXTURES.glob("*.txt"))
assert FIXTURE_FILES, f"no recorded streams in {FIXTURES}"


def stream_bytes(
    server: FakeLLM, path: str, body: dict[str, Any]
) -> tuple[bytes, Exception | None]:
    """The body bytes the client received, and the error that ended the read, if any."""
    received = bytearray()
    with HTTP.stream("POST", server.base_url() + path, json={**body, "stream": True}) as r:
        try:
            for piece in r.iter_raw():
                received += piece
        except httpx.TransportError as exc:
            return bytes(received), exc
    return bytes(received), None


# HTTP errors ---------------------------------------------------------------------------------


def test_rate_limit_with_retry_after_in_each_wire_shape(fake_llm: FakeLLM) -> None:
    fake_llm.script(*[fakellm.rate_limited(retry_after=2)] * 2)
    r = HTTP.post(fake_llm.base_url() + "/messages", json=ANTHROPIC)
    assert r.status_code == 429
    assert r.headers["retry-after"] == "2"
    assert r.headers["request-id"].startswith("req_")
    body = r.json()
    assert body["type"] == "error" and body["error"]["type"] == "rate_limit_error"
    r = HTTP.post(fake_llm.base_url() + "/chat/completions", json=CHAT)
    assert r.status_code == 429 and r.headers["retry-after"] == "2"
    assert r.json()["error"]["code"] == "rate_limit_exceeded"


def test_overloaded_529(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.overloaded())
    r = HTTP.post(fake_llm.base_url() + "/messages", json={**ANTHROPIC, "stream": True})
    assert r.status_code == 529
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_error_with_text_body_and_custom_headers(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.error(500, "upstream exploded", headers={"x-should-retry": "true"}))
    r = HTTP.post(fake_llm.base_url() + "/responses", json=RESPONSES)
    assert r.status_code == 500
    assert r.text == "upstream exploded"
    assert r.headers["content-type"].startswith("text/plain")
    assert r.headers["x-should-retry"] == "true"
    assert fake_llm.requests[0].status == 500
    assert fake_llm.requests[0].cache is None  # an error processes no prompt


# Cut connections -----------------------------------------------------------------------------


def test_disconnect_mid_stream_truncates_exactly(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("a long enough answer " * 5, disconnect=fakellm.Disconnect(150)))
    received, err = stream_bytes(fake_llm, "/messages", ANTHROPIC)
    assert isinstance(err, httpx.RemoteProtocolError)  # incomplete chunked read
    assert len(received) == 150
    assert received.startswith(b"event: message_start\ndata: {")
    assert b"message_stop" not in received
    # The connection is not reused: the next request opens a fresh one and succeeds.
    fake_llm.script(fakellm.text("ok"))
    assert HTTP.post(fake_llm.base_url() + "/messages", json=ANTHROPIC).status_code == 200


def test_disconnect_during_replay_sends_the_exact_prefix(fake_llm: FakeLLM) -> None:
    assert FIXTURES is not None
    path = FIXTURES / "tool_use_response.txt"
    fake_llm.script(fakellm.replay(path, disconnect=fakellm.Disconnect(after_bytes=777)))
    received, err = stream_bytes(fake_llm, "/messages", ANTHROPIC)
    assert err is not None
    assert received == path.read_bytes()[:777]


def test_disconnect_non_streaming_body(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("hello", disconnect=fakellm.Disconnect(after_bytes=10)))
    with pytest.raises(httpx.RemoteProtocolError):
        HTTP.post(fake_llm.base_url() + "/chat/completions", json=CHAT)


def test_disconnect_before_headers(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("x", disconnect=fakellm.Disconnect(before_headers=True)))
    with pytest.raises(httpx.RemoteProtocolError, match="without sending"):
        HTTP.post(fake_llm.base_url() + "/messages", json=ANTHROPIC)
    assert fake_llm.requests[0].status == 0


def test_disconnect_with_reset(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("x" * 200, disconnect=fakellm.Disconnect(100, reset=True)))
    received, err = stream_bytes(fake_llm, "/messages", ANTHROPIC)
    # A RST reads as "connection reset", unlike the FIN of a plain disconnect.
    assert isinstance(err, httpx.ReadError) and "reset" in str(err).lower()
    assert len(received) <= 100


# Malformed frames and in-band errors ---------------------------------------------------------


def frames(raw: bytes) -> list[bytes]:
    return [f for f in raw.split(b"\n\n") if f]


def test_malformed_frame_after_event_k(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("hello", malformed=fakellm.Malformed(after_event=2)))
    received, err = stream_bytes(fake_llm, "/messages", ANTHROPIC)
    assert err is None
    got = frames(received)
    assert got[2] == b"data: {not json"
    assert got[1].startswith(b"event: content_block_start")
    with pytest.raises(json.JSONDecodeError):
        json.loads(got[2].removeprefix(b"data: "))
    assert got[-1].startswith(b"event: message_stop")  # the rest of the stream still follows


def test_anthropic_stream_error_event(fake_llm: FakeLLM) -> None:
    se = fakellm.StreamError(after_event=3, message="Overloaded")
    fake_llm.script(fakellm.text("hello world", chunk_size=2, stream_error=se))
    received, err = stream_bytes(fake_llm, "/messages", ANTHROPIC)
    assert err is None
    got = frames(received)
    assert len(got) == 4
    assert got[-1] == (
        b'event: error\ndata: {"type":"error","error":'
        b'{"type":"overloaded_error","message":"Overloaded"}}'
    )


def test_responses_failed_and_error_events(fake_llm: FakeLLM) -> None:
    fake_llm.script(
        fakellm.text("hello", stream_error=fakellm.StreamError(message="boom")),
        fakellm.text("hello", stream_error=fakellm.StreamError(2, "bad", "x", "error")),
    )
    received, _ = stream_bytes(fake_llm, "/responses", RESPONSES)
    got = frames(received)
    assert got[-1].startswith(b"event: response.failed\n")
    failed = json.loads(got[-1].split(b"data: ", 1)[1])
    assert failed["sequence_number"] == len(got) - 1
    assert failed["response"]["status"] == "failed"
    assert failed["response"]["error"] == {"code": "server_error", "message": "boom"}
    first = json.loads(got[0].split(b"data: ", 1)[1])
    assert failed["response"]["id"] == first["response"]["id"]
    assert b"response.completed" not in received

    received, _ = stream_bytes(fake_llm, "/responses", RESPONSES)
    got = frames(received)
    assert len(got) == 3
    error = json.loads(got[2].split(b"data: ", 1)[1])
    assert error == {
        "type": "error",
        "sequence_number": 2,
        "code": "x",
        "message": "bad",
        "param": None,
    }


def test_chat_stream_error_chunk_and_no_done(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("hello", stream_error=fakellm.StreamError(message="nope")))
    received, _ = stream_bytes(fake_llm, "/chat/completions", CHAT)
    got = frames(received)
    assert b"[DONE]" not in received
    last = json.loads(got[-1].removeprefix(b"data: "))
    assert last["error"]["message"] == "nope"
    assert last["error"]["code"] == "server_error"


# Replay --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_replay_is_byte_for_byte(fake_llm: FakeLLM, path: Path) -> None:
    fake_llm.script(fakellm.replay(path, delay=0.001))
    r = HTTP.post(fake_llm.base_url() + "/messages", json={**ANTHROPIC, "stream": True})
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/event-stream"
    assert r.content == path.read_bytes()


def test_replay_bytes_with_malformed_injection(fake_llm: FakeLLM) -> None:
    data = b"event: a\ndata: {}\n\nevent: b\ndata: {}\n\ntrailing"
    reply = fakellm.Reply(
        replay=fakellm.Replay(data), malformed=fakellm.Malformed(1, "data: x\n\n")
    )
    fake_llm.script(reply)
    received, _ = stream_bytes(fake_llm, "/messages", ANTHROPIC)
    assert received == b"event: a\ndata: {}\n\ndata: x\n\nevent: b\ndata: {}\n\ntrailing"


def test_per_chunk_delay_is_applied(fake_llm: FakeLLM) -> None:
    # A paced stream: each event is its own write after its delay, so the first event reaches the
    # client while the server still has the rest to send (without a delay the reply is one write).
    fake_llm.script(
        fakellm.text("abcdef", chunk_size=1, delay=0.5),
        fakellm.text("abcdef", chunk_size=1, delay=0.001),
    )
    with HTTP.stream(
        "POST", fake_llm.base_url() + "/chat/completions", json={**CHAT, "stream": True}
    ) as r:
        first = next(r.iter_raw())
        assert len(frames(first)) == 1
        assert fake_llm.requests[-1].finished is None  # the other eight are still to come
    # 1 role chunk + 6 content chunks + finish + [DONE], each one sent.
    received, _ = stream_bytes(fake_llm, "/chat/completions", CHAT)
    assert len(frames(received)) == 9


# Stalls --------------------------------------------------------------------------------------


def test_stall_sends_keepalives_then_the_rest(fake_llm: FakeLLM) -> None:
    stall = fakellm.Stall(after_event=2, keepalive_s=0.01, seconds=0.5)
    fake_llm.script(fakellm.text("abc", chunk_size=1, stall=stall))
    received, err = stream_bytes(fake_llm, "/chat/completions", CHAT)
    assert err is None
    parts = frames(received)
    assert parts[2] == b": keep-alive"  # right after the first two events
    events = [p for p in parts if p != b": keep-alive"]
    assert events[-1] == b"data: [DONE]"
    body = b"".join(events)
    assert all(b'"content":"%s"' % c in body for c in (b"a", b"b", b"c"))  # nothing lost


def test_a_silent_stall_holds_until_the_client_hangs_up(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("held", stall=fakellm.Stall(after_event=1)))
    url, body = fake_llm.base_url() + "/messages", {**ANTHROPIC, "stream": True}
    with (
        httpx.Client(timeout=httpx.Timeout(10, read=0.3)) as client,
        pytest.raises(httpx.ReadTimeout),
        client.stream("POST", url, json=body) as r,
    ):
        for _ in r.iter_raw():
            pass
    # The server let go of that connection and answers the next request normally.
    fake_llm.script(fakellm.text("ok"))
    assert HTTP.post(fake_llm.base_url() + "/messages", json=ANTHROPIC).status_code == 200


def test_stall_pings_and_json_round_trip() -> None:
    stall = fakellm.Stall(after_event=3, keepalive_s=5, keepalive="ping", seconds=1.5)
    assert stall.keepalive_frame().startswith(b"event: ping\n")
    reply = fakellm.text("x", stall=stall)
    assert fakellm.reply_from_json(json.loads(json.dumps(fakellm.reply_to_json(reply)))) == reply
    with pytest.raises(fakellm.ScriptError, match="not be negative"):
        fakellm.text("x", stall=fakellm.Stall(after_event=-1))
