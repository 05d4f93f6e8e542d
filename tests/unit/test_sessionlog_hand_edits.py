"""Hand edits of a session log that must not lose intact data: a removed final newline, a last
line cut short, a CRLF conversion, absurd sequence numbers, session files that are directories.
Every case is a real log in a temp $XUM_ROOT, edited the way an editor or a sync tool would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from xum.core.errors import StoreError
from xum.store import frame_types as ev
from xum.store.frames import MAX_SEQ, encode_frame
from xum.store.sessionlog import LOG_NAME, MANIFEST_NAME, SessionLog
from xum.store.sessions import inspect

WS = "ws-edits"


def user(text: str) -> dict[str, Any]:
    return {"message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def fill(n: int) -> SessionLog:
    log = SessionLog.open(WS)
    log.append_many([(ev.USER_MESSAGE, user(f"message {i}")) for i in range(1, n + 1)])
    return log


def texts(log: SessionLog) -> list[str | None]:
    return [None if f.damaged else f.data["message"]["content"][0]["text"] for f in log.frames]


def log_file(log: SessionLog) -> Path:
    return log.directory / LOG_NAME


def test_a_removed_final_newline_keeps_the_last_frame() -> None:
    log = fill(3)
    original = log_file(log).read_bytes()
    log_file(log).write_bytes(original[:-1])
    reader = SessionLog.open(WS)
    assert texts(reader) == ["message 1", "message 2", "message 3"]
    assert inspect(WS).unpublished_tail_bytes == 0
    writer = SessionLog.open(WS)
    assert writer.append(ev.USER_MESSAGE, user("message 4")).seq == 4
    # The newline is back, the third frame untouched, the fourth after it.
    assert log_file(log).read_bytes().startswith(original)
    assert texts(SessionLog.open(WS)) == ["message 1", "message 2", "message 3", "message 4"]
    report = inspect(WS)
    assert report.manifest == "ok" and report.healthy


def test_a_last_line_cut_short_is_kept_as_damaged_not_cut_off() -> None:
    log = fill(3)
    original = log_file(log).read_bytes()
    cut = original[:-25]
    log_file(log).write_bytes(cut)
    reader = SessionLog.open(WS)
    assert texts(reader) == ["message 1", "message 2", None]
    assert reader.frames[2].seq == 3  # the seq it occupies, from its neighbours
    report = inspect(WS)
    assert report.damaged == 1 and report.damaged_seqs == [3] and report.missing == []
    writer = SessionLog.open(WS)
    assert writer.append(ev.USER_MESSAGE, user("message 4")).seq == 4
    data = log_file(log).read_bytes()
    assert data.startswith(cut + b"\n")  # every byte of the cut line kept, a newline added
    assert texts(SessionLog.open(WS)) == ["message 1", "message 2", None, "message 4"]


def test_a_torn_tail_after_the_boundary_is_still_cut() -> None:
    log = fill(2)
    published = log_file(log).read_bytes()
    torn = encode_frame(3, "ev_t", 1, ev.USER_MESSAGE, user("torn"))[:40]
    log_file(log).write_bytes(published + torn)
    assert texts(SessionLog.open(WS)) == ["message 1", "message 2"]
    assert inspect(WS).unpublished_tail_bytes == 40
    SessionLog.open(WS).recover()
    assert log_file(log).read_bytes() == published


def test_a_crlf_conversion_damages_nothing() -> None:
    log = fill(3)
    log_file(log).write_bytes(log_file(log).read_bytes().replace(b"\n", b"\r\n"))
    reader = SessionLog.open(WS)
    assert texts(reader) == ["message 1", "message 2", "message 3"]
    assert inspect(WS).damaged == 0
    SessionLog.open(WS).append(ev.USER_MESSAGE, user("message 4"))
    again = SessionLog.open(WS)
    assert texts(again) == ["message 1", "message 2", "message 3", "message 4"]
    assert inspect(WS).manifest == "ok"


def test_an_absurd_manifest_last_seq_is_refused_and_the_session_stays_writable() -> None:
    log = fill(3)
    path = log.directory / MANIFEST_NAME
    manifest = orjson.loads(path.read_bytes())
    manifest["last_seq"] = 2**64 - 1
    path.write_bytes(orjson.dumps(manifest))
    report = inspect(WS)
    assert report.manifest == "invalid"
    assert report.problem is not None and "last_seq 18446744073709551615" in report.problem
    reader = SessionLog.open(WS)
    assert reader.last_seq == 3 and texts(reader) == ["message 1", "message 2", "message 3"]
    assert reader.append(ev.USER_MESSAGE, user("message 4")).seq == 4
    assert inspect(WS).manifest == "ok"


def test_a_frame_claiming_an_absurd_seq_is_damage() -> None:
    log = fill(2)
    forged = encode_frame(2**60, "ev_f", 1, ev.USER_MESSAGE, user("forged"))
    lines = log_file(log).read_bytes().splitlines(keepends=True)
    log_file(log).write_bytes(lines[0] + forged + lines[1])
    reader = SessionLog.open(WS)
    assert texts(reader) == ["message 1", None, "message 2"]
    assert reader.last_seq == 2
    assert reader.append(ev.USER_MESSAGE, user("message 3")).seq == 3


def test_a_session_at_the_last_sequence_number_refuses_with_a_clear_error() -> None:
    log = fill(1)
    path = log.directory / MANIFEST_NAME
    manifest = orjson.loads(path.read_bytes())
    manifest["last_seq"] = MAX_SEQ
    path.write_bytes(orjson.dumps(manifest))
    full = SessionLog.open(WS)
    assert full.last_seq == MAX_SEQ
    before = log_file(log).read_bytes()
    with pytest.raises(StoreError, match="used up its sequence numbers") as info:
        full.append(ev.USER_MESSAGE, user("one more"))
    assert info.value.hint and "new session" in info.value.hint
    assert log_file(log).read_bytes() == before


def test_a_log_that_is_a_directory_is_a_clear_error() -> None:
    log = fill(1)
    log_file(log).unlink()
    log_file(log).mkdir()
    with pytest.raises(StoreError, match="not a regular file"):
        SessionLog.open(WS)


def test_a_manifest_that_is_a_directory_is_read_around_and_refused_for_writing() -> None:
    log = fill(2)
    path = log.directory / MANIFEST_NAME
    path.unlink()
    path.mkdir()
    report = inspect(WS)
    assert report.manifest == "invalid" and report.problem and "regular file" in report.problem
    reader = SessionLog.open(WS)
    assert texts(reader) == ["message 1", "message 2"]
    with pytest.raises(StoreError, match="cannot write session") as info:
        reader.append(ev.USER_MESSAGE, user("message 3"))
    assert MANIFEST_NAME in info.value.message
