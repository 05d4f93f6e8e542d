"""Finding the server of this root from its `server.lock` (a dead one is none), and whether a
front-end attaches to one."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest

from xum.core.errors import UsageError
from xum.core.paths import ensure_root, server_lock_path
from xum.host.server_target import RunningServer, ServerTarget, attach_target, find_server


def write_lock(**fields: object) -> None:
    ensure_root()
    server_lock_path().write_bytes(orjson.dumps(fields))


def test_no_lock_no_server() -> None:
    assert find_server() is None


def test_a_live_lock_names_the_server() -> None:
    write_lock(url="http://127.0.0.1:9/", token="t", pid=os.getpid())
    assert find_server() == RunningServer("http://127.0.0.1:9", "t", os.getpid())


@pytest.mark.parametrize(
    "fields",
    [
        {"url": "http://127.0.0.1:9", "token": "t", "pid": "not a pid"},
        {"url": "file:///etc/passwd", "token": "t", "pid": os.getpid()},
        {"token": "t", "pid": os.getpid()},
    ],
)
def test_a_damaged_lock_is_no_server(fields: dict[str, object]) -> None:
    write_lock(**fields)
    assert find_server() is None


def test_a_lock_a_dead_process_left_is_no_server() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    write_lock(url="http://127.0.0.1:9", token=None, pid=int(done.stdout))
    assert find_server() is None


def test_attach_only_to_a_named_or_running_server() -> None:
    assert attach_target(None, None, env={}) is None  # no lock, no URL: run sessions here
    write_lock(url="http://127.0.0.1:9/", token="from-lock", pid=os.getpid())
    assert attach_target(None, None, env={}) == ServerTarget("http://127.0.0.1:9", "from-lock")
    named = attach_target(None, None, env={"XUM_SERVER_URL": "http://10.0.0.1:8765"})
    assert named is not None and named.url == "http://10.0.0.1:8765"
    with pytest.raises(UsageError):
        attach_target("ftp://example.com", None, env={})
