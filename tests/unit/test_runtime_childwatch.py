"""Commands are reaped through pidfds on the event loop, not by a thread per child, and their
exit codes and signals still arrive exactly."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from xum.runtime.local import LocalRuntime

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="Python 3.12+ reaps children through pidfds itself"
)


async def test_many_commands_at_once_start_no_threads_and_keep_their_exit_codes(
    tmp_path: Path,
) -> None:
    runtime = LocalRuntime(str(tmp_path), str(tmp_path))
    # One command first: what xum starts once per process (the command helper's reader thread,
    # the executor thread that started it) is not what this test is about.
    assert (await runtime.exec("true", env={})).exit_code == 0
    threads_before = threading.active_count()
    seen_threads: list[int] = []

    async def watch() -> None:
        while True:
            seen_threads.append(threading.active_count())
            await asyncio.sleep(0.01)

    watcher = asyncio.create_task(watch())
    # All eight run at once: each checks in, then waits until the test has looked.
    started, release = tmp_path / "started", tmp_path / "release"
    started.mkdir()
    scripts = [
        f"touch {started}/{code}; while [ ! -e {release} ]; do sleep 0.01; done; exit {code}"
        for code in range(8)
    ] + ["kill -TERM $$"]
    runs = asyncio.gather(*(runtime.exec(s, env={}) for s in scripts))
    try:
        deadline = time.monotonic() + 20
        while len(list(started.iterdir())) < 8:
            assert time.monotonic() < deadline, "the commands never all started"
            await asyncio.sleep(0.01)
        threads_while_running = threading.active_count()
    finally:
        release.touch()
    results = await runs
    watcher.cancel()
    # asyncio's default watcher on 3.11 would have started one thread per running command.
    assert threads_while_running == threads_before
    assert max(seen_threads) == threads_before
    assert [r.exit_code for r in results[:8]] == list(range(8))
    assert results[8].exit_code is None and results[8].signal == signal.SIGTERM
