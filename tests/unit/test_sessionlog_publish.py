"""Publishing an append with the log and the manifest flushed side by side (xum.store.publish):
a failure of either flush publishes nothing and leaves no temp file, and a forked child (the
kill -9 suite's workers are forks) still publishes although its parent's helper threads are
gone."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from xum.core.errors import StoreError
from xum.core.fsutil import temp_path
from xum.store import frame_types as ev
from xum.store.manifest import Manifest, read_manifest
from xum.store.publish import sync_and_publish
from xum.store.sessionlog import LOG_NAME, MANIFEST_NAME, SessionLog

WS = "ws-publish"


def user(text: str) -> dict[str, Any]:
    return {"message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def leftovers(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


def test_an_append_publishes_its_frames_and_leaves_no_temp_file() -> None:
    log = SessionLog.open(WS)
    for i in range(5):
        log.append_many([(ev.USER_MESSAGE, user(f"m{i}")), (ev.USER_MESSAGE, user(f"n{i}"))])
    manifest = read_manifest(log.directory / MANIFEST_NAME).manifest
    assert manifest is not None
    assert manifest.size == (log.directory / LOG_NAME).stat().st_size
    assert manifest.frames == manifest.last_seq == 10
    assert leftovers(log.directory) == []
    assert [f.seq for f in SessionLog.open(WS).frames] == list(range(1, 11))


def test_a_log_that_cannot_be_flushed_publishes_nothing(tmp_path: Path) -> None:
    manifest_path = tmp_path / MANIFEST_NAME
    manifest_path.write_bytes(Manifest(size=0).to_bytes())
    before = manifest_path.read_bytes()
    read_end, write_end = os.pipe()  # fdatasync refuses a pipe (EINVAL)
    try:
        with pytest.raises(OSError):
            sync_and_publish(write_end, manifest_path, Manifest(size=99, frames=1, last_seq=1))
    finally:
        os.close(read_end)
        os.close(write_end)
    assert manifest_path.read_bytes() == before  # the old boundary stands
    assert leftovers(tmp_path) == []  # the manifest flushed beside it was removed unpublished


def test_a_manifest_that_cannot_be_written_refuses_the_append_and_keeps_the_log() -> None:
    log = SessionLog.open(WS)
    log.append_many([(ev.USER_MESSAGE, user("kept"))])
    # Something in the temp file's place: the manifest cannot be prepared, the frame was
    # written and flushed, and it must not count.
    blocker = temp_path(log.directory / MANIFEST_NAME, os.getpid())
    blocker.mkdir()
    try:
        with pytest.raises(StoreError, match="cannot append"):
            log.append_many([(ev.USER_MESSAGE, user("refused"))])
    finally:
        blocker.rmdir()
    assert [f.data["message"]["content"][0]["text"] for f in log.frames] == ["kept"]
    again = SessionLog.open(WS)
    assert [f.data["message"]["content"][0]["text"] for f in again.frames] == ["kept"]
    assert again.append_many([(ev.USER_MESSAGE, user("next"))])[0].seq == 2  # seq not burnt


_FORKED = textwrap.dedent(
    """
    import os, sys
    from xum.store.sessionlog import SessionLog

    def user(text):
        return {"message": {"role": "user", "content": [{"type": "text", "text": text}]}}

    log = SessionLog.open("ws-parent")
    log.append_many([("user_message", user("parent"))])  # the helper threads exist now
    pid = os.fork()
    if pid == 0:
        try:
            SessionLog.open("ws-child").append_many([("user_message", user("child"))])
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))
    """
)


def test_a_forked_child_publishes_with_helpers_of_its_own(xum_root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FORKED], env=os.environ.copy(), timeout=30, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()
    child = SessionLog.open("ws-child")
    assert [f.data["message"]["content"][0]["text"] for f in child.frames] == ["child"]
    raw = orjson.loads((child.directory / MANIFEST_NAME).read_bytes())
    assert raw["frames"] == 1


def test_sessions_appending_at_once_all_publish() -> None:
    """Appends of several sessions in flight together (the server's case) flush one after the
    other instead of through the helper; each still publishes every frame."""
    logs = [SessionLog.open(f"ws-many-{i}") for i in range(4)]
    start = threading.Barrier(len(logs))

    def work(log: SessionLog) -> None:
        start.wait()
        for i in range(20):
            log.append_many([(ev.USER_MESSAGE, user(f"{log.directory.name} {i}"))])

    threads = [threading.Thread(target=work, args=(log,)) for log in logs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for log in logs:
        again = SessionLog.open(log.directory.name)
        assert [f.seq for f in again.frames] == list(range(1, 21))
        assert leftovers(log.directory) == []
