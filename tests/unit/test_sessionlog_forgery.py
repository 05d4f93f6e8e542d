"""Session files tampered with or left behind (field report C3): a second line claiming a
published frame's seq does not push the genuine frame out; a manifest that is a directory is
refused naming it, and no write attempt leaves a temp file; temp files of writers that died are
cleared by the next writer. Real logs in a temp $XUM_ROOT, edited as a person or a crash would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from xum.core.errors import StoreError
from xum.core.fsutil import atomic_write_bytes, temp_path
from xum.store import frame_types as ev
from xum.store.frames import damage_reason, encode_frame
from xum.store.sessionlog import LOG_NAME, MANIFEST_NAME, SessionLog

WS = "ws-forgery"


def user(text: str) -> dict[str, Any]:
    return {"message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def fill(n: int) -> SessionLog:
    log = SessionLog.open(WS)
    log.append_many([(ev.USER_MESSAGE, user(f"message {i}")) for i in range(1, n + 1)])
    return log


def texts(log: SessionLog) -> list[str | None]:
    return [None if f.damaged else f.data["message"]["content"][0]["text"] for f in log.frames]


def temp_files(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


def test_a_forged_line_with_a_published_seq_does_not_replace_the_genuine_frame() -> None:
    log = fill(3)
    path = log.directory / LOG_NAME
    lines = path.read_bytes().splitlines(keepends=True)
    forged = encode_frame(2, "ev_forged", 1, ev.USER_MESSAGE, user("forged"))
    path.write_bytes(b"".join([*lines[:2], forged, *lines[2:]]))
    reader = SessionLog.open(WS)
    assert texts(reader) == ["message 1", "message 2", None, "message 3"]
    ((line, frame),) = reader.damaged_lines()
    assert line == 3 and frame.raw == forged
    assert damage_reason(frame.raw or b"").startswith("out of order")


def test_a_forged_copy_of_the_last_seq_after_it_is_never_read() -> None:
    # Past the published boundary it is an unpublished tail: dropped, never a frame.
    log = fill(3)
    path = log.directory / LOG_NAME
    forged = encode_frame(3, "ev_forged", 1, ev.USER_MESSAGE, user("forged"))
    path.write_bytes(path.read_bytes() + forged)
    reader = SessionLog.open(WS)
    kept = [t for t in texts(reader) if t is not None]
    assert kept == ["message 1", "message 2", "message 3"]
    # The next writer appends after the genuine frames; the forgery never becomes seq 3.
    writer = SessionLog.open(WS)
    assert writer.append(ev.USER_MESSAGE, user("message 4")).seq == 4
    after = [t for t in texts(SessionLog.open(WS)) if t is not None]
    assert after == ["message 1", "message 2", "message 3", "message 4"]


def test_a_manifest_that_is_a_directory_is_named_and_leaves_no_temp_file() -> None:
    log = fill(2)
    manifest = log.directory / MANIFEST_NAME
    manifest.unlink()
    manifest.mkdir()
    for _ in range(2):  # each attempt alike
        reader = SessionLog.open(WS)
        with pytest.raises(StoreError) as info:
            reader.append(ev.USER_MESSAGE, user("message 3"))
        err = info.value
        assert f"{MANIFEST_NAME} is a directory" in err.message
        assert ".tmp" not in err.message
        assert err.hint is not None and f"move {manifest}" in err.hint
    assert temp_files(log.directory) == []
    # Moved away, the session is written again with a new manifest.
    manifest.rmdir()
    writer = SessionLog.open(WS)
    assert writer.append(ev.USER_MESSAGE, user("message 3")).seq == 3
    assert manifest.is_file() and temp_files(log.directory) == []


def test_a_failed_rename_removes_the_temp_file_and_names_the_target(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    target.mkdir()
    with pytest.raises(OSError) as info:
        atomic_write_bytes(target, b"{}")
    assert info.value.filename == str(target)
    assert temp_files(tmp_path) == []


def test_the_next_writer_removes_temp_files_of_dead_writers_only() -> None:
    log = fill(1)
    manifest = log.directory / MANIFEST_NAME
    dead_pid = _pid_of_finished_process()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = temp_path(manifest, dead_pid)
        busy = temp_path(manifest, alive.pid)
        stale.write_bytes(b"{}")
        busy.write_bytes(b"{}")
        SessionLog.open(WS).append(ev.USER_MESSAGE, user("message 2"))
        assert not stale.exists()
        assert busy.exists()  # a live writer's file is its own
    finally:
        alive.kill()
        alive.wait()


def _pid_of_finished_process() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid
