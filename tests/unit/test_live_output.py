"""Live tool output (xum.tools.live): coalescing, bounding, incremental UTF-8, closing.

The timer is the real loop timer; tests wait for it with bounded polls, never by sleeping a
fixed time, and assert counts and text, never durations.
"""

from __future__ import annotations

import asyncio
import time

from xum.tools.live import LIVE_CUT_MARKER, LiveOutputs

Emitted = list[tuple[str, str, str]]


def recorder() -> tuple[Emitted, LiveOutputs]:
    emitted: Emitted = []
    return emitted, LiveOutputs(lambda c, s, t: emitted.append((c, s, t)))


async def until(condition: object, what: str) -> None:
    deadline = time.monotonic() + 10
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.005)


def text_of(emitted: Emitted, stream: str = "output") -> str:
    return "".join(t for _, s, t in emitted if s == stream)


async def test_many_small_writes_become_one_event_per_interval() -> None:
    emitted, live = recorder()
    stream = live.opener("call_1")("output")
    lines = [f"line {i}\n".encode() for i in range(2000)]
    for line in lines:  # no await in between: all inside one interval
        stream.write(line)
    assert emitted == []  # nothing is sent per write
    await until(lambda: emitted, "the timer's flush")
    assert emitted == [("call_1", "output", b"".join(lines).decode())]
    stream.write(b"more\n")
    await until(lambda: len(emitted) == 2, "the second flush")
    assert emitted[1] == ("call_1", "output", "more\n")


async def test_close_flushes_at_once_and_later_writes_are_ignored() -> None:
    emitted, live = recorder()
    stream = live.opener("call_1")("output")
    stream.write(b"first\n")
    stream.close()  # synchronous: a result emitted next comes after this text
    assert emitted == [("call_1", "output", "first\n")]
    stream.write(b"late\n")
    stream.close()
    live.flush()
    assert emitted == [("call_1", "output", "first\n")]
    assert live.open_streams == 0


async def test_the_cap_sends_at_most_max_chars_and_one_marker() -> None:
    emitted: Emitted = []
    live = LiveOutputs(lambda c, s, t: emitted.append((c, s, t)), max_chars=1000)
    stream = live.opener("call_1")("output")
    for _ in range(50):
        stream.write(b"x" * 99 + b"\n")
    stream.close()
    text = text_of(emitted)
    marker = LIVE_CUT_MARKER.format(limit=1000)
    assert text == ("x" * 99 + "\n") * 10 + marker
    assert text.count("live output stops here") == 1


async def test_a_burst_is_sent_in_bounded_events_without_waiting_for_the_timer() -> None:
    emitted: Emitted = []
    live = LiveOutputs(lambda c, s, t: emitted.append((c, s, t)), max_event_chars=1000)
    stream = live.opener("call_1")("output")
    stream.write(b"a" * 600)
    assert emitted == []
    stream.write(b"b" * 600)  # 1,200 gathered: sent now
    assert emitted == [("call_1", "output", "a" * 600 + "b" * 600)]
    stream.close()


async def test_every_split_point_of_multibyte_text_decodes_whole() -> None:
    text = "naïve → 日本語 🎉 done"
    data = text.encode()
    for cut in range(len(data) + 1):
        emitted, live = recorder()
        stream = live.opener("c")("output")
        stream.write(data[:cut])
        live.flush()  # what the first part alone shows, as if the timer fired between reads
        stream.write(data[cut:])
        stream.close()
        joined = text_of(emitted)
        assert joined == text, cut
        assert "\ufffd" not in joined


async def test_invalid_bytes_are_replaced_and_an_unfinished_character_too() -> None:
    emitted, live = recorder()
    stream = live.opener("call_1")("output")
    stream.write(b"a\xff\xfeb ")
    stream.write(b"\xe2\x82")  # the first two bytes of a three-byte character, then the end
    stream.close()
    assert text_of(emitted) == "a\ufffd\ufffdb \ufffd"


async def test_streams_are_kept_apart_by_call_and_name() -> None:
    emitted, live = recorder()
    one = live.opener("call_1")
    two = live.opener("call_2")
    out1, hook1, out2 = one("output"), one("hook:tool_pre"), two("output")
    out1.write(b"1a ")
    hook1.write(b"h ")
    out2.write(b"2a ")
    out1.write(b"1b")
    await until(lambda: len(emitted) == 3, "one event per stream")
    assert sorted(emitted) == [
        ("call_1", "hook:tool_pre", "h "),
        ("call_1", "output", "1a 1b"),
        ("call_2", "output", "2a "),
    ]
    live.close()


async def test_closing_the_session_flushes_and_closes_every_stream() -> None:
    emitted, live = recorder()
    stream = live.opener("call_1")("bash:abc")
    stream.write(b"still running\n")
    live.close()
    assert emitted == [("call_1", "bash:abc", "still running\n")]
    assert live.open_streams == 0
    after = live.opener("call_2")("output")  # a stream opened after the close says nothing
    after.write(b"ignored")
    after.close()
    assert len(emitted) == 1


async def test_a_failing_emit_never_reaches_the_writer() -> None:
    calls: list[str] = []

    def broken(call_id: str, stream: str, text: str) -> None:
        calls.append(text)
        raise BrokenPipeError("the UI went away")

    live = LiveOutputs(broken)
    stream = live.opener("call_1")("output")
    stream.write(b"one")
    await until(lambda: calls, "the flush")
    stream.write(b"two")
    stream.close()
    assert calls == ["one", "two"]


def test_without_a_running_loop_each_write_is_sent_at_once() -> None:
    emitted, live = recorder()
    stream = live.opener("call_1")("output")
    stream.write(b"x")
    stream.write(b"y")
    assert text_of(emitted) == "xy" and len(emitted) == 2
