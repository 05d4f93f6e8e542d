"""The SSE parser on its own: framing, chunk boundaries, line endings, end of stream."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fixtures import ANTHROPIC_SSE
from xum.llm import sse
from xum.llm.errors import LLMError
from xum.llm.sse import SSEParser, parse_sse_bytes

FIXTURES = ANTHROPIC_SSE


def feed_in_pieces(raw: bytes, cuts: list[int]) -> list[tuple[str, bytes]]:
    parser = SSEParser()
    out: list[tuple[str, bytes]] = []
    start = 0
    for cut in sorted(set(cuts)):
        out += parser.feed(raw[start:cut])
        start = cut
    out += parser.feed(raw[start:])
    return out + parser.finish()


def test_named_events_and_data() -> None:
    raw = b'event: a\ndata: {"x":1}\n\nevent: b\ndata: 2\n\n'
    assert parse_sse_bytes(raw) == [("a", b'{"x":1}'), ("b", b"2")]


def test_comments_and_unknown_fields_are_ignored() -> None:
    raw = b": keep-alive\nid: 7\nretry: 100\ndata: x\n\n: OPENROUTER PROCESSING\n\n"
    assert parse_sse_bytes(raw) == [("", b"x")]


def test_multiline_data_is_joined_with_newlines() -> None:
    assert parse_sse_bytes(b"data: a\ndata: b\n\n") == [("", b"a\nb")]


def test_only_one_leading_space_is_stripped() -> None:
    assert parse_sse_bytes(b"data:x\n\ndata:  y\n\n") == [("", b"x"), ("", b" y")]


def test_frame_without_data_is_not_dispatched() -> None:
    assert parse_sse_bytes(b"event: lonely\n\ndata: z\n\n") == [("", b"z")]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_line_endings(newline: bytes) -> None:
    raw = b"event: e" + newline + b"data: 1" + newline + newline + b"data: 2" + newline + newline
    assert parse_sse_bytes(raw) == [("e", b"1"), ("", b"2")]


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    parser = SSEParser()
    out = parser.feed(b"data: a\r")
    out += parser.feed(b"\ndata: b\r\n\r\n")
    assert out == [("", b"a\nb")]


def test_last_frame_without_blank_line_is_flushed_at_eof() -> None:
    # Real recorded streams end like this; a strict parser would lose message_stop.
    raw = b'event: message_stop\ndata: {"type":"message_stop"}'
    assert parse_sse_bytes(raw) == [("message_stop", b'{"type":"message_stop"}')]
    assert parse_sse_bytes(raw + b"\n") == [("message_stop", b'{"type":"message_stop"}')]


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.txt")), ids=lambda p: p.name)
def test_every_split_of_a_recorded_stream_parses_the_same(path: Path) -> None:
    raw = path.read_bytes()
    whole = parse_sse_bytes(raw)
    assert whole and all(name for name, _ in whole)
    for step in (1, 7, 64):
        assert feed_in_pieces(raw, list(range(step, len(raw), step))) == whole


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_arbitrary_chunking_is_invisible(cuts: list[int]) -> None:
    raw = (
        b'event: message_start\r\ndata: {"a": "\xc3\xa9"}\r\n\r\n'
        b": ping\n\nevent: x\ndata: 1\ndata: 2\n\n"
        b'event: message_stop\ndata: {"type":"message_stop"}'
    )
    assert feed_in_pieces(raw, [c % (len(raw) + 1) for c in cuts]) == parse_sse_bytes(raw)


def test_oversized_frame_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sse, "MAX_FRAME_BYTES", 100)
    parser = SSEParser()
    with pytest.raises(LLMError) as info:
        parser.feed(b"data: " + b"x" * 200 + b"\n")
    assert info.value.kind == "invalid_response"
    with pytest.raises(LLMError):
        SSEParser().feed(b"data: " + b"y" * 200)  # an unfinished line that keeps growing


@pytest.mark.timeout(30)
def test_a_long_line_in_small_chunks_is_parsed_once() -> None:
    # Field report H: re-joining the unfinished line on every chunk made a 32 MB single-line
    # frame cost seconds (quadratic). 16 MiB in 2 KiB pieces is 8192 feeds: trivial when each
    # piece is looked at once, about 64 GB of copying (minutes) when the buffer is rebuilt each
    # time. The timeout is a hang guard with a wide margin, not a speed assertion.
    payload = b"x" * (16 * 1024 * 1024)
    raw = b'event: big\ndata: {"v":"' + payload + b'"}\n\ndata: after\n\n'
    parser = SSEParser()
    out: list[tuple[str, bytes]] = []
    for i in range(0, len(raw), 2048):
        out += parser.feed(raw[i : i + 2048])
    assert [name for name, _ in out] == ["big", ""]
    assert out[0][1] == b'{"v":"' + payload + b'"}' and out[1][1] == b"after"


def test_a_comment_still_arriving_is_not_a_frame_in_progress() -> None:
    parser = SSEParser()
    assert parser.feed(b": keep-al") == [] and parser.unfinished == 0
    assert parser.feed(b"ive\ndata: par") == [] and parser.unfinished == len(b"data: par")
