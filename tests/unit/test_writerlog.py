"""The server's session log writes the partial message on a worker thread: same file, same
contract (latest snapshot wins, `after_seq` as of the request, gone once deleted)."""

from __future__ import annotations

import time

import pytest

from xum.core.ids import workspace_id
from xum.store import writerlog
from xum.store.partial import read_partial
from xum.store.writerlog import WriterLog


def settle(log: WriterLog) -> None:
    deadline = time.monotonic() + 10
    while log.partial_busy:
        assert time.monotonic() < deadline, "the partial writer never settled"
        time.sleep(0.001)


def open_log() -> WriterLog:
    log = WriterLog.open(workspace_id(), purpose="test")
    assert isinstance(log, WriterLog)
    return log


def test_the_latest_snapshot_lands_with_the_seq_it_was_asked_at() -> None:
    log = open_log()
    with log.writing():
        log.append("user_message", {"message": {"role": "user", "content": []}})
        for i in range(50):
            log.write_partial({"text": "x" * i, "reasoning": "", "tool_calls": []})
        settle(log)
        partial = read_partial(log.directory)
        assert partial is not None
        assert partial.data["text"] == "x" * 49
        assert partial.after_seq == log.last_seq == 1
    log.close()


def test_a_delete_is_never_undone_by_a_write_asked_for_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(writerlog, "GATHER_S", 0.0)  # deletes land while writes run, too
    log = open_log()
    with log.writing():
        for i in range(300):
            log.write_partial({"text": f"step {i}", "reasoning": "", "tool_calls": []})
            if i % 3:
                time.sleep(0.0002 * (i % 5))  # sometimes while the write runs, sometimes after
            log.delete_partial()
            if i % 7 == 0:
                settle(log)
            busy = log.partial_busy  # when idle now, nothing can bring the file back
            assert busy or log.read_partial() is None
        settle(log)
        assert log.read_partial() is None
        log.write_partial({"text": "after", "reasoning": "", "tool_calls": []})
        settle(log)
        partial = log.read_partial()
        assert partial is not None and partial.data["text"] == "after"
    log.close()
