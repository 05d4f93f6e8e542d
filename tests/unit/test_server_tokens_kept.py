"""The server tokens on disk are kept between calls and checked by a stat, yet a token replaced in
any way is seen on the next call: rewritten in place with the same size and its modification time
put back (the change time still moves), replaced by a rename, removed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from xum.core.ownsecrets import STORED_TOKEN_SECRET, server_tokens_on_disk
from xum.core.paths import server_token_path

FIRST = "first-token-0123456789abcdefghijklmnopq"
SECOND = "other-token-0123456789abcdefghijklmnopq"  # the same length


def settle(path: Path) -> None:
    """Date the file's modification back, so it counts as settled (not racily clean) and is
    kept; its change time is now, which the check also covers."""
    old = time.time_ns() - 10_000_000_000
    os.utime(path, ns=(old, old))


def wait_settled(path: Path) -> None:
    """Bounded poll until the file's change time is older than the racy window."""
    deadline = time.monotonic() + 5
    while time.time_ns() - path.stat().st_ctime_ns <= 200_000_000:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_kept_token_is_replaced_by_any_change_of_the_file() -> None:
    path = server_token_path()
    path.parent.mkdir(parents=True)
    path.write_text(FIRST)
    settle(path)
    wait_settled(path)
    assert server_tokens_on_disk() == {STORED_TOKEN_SECRET: FIRST}
    assert server_tokens_on_disk() == {STORED_TOKEN_SECRET: FIRST}  # from the kept copy

    # In place, same size, same modification time: the change time tells.
    before = path.stat()
    with open(path, "r+") as file:
        file.write(SECOND)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    assert server_tokens_on_disk() == {STORED_TOKEN_SECRET: SECOND}

    # Replaced by a rename (a new inode).
    wait_settled(path)
    assert server_tokens_on_disk() == {STORED_TOKEN_SECRET: SECOND}
    temp = path.with_name("tmp")
    temp.write_text(FIRST)
    settle(temp)
    os.replace(temp, path)
    assert server_tokens_on_disk() == {STORED_TOKEN_SECRET: FIRST}

    path.unlink()
    assert server_tokens_on_disk() == {}
