"""A large log opens with the frames before its last boundary left on disk (`LazyFrame`), and
every reader sees the same frames, history, costs and todos as from the writer's own copy."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from xum.context.frozen import FrozenTracker
from xum.core.errors import SessionChangedError
from xum.engine.contextmeter import ContextMeter
from xum.engine.resume import resume
from xum.store import frame_types as ev
from xum.store.frames import LazyFrame, LogLines
from xum.store.projection import HistoryProjection, rebuild_history
from xum.store.scan import LAZY_MIN_BYTES
from xum.store.sessionlog import LOG_NAME, SessionLog

WS = "ws-lazy"


def _turn(n: int, output: str) -> list[tuple[str, dict[str, Any]]]:
    call = f"call-{n}"
    name = "todo_write" if n == 3 else "bash"
    todos = [{"content": "write the tests", "status": "in_progress"}]
    return [
        (ev.TURN_START, {"turn_id": f"t{n}"}),
        (
            ev.USER_MESSAGE,
            {"message": {"role": "user", "content": [{"type": "text", "text": "go"}]}},
        ),
        (
            ev.ASSISTANT_MESSAGE,
            {
                "message": {
                    "role": "assistant",
                    "content": [{"type": "tool_call", "id": call, "name": name, "arguments": "{}"}],
                },
                "usage": {"input_tokens": 10, "output_tokens": 2},
                "finish_reason": "tool_calls",
                "model": "m",
                "cost_usd": 0.25,
                "step": 0,
            },
        ),
        (
            ev.TOOL_RESULT,
            {
                "message": ev.tool_result_message(call, name, output, is_error=False),
                "meta": {"todos": todos}
                if name == "todo_write"
                else {"mcp_loaded": ["srv__search"]}
                if n == 5
                else {},
            },
        ),
        (ev.TURN_END, {"turn_id": f"t{n}", "reason": "completed"}),
    ]


def _big_log() -> SessionLog:
    """About 2 MB: 40 turns with 50 KB results, a compaction after turn 30, then 10 more turns."""
    log = SessionLog.open(WS)
    with log.writing("test"):
        for n in range(40):
            if n == 30:
                summary = {"summary": "so far", "through_seq": log.last_seq, "trigger": "auto"}
                log.append_many([ev.unchecked(ev.COMPACTION, summary)])
            log.append_many([ev.unchecked(*f) for f in _turn(n, f"output {n} " + "x" * 50_000)])
    assert (log.directory / LOG_NAME).stat().st_size > LAZY_MIN_BYTES
    return log


def test_reopened_large_log_reads_the_same_frames_with_old_ones_left_on_disk() -> None:
    writer = _big_log()
    reader = SessionLog.open(WS)
    boundary = next(i for i, f in enumerate(writer.frames) if f.type == ev.COMPACTION)
    assert all(isinstance(f, LazyFrame) for f in reader.frames[:boundary])
    assert not any(isinstance(f, LazyFrame) for f in reader.frames[boundary:])
    assert list(reader.frames) == list(writer.frames)
    assert [f.data for f in reader.frames] == [f.data for f in writer.frames]

    history = HistoryProjection().update(reader)
    assert history == rebuild_history(reader.frames) == rebuild_history(writer.frames)
    assert history[0] == ev.summary_message("so far") and len(history) == 1 + 10 * 3

    # Costs and the todo list come from before the boundary too.
    got, want = resume(reader.frames), resume(writer.frames)
    assert (got.cost, got.todos, got.by_model) == (want.cost, want.todos, want.by_model)
    assert got.cost == pytest.approx(40 * 0.25) and [t.content for t in got.todos] == [
        "write the tests"
    ]


def test_a_reopened_large_log_takes_appends_and_reopens_valid() -> None:
    _big_log().close()
    log = SessionLog.open(WS)
    log.append_many([ev.unchecked(*f) for f in _turn(99, "late")])
    again = SessionLog.open(WS)
    assert list(again.frames) == list(log.frames) and again.last_seq == log.last_seq
    assert again.frames[-2].data["message"]["content"][0]["output"] == "late"


def test_a_lazy_frame_whose_line_was_edited_says_the_log_changed() -> None:
    _big_log().close()
    reader = SessionLog.open(WS)
    first = reader.frames[1]
    assert isinstance(first, LazyFrame)
    path = reader.directory / LOG_NAME
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b"output 0 ", b"OUTPUT 0 ", 1))  # same length, bad checksum
    with pytest.raises(SessionChangedError, match="changed under this reader"):
        _ = reader.frames[3].data
    assert reader.refresh() == "reloaded"  # the scan quarantines the edited line
    assert [line for line, _ in reader.damaged_lines()] == [4]


def test_the_followers_read_a_lazy_log_as_they_read_the_writers_frames() -> None:
    writer = _big_log()
    reader = SessionLog.open(WS)
    assert ContextMeter().update(reader) == ContextMeter().update(writer)
    lazy, eager = FrozenTracker(), FrozenTracker()
    lazy.update(reader)
    eager.update(writer)
    assert lazy.loaded == {"srv__search"}  # read from a tool result before the boundary
    assert (lazy.frozen, lazy.known, lazy.next_reason, lazy.loaded) == (
        eager.frozen,
        eager.known,
        eager.next_reason,
        eager.loaded,
    )


def test_lines_containing_finds_a_needle_split_across_reads(tmp_path: Path) -> None:
    lines = [b'{"a":"todo_write"}\n', b'{"b":"none"}\n', b'{"c":["todo_write"]}\n']
    path = tmp_path / "log"
    path.write_bytes(b"".join(lines))
    fd = os.open(path, os.O_RDONLY)
    try:
        source = LogLines(fd, str(path))
    finally:
        os.close(fd)
    offset = 0
    for line in lines:
        source.starts.append(offset)
        offset += len(line)
    source.size = offset
    want = frozenset({0, len(lines[0]) + len(lines[1])})
    for chunk in (3, 7, 11, 4096):  # every split of the needle, and one read
        assert source.lines_containing(b'"todo_write"', chunk) == want
        source = _fresh(source, path)


def _fresh(source: LogLines, path: Path) -> LogLines:
    """The same lines without the remembered answers."""
    fd = os.open(path, os.O_RDONLY)
    try:
        again = LogLines(fd, str(path))
    finally:
        os.close(fd)
    again.starts, again.size = source.starts, source.size
    return again


def test_a_large_log_with_crlf_line_endings_reads_lazily_after_a_writer_publishes_it() -> None:
    writer = _big_log()
    want = [f.data for f in writer.frames]
    writer.close()
    path = writer.directory / LOG_NAME
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))  # a sync tool converted it
    SessionLog.open(WS).recover()  # the scan reads it; the writer publishes it as it is
    reader = SessionLog.open(WS)
    assert isinstance(reader.frames[1], LazyFrame)
    assert [f.data for f in reader.frames] == want and not reader.damaged_lines()
