"""`may_exist` answers absence from a directory listing kept while the directory is unchanged:
every entry added, removed or renamed is seen by the next call, settled directory or not."""

from __future__ import annotations

import time
from pathlib import Path

from xum.core import direntries
from xum.core.direntries import may_exist


def settle(directory: Path) -> None:
    """Wait (bounded) until the directory's last change is out of the racy window and its
    listing is kept: the kept listing is what answers from then on."""
    deadline = time.monotonic() + 5
    while True:
        may_exist(str(directory / "probe-name"))
        st = directory.stat()
        kept = direntries._kept.get(directory.as_posix())
        if kept is not None and kept[0] == (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns):
            return
        assert time.monotonic() < deadline, "the listing was never kept"
        time.sleep(0.02)


def test_entries_added_removed_and_renamed_are_seen(tmp_path: Path) -> None:
    hooks = tmp_path / ".xum"
    hooks.mkdir()
    target = str(hooks / "tool_pre")
    settle(hooks)
    assert not may_exist(target)  # from the kept listing
    (hooks / "tool_pre").write_text("#!/bin/sh\n")
    assert may_exist(target)
    settle(hooks)
    assert may_exist(target)
    (hooks / "tool_pre").rename(hooks / "tool_post")
    assert not may_exist(target) and may_exist(str(hooks / "tool_post"))
    settle(hooks)
    assert not may_exist(target)
    (hooks / "tool_post").unlink()
    assert not may_exist(str(hooks / "tool_post"))


def test_a_missing_or_replaced_directory(tmp_path: Path) -> None:
    hooks = tmp_path / ".xum"
    assert not may_exist(str(hooks / "tool_env"))  # no directory: nothing in it
    hooks.mkdir()
    settle(hooks)
    assert not may_exist(str(hooks / "tool_env"))
    # A directory replaced by another holding the name (a checkout switched, a restore).
    other = tmp_path / "other"
    other.mkdir()
    (other / "tool_env").write_text("export A=1\n")
    settle(other)
    hooks.rmdir()
    other.rename(hooks)
    assert may_exist(str(hooks / "tool_env"))
    (tmp_path / "file").write_text("")
    assert not may_exist(str(tmp_path / "file" / "tool_env"))  # not a directory


def test_unchanged_times_on_a_new_entry_in_the_racy_window(tmp_path: Path) -> None:
    hooks = tmp_path / ".xum"
    hooks.mkdir()
    assert not may_exist(str(hooks / "tool_pre"))  # just made: listed, not kept
    (hooks / "tool_pre").write_text("")
    assert may_exist(str(hooks / "tool_pre"))
