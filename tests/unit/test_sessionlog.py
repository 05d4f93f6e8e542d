"""The durable session log, against a real temp $XUM_ROOT: publishing, boundaries, one writer at
a time, refusal of outside changes, quarantine of damaged lines, crash recovery, partials."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest

from xum.core.errors import SessionBusyError, SessionChangedError, StoreError
from xum.store import frame_types as ev
from xum.store.frames import checksum_ok, encode_frame
from xum.store.manifest import Manifest
from xum.store.projection import HistoryProjection, rebuild_history
from xum.store.sessionlog import LOG_NAME, MANIFEST_NAME, SessionLog
from xum.store.sessions import inspect

WS = "ws-test"


def user(text: str) -> dict[str, Any]:
    return {"message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant_calls(*call_ids: str) -> dict[str, Any]:
    parts = [{"type": "tool_call", "id": c, "name": "bash", "arguments": "{}"} for c in call_ids]
    return {
        "message": {"role": "assistant", "content": parts},
        "usage": {},
        "finish_reason": "tool_calls",
        "model": "m",
    }


def result(call_id: str, output: str = "ok") -> dict[str, Any]:
    return {"message": ev.tool_result_message(call_id, "bash", output, is_error=False)}


def log_path(log: SessionLog) -> Path:
    return log.directory / LOG_NAME


def manifest_of(log: SessionLog) -> dict[str, Any]:
    value = orjson.loads((log.directory / MANIFEST_NAME).read_bytes())
    assert isinstance(value, dict)
    return value


def fill(n: int) -> SessionLog:
    log = SessionLog.open(WS)
    log.append_many([(ev.USER_MESSAGE, user(f"message {i}")) for i in range(1, n + 1)])
    return log


def lines_of(log: SessionLog) -> list[bytes]:
    return log_path(log).read_bytes().splitlines(keepends=True)


def texts(log: SessionLog) -> list[str | None]:
    return [
        None if f.damaged else f.data["message"]["content"][0]["text"]
        for f in log.frames
        if f.damaged or f.type == ev.USER_MESSAGE
    ]


# Append and read -------------------------------------------------------------------------------


def test_append_then_reopen_reads_the_same_frames() -> None:
    log = SessionLog.open(WS)
    assert log.frames == [] and log.last_seq == 0
    first = log.append(ev.USER_MESSAGE, user("hello"))
    second = log.append(ev.TURN_START, {"turn_id": "t1"})
    assert (first.seq, second.seq) == (1, 2)
    assert first.id != second.id and first.id.startswith("ev_")

    again = SessionLog.open(WS)
    assert list(again.frames) == [first, second]
    assert again.frames[0].data == user("hello")
    assert again.last_seq == 2
    assert all(checksum_ok(line) for line in lines_of(again))


def test_frame_line_format_has_the_checksum_last() -> None:
    log = SessionLog.open(WS)
    log.append(ev.USER_MESSAGE, user("x"))
    line = lines_of(log)[0]
    obj = orjson.loads(line)
    assert list(obj) == ["v", "seq", "id", "ts", "type", "data", "crc"]
    assert obj["v"] == 1 and obj["seq"] == 1 and isinstance(obj["ts"], int)
    # Any single changed byte before the checksum is detected.
    tampered = line.replace(b'"x"', b'"y"')
    assert checksum_ok(line) and not checksum_ok(tampered)


def test_batches_are_contiguous_and_published_together() -> None:
    log = SessionLog.open(WS)
    log.append(ev.USER_MESSAGE, user("a"))
    batch = log.append_many([(ev.STEP_START, {"turn_id": "t", "step": i}) for i in range(5)])
    assert [f.seq for f in batch] == [2, 3, 4, 5, 6]
    assert log.append_many([]) == []
    manifest = manifest_of(log)
    assert manifest["last_seq"] == 6 and manifest["frames"] == 6
    assert manifest["size"] == log_path(log).stat().st_size
    reopened = SessionLog.open(WS)
    assert [f.seq for f in reopened.frames] == [1, 2, 3, 4, 5, 6]


def test_seqs_stay_contiguous_across_objects_and_reopens() -> None:
    a = SessionLog.open(WS)
    b = SessionLog.open(WS)
    a.append(ev.USER_MESSAGE, user("from a"))
    b.append(ev.USER_MESSAGE, user("from b"))  # b first adopts what a published
    a.append(ev.USER_MESSAGE, user("from a again"))
    assert [f.seq for f in SessionLog.open(WS).frames] == [1, 2, 3]
    assert texts(a) == ["from a", "from b", "from a again"]


def test_appended_data_is_decoupled_from_the_callers_objects() -> None:
    log = SessionLog.open(WS)
    data = user("original")
    frame = log.append(ev.USER_MESSAGE, data)
    data["message"]["content"][0]["text"] = "mutated later"
    assert frame.data == user("original") == SessionLog.open(WS).frames[0].data


def test_frames_after_returns_what_a_reconnecting_client_missed() -> None:
    log = fill(5)
    assert [f.seq for f in log.frames_after(2)] == [3, 4, 5]
    assert [f.seq for f in log.frames_after(0)] == [1, 2, 3, 4, 5]
    assert log.frames_after(5) == [] and log.frames_after(99) == []


def test_opening_for_reading_creates_nothing(xum_root: Path) -> None:
    log = SessionLog.open(WS)
    assert log.frames == []
    assert not xum_root.exists()
    report = inspect(WS)
    assert not report.exists and report.manifest == "none" and report.healthy
    assert not xum_root.exists()


def test_files_and_directories_are_private(xum_root: Path) -> None:
    log = fill(1)
    log.write_partial({"text": "x"})
    for path in (xum_root, xum_root / "sessions", log.directory):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    for name in (LOG_NAME, MANIFEST_NAME, "partial.json"):
        assert stat.S_IMODE((log.directory / name).stat().st_mode) == 0o600, name


def test_unsafe_workspace_ids_are_refused() -> None:
    for bad in ("../etc", "a/b", "", ".hidden", "x" * 200):
        with pytest.raises(StoreError):
            SessionLog.open(bad)


# The published boundary ------------------------------------------------------------------------


def test_unpublished_tail_is_invisible_and_a_writer_truncates_it() -> None:
    log = fill(3)
    published = log_path(log).read_bytes()
    # A crash after writing frames but before publishing them: whole frames and a torn one.
    unpublished = encode_frame(4, "ev_x", 1, ev.USER_MESSAGE, user("never published"))
    torn = encode_frame(5, "ev_y", 1, ev.USER_MESSAGE, user("torn"))[:30]
    with log_path(log).open("ab") as fh:
        fh.write(unpublished + torn)

    reader = SessionLog.open(WS)
    assert [f.seq for f in reader.frames] == [1, 2, 3]
    assert not any(f.damaged for f in reader.frames)
    report = inspect(WS)
    assert report.unpublished_tail_bytes == len(unpublished) + 30
    assert report.manifest == "ok" and report.healthy

    writer = SessionLog.open(WS)
    writer.recover()
    assert log_path(log).read_bytes() == published
    frame = writer.append(ev.USER_MESSAGE, user("fourth"))
    assert frame.seq == 4
    assert texts(SessionLog.open(WS)) == ["message 1", "message 2", "message 3", "fourth"]


def test_unpublished_batch_is_invisible_as_a_whole() -> None:
    log = fill(2)
    batch = b"".join(
        encode_frame(seq, f"ev_{seq}", 1, ev.STEP_START, {"step": seq}) for seq in (3, 4, 5)
    )
    with log_path(log).open("ab") as fh:
        fh.write(batch)
    assert [f.seq for f in SessionLog.open(WS).frames] == [1, 2]


def test_the_first_publish_writes_a_manifest_before_frames_exist() -> None:
    log = SessionLog.open(WS)
    log.recover()
    assert manifest_of(log)["size"] == 0
    assert log_path(log).read_bytes() == b""


# One writer at a time --------------------------------------------------------------------------

_HOLDER = textwrap.dedent(
    """
    import sys
    from xum.store.sessionlog import SessionLog
    log = SessionLog.open(sys.argv[1])
    log.begin_write(purpose="holder-under-test")
    log.append("user_message", {"message": {"role": "user", "content": []}})
    print("ready", flush=True)
    sys.stdin.readline()
    log.end_write()
    """
)


def test_a_second_writer_is_refused_with_a_message_naming_the_holder() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, WS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "ready"
        log = SessionLog.open(WS, lock_timeout=0.2)
        assert [f.seq for f in log.frames] == [1]  # reading never waits for the writer
        with pytest.raises(SessionBusyError) as info:
            log.append(ev.USER_MESSAGE, user("refused"))
        text = str(info.value)
        assert str(child.pid) in text
        assert socket.gethostname() in text
        assert "holder-under-test" in text
        assert "hint:" in text
        with pytest.raises(SessionBusyError):
            log.begin_write(timeout=0.05)
        assert not log.writing_now
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(timeout=10) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    # The holder let go between turns: now this process can take its turn.
    log.append(ev.USER_MESSAGE, user("my turn"))
    assert [f.seq for f in SessionLog.open(WS).frames] == [1, 2]


def test_the_lock_is_held_for_a_turn_and_released_after() -> None:
    a = SessionLog.open(WS, lock_timeout=0.05)
    b = SessionLog.open(WS, lock_timeout=0.05)
    with a.writing("turn"):
        a.append(ev.TURN_START, {"turn_id": "t"})
        with pytest.raises(SessionBusyError):
            b.append(ev.USER_MESSAGE, user("x"))
        a.append(ev.TURN_END, {"turn_id": "t", "reason": "completed"})
    b.append(ev.USER_MESSAGE, user("x"))
    assert [f.type for f in b.frames] == [ev.TURN_START, ev.TURN_END, ev.USER_MESSAGE]


# Changes made from outside -----------------------------------------------------------------------


def test_bytes_appended_from_outside_during_a_turn_are_never_overwritten() -> None:
    log = fill(2)
    with log.writing("turn"):
        log.append(ev.TURN_START, {"turn_id": "t"})
        with log_path(log).open("ab") as fh:
            fh.write(b"someone else's bytes\n")
        before = log_path(log).read_bytes()
        with pytest.raises(SessionChangedError) as info:
            log.append(ev.USER_MESSAGE, user("refused"))
        assert "reopen" in str(info.value)
        assert log_path(log).read_bytes() == before


def test_a_replaced_manifest_is_refused() -> None:
    log = fill(2)
    with log.writing("turn"):
        path = log.directory / MANIFEST_NAME
        path.write_bytes(path.read_bytes())  # same content, new mtime
        os.utime(path, ns=(1, 1))
        with pytest.raises(SessionChangedError):
            log.append(ev.USER_MESSAGE, user("refused"))


def test_an_edit_between_turns_is_refused_then_a_reopen_continues() -> None:
    log = fill(3)
    lines = lines_of(log)
    lines[1] = lines[1].replace(b"message 2", b"message X")
    log_path(log).write_bytes(b"".join(lines))
    with pytest.raises(SessionChangedError):
        log.append(ev.USER_MESSAGE, user("refused"))
    assert log_path(log).read_bytes() == b"".join(lines)
    assert not log.writing_now
    reopened = SessionLog.open(WS, lock_timeout=0.05)  # the refused writer let go of the lock
    assert reopened.append(ev.USER_MESSAGE, user("after")).seq == 4


def test_a_reader_refresh_picks_up_frames_published_by_another_writer() -> None:
    reader = fill(2)
    writer = SessionLog.open(WS)
    writer.append_many([(ev.USER_MESSAGE, user("new 1")), (ev.USER_MESSAGE, user("new 2"))])
    assert reader.refresh() == "appended"
    assert texts(reader) == ["message 1", "message 2", "new 1", "new 2"]
    assert reader.refresh() == "unchanged"
    generation = reader.generation
    lines = lines_of(reader)
    log_path(reader).write_bytes(b"".join([*lines[:1], b"garbage\n", *lines[2:]]))
    assert reader.refresh() == "reloaded"
    assert reader.generation == generation + 1
    assert texts(reader) == ["message 1", None, "new 1", "new 2"]


# Damage inside the published region -------------------------------------------------------------


def test_a_hand_edited_line_is_quarantined_and_the_next_open_is_fast() -> None:
    log = fill(6)
    lines = lines_of(log)
    original = lines[3]
    lines[3] = original.replace(b"message 4", b"message Z")  # same length, bad checksum
    log_path(log).write_bytes(b"".join(lines))

    reader = SessionLog.open(WS)
    assert texts(reader) == ["message 1", "message 2", "message 3", None, "message 5", "message 6"]
    damaged = reader.damaged_frames()
    assert len(damaged) == 1
    assert damaged[0].seq == 4 and damaged[0].raw == lines[3] and damaged[0].damaged
    report = inspect(WS)
    assert (report.frames, report.damaged, report.damaged_seqs) == (6, 1, [4])
    assert report.manifest == "stale" and not report.healthy

    writer = SessionLog.open(WS)
    writer.recover()
    assert manifest_of(writer)["damaged"] == [[3, 4]]
    assert log_path(writer).read_bytes() == b"".join(lines)  # kept on disk untouched
    report = inspect(WS)
    assert report.manifest == "ok" and report.damaged == 1  # fast path, still quarantined
    assert writer.append(ev.USER_MESSAGE, user("message 7")).seq == 7
    again = SessionLog.open(WS)
    assert texts(again) == [
        "message 1",
        "message 2",
        "message 3",
        None,
        "message 5",
        "message 6",
        "message 7",
    ]
    assert [f.seq for f in again.frames] == [1, 2, 3, 4, 5, 6, 7]
    assert [f.seq for f in again.frames_after(3)] == [4, 5, 6, 7]


def test_two_sessions_open_on_a_damaged_log_agree_after_one_heals_it() -> None:
    log = fill(4)
    lines = lines_of(log)
    lines[1] = b"damaged\n"
    log_path(log).write_bytes(b"".join(lines))
    server = SessionLog.open(WS)
    cli = SessionLog.open(WS)
    cli.recover()  # republishes the manifest over the same bytes
    assert server.refresh() == "unchanged"
    cli.append(ev.USER_MESSAGE, user("from the cli"))
    assert server.refresh() == "appended"
    assert server.generation == 0  # no reload: the healed manifest vouches for what it held
    assert texts(server) == ["message 1", None, "message 3", "message 4", "from the cli"]
    assert server.append(ev.USER_MESSAGE, user("from the server")).seq == 6


@pytest.mark.parametrize("delta", [+37, -5])
def test_a_length_changing_edit_loses_no_later_frame(delta: int) -> None:
    log = fill(8)
    lines = lines_of(log)
    if delta > 0:
        lines[2] = lines[2].replace(b"message 3", b"message 3" + b"!" * delta)
    else:
        lines[2] = lines[2].replace(b"message 3", b"msg3")
    log_path(log).write_bytes(b"".join(lines))

    expected = [f"message {i}" if i != 3 else None for i in range(1, 9)]
    assert texts(SessionLog.open(WS)) == expected
    writer = SessionLog.open(WS)
    writer.recover()
    assert log_path(writer).read_bytes() == b"".join(lines)  # nothing truncated
    assert writer.append(ev.USER_MESSAGE, user("message 9")).seq == 9
    assert texts(SessionLog.open(WS)) == [*expected, "message 9"]
    assert inspect(WS).manifest == "ok"


def test_an_unparseable_line_and_a_deleted_line_are_reported() -> None:
    log = fill(7)
    lines = lines_of(log)
    lines[1] = b"\x00\xffnot json at all\n"
    del lines[4]  # frame 5 is gone
    log_path(log).write_bytes(b"".join(lines))
    reader = SessionLog.open(WS)
    assert [f.seq for f in reader.frames] == [1, 2, 3, 4, 6, 7]
    assert [f.damaged for f in reader.frames] == [False, True, False, False, False, False]
    report = inspect(WS)
    assert report.missing == [(5, 5)] and report.damaged_seqs == [2]
    writer = SessionLog.open(WS)
    assert writer.append(ev.USER_MESSAGE, user("message 8")).seq == 8  # seqs never reused
    assert inspect(WS).missing == [(5, 5)]
    assert [f.seq for f in SessionLog.open(WS).frames_after(4)] == [6, 7, 8]


def test_a_duplicated_line_is_quarantined_without_hiding_the_rest() -> None:
    log = fill(5)
    lines = lines_of(log)
    lines.insert(1, lines[3])  # a copy of frame 4 pasted after frame 1
    log_path(log).write_bytes(b"".join(lines))
    reader = SessionLog.open(WS)
    assert [(f.seq, f.damaged) for f in reader.frames] == [
        (1, False),
        (None, True),
        (2, False),
        (3, False),
        (4, False),
        (5, False),
    ]


def test_damage_in_the_last_published_line_with_a_tail_after_it() -> None:
    log = fill(4)
    lines = lines_of(log)
    lines[3] = lines[3].replace(b"message 4", b"message 4 edited")
    tail = encode_frame(5, "ev_t", 1, ev.USER_MESSAGE, user("unpublished"))
    log_path(log).write_bytes(b"".join(lines) + tail)
    reader = SessionLog.open(WS)
    assert texts(reader) == ["message 1", "message 2", "message 3", None]
    assert reader.frames[3].seq == 4
    assert inspect(WS).unpublished_tail_bytes == len(tail)
    writer = SessionLog.open(WS)
    writer.recover()
    assert log_path(writer).read_bytes() == b"".join(lines)  # the tail went, the damage stays
    assert writer.append(ev.USER_MESSAGE, user("five")).seq == 5


def test_a_lost_manifest_is_rebuilt_from_the_frames() -> None:
    log = fill(3)
    (log.directory / MANIFEST_NAME).unlink()
    assert inspect(WS).manifest == "missing"
    assert texts(SessionLog.open(WS)) == ["message 1", "message 2", "message 3"]
    writer = SessionLog.open(WS)
    assert writer.append(ev.USER_MESSAGE, user("message 4")).seq == 4
    assert inspect(WS).manifest == "ok"


def test_a_truncated_log_reports_missing_frames_and_reuses_no_seq() -> None:
    log = fill(5)
    data = log_path(log).read_bytes()
    log_path(log).write_bytes(data[: data.index(b"\n") + 1])  # only frame 1 survives
    report = inspect(WS)
    assert report.missing == [(2, 5)] and report.frames == 1
    assert SessionLog.open(WS).append(ev.USER_MESSAGE, user("six")).seq == 6


def test_inspect_never_writes() -> None:
    log = fill(4)
    lines = lines_of(log)
    lines[2] = b"broken\n"
    log_path(log).write_bytes(b"".join(lines) + b"torn tail")
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in log.directory.iterdir()}
    report = inspect(WS)
    assert report.damaged == 1 and report.unpublished_tail_bytes == len(b"torn tail")
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in log.directory.iterdir()}
    assert before == after


def test_a_manifest_from_a_newer_version_is_not_written_over() -> None:
    log = fill(1)
    path = log.directory / MANIFEST_NAME
    manifest = Manifest.from_bytes(path.read_bytes())
    assert manifest is not None
    manifest.v = 99
    path.write_bytes(manifest.to_bytes())
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer xum"):
        SessionLog.open(WS).append(ev.USER_MESSAGE, user("x"))
    assert path.read_bytes() == before


# Crash recovery ----------------------------------------------------------------------------------


def test_a_turn_a_crash_left_open_is_closed_on_the_next_writer_open() -> None:
    log = SessionLog.open(WS)
    with log.writing("turn"):
        log.append(ev.TURN_START, {"turn_id": "done"})
        log.append(ev.USER_MESSAGE, user("first"))
        log.append(ev.TURN_END, {"turn_id": "done", "reason": "completed"})
    # The process "dies" mid-turn: tool calls c1, c2, c3 issued, only c2 answered.
    dead = SessionLog.open(WS)
    dead.begin_write("turn")
    dead.append(ev.TURN_START, {"turn_id": "t2"})
    dead.append(ev.USER_MESSAGE, user("second"))
    dead.append(ev.ASSISTANT_MESSAGE, assistant_calls("c1", "c2", "c3"))
    dead.append(ev.TOOL_RESULT, result("c2"))
    dead.write_partial({"text": "half a reply"})
    dead.close()
    assert inspect(WS).open_turn == "t2"

    # Readers see the log as it is; the history they derive is still valid.
    history = rebuild_history(SessionLog.open(WS).frames)
    assert [m["role"] for m in history] == ["user", "user", "assistant", "tool", "tool", "tool"]

    survivor = SessionLog.open(WS)
    survivor.recover()
    recovered = survivor.frames[-3:]
    assert [f.type for f in recovered] == [ev.TOOL_RESULT, ev.TOOL_RESULT, ev.TURN_END]
    for frame, call_id in zip(recovered[:2], ["c1", "c3"], strict=True):
        part = frame.data["message"]["content"][0]
        assert part["call_id"] == call_id and part["is_error"] is True
        assert part["output"] == ev.INTERRUPTED_OUTPUT
        assert frame.data["synthetic"] is True
    assert recovered[2].data == {"turn_id": "t2", "reason": "interrupted", "cause": "crash"}
    assert survivor.read_partial() is None
    assert inspect(WS).open_turn is None

    # Recovery is durable and happens once.
    count = len(SessionLog.open(WS).frames)
    SessionLog.open(WS).recover()
    assert len(SessionLog.open(WS).frames) == count
    history = HistoryProjection().update(SessionLog.open(WS))
    tool_outputs = [m["content"][0].get("output") for m in history if m["role"] == "tool"]
    assert tool_outputs == [ev.INTERRUPTED_OUTPUT, "ok", ev.INTERRUPTED_OUTPUT]


def test_a_completed_turn_is_left_alone() -> None:
    log = SessionLog.open(WS)
    with log.writing():
        log.append(ev.TURN_START, {"turn_id": "t"})
        log.append(ev.ASSISTANT_MESSAGE, assistant_calls("c1"))
        log.append(ev.TURN_END, {"turn_id": "t", "reason": "error"})
    count = len(log.frames)
    SessionLog.open(WS).recover()
    assert len(SessionLog.open(WS).frames) == count


# Partial message ---------------------------------------------------------------------------------


def test_partial_lifecycle() -> None:
    log = fill(2)
    assert log.read_partial() is None
    log.write_partial({"role": "assistant", "content": [{"type": "text", "text": "Hel"}]})
    log.write_partial({"role": "assistant", "content": [{"type": "text", "text": "Hello"}]})
    partial = SessionLog.open(WS).read_partial()
    assert partial is not None
    assert partial.after_seq == 2
    assert partial.data["content"][0]["text"] == "Hello"
    log.delete_partial()
    log.delete_partial()  # idempotent
    assert log.read_partial() is None
    (log.directory / "partial.json").write_bytes(b'{"after_seq": 2, "upd')  # never torn by us
    assert log.read_partial() is None
