"""A full disk during an append: a clear error, and the log stays intact.

The session logs live on a small tmpfs mounted for the test (root only; without the right to
mount, the tests skip and say why). The disk is filled by the test itself, then the log is
appended to until the disk refuses; afterwards the log reopens with every frame published before
the failure, and none of the refused one. Through the engine, a turn whose reply cannot be
committed ends in an error that names the cause, and once space is back the next turn works.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.engine import assert_valid_log, engine_session
from xum.core.errors import StoreError
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.llm.types import text_message
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)
SIZE = "512k"


@pytest.fixture
def small_disk(tmp_path: Path, xum_root: Path) -> Iterator[Path]:
    """`$XUM_ROOT/sessions` on a 512 KiB tmpfs."""
    sessions = xum_root / "sessions"
    sessions.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "tmpfs", str(sessions)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip()}): needs root")
    try:
        yield sessions
    finally:
        subprocess.run(["umount", "-l", str(sessions)], check=False)


def fill(directory: Path, leave: int) -> Path:
    """Fill the file system under `directory` until at most `leave` bytes are free."""
    ballast = directory / "ballast"
    with open(ballast, "wb") as out:
        while True:
            free = os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize
            if free <= leave:
                break
            try:
                out.write(b"\0" * min(64 * 1024, free - leave))
                out.flush()
            except OSError:
                break
    return ballast


def user(tag: str, size: int) -> tuple[str, dict[str, object]]:
    return (ev.USER_MESSAGE, {"message": text_message("user", f"{tag} " + "x" * size)})


def test_an_append_that_does_not_fit_is_refused_and_the_log_stays_whole(small_disk: Path) -> None:
    log = SessionLog.open("ws-full")
    published = [f.seq for f in log.append_many([user(f"before-{i}", 100) for i in range(5)])]
    fill(small_disk, leave=16 * 1024)
    refused = 0
    for round_no in range(200):
        try:
            frames = log.append_many([user(f"round-{round_no}", 3000)])
            published += [f.seq for f in frames]
        except StoreError as exc:
            assert "No space left on device" in exc.message
            assert exc.hint and "free disk space" in exc.hint
            refused += 1
            if refused >= 3:  # and it keeps refusing cleanly, without damage
                break
    assert refused >= 3, "the disk never filled up"
    log.close()
    reopened = SessionLog.open("ws-full")
    assert [f.seq for f in reopened.frames] == published
    assert not [f for f in reopened.frames if f.damaged]
    reopened.close()
    (small_disk / "ballast").unlink()
    again = SessionLog.open("ws-full")
    assert again.append_many([user("after", 10)])[0].seq == published[-1] + 1
    again.close()
    assert_valid_log("ws-full")


async def test_a_turn_that_cannot_be_committed_ends_in_a_clear_error(
    small_disk: Path, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}
    route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})
    client = open_client(route.endpoint, retry=RetryPolicy(max_retries=0))
    session = engine_session(tmp_path, route, client, ws_id="ws-turn", name="full")
    try:
        fake_llm.script(fakellm.text("short"), fakellm.text("y" * 200_000), fakellm.text("fine"))
        assert (await session.run_turn("first")).reason == "completed"
        ballast = fill(small_disk, leave=64 * 1024)
        failed = await asyncio.wait_for(session.run_turn("a long one"), 30)
        assert failed.reason == "error"
        assert failed.error and "No space left on device" in failed.error["message"]
        ballast.unlink()
        ok = await asyncio.wait_for(session.run_turn("again"), 30)
        assert ok.reason == "completed" and ok.text == "fine"
    finally:
        await session.aclose()
        await client.aclose()
    assert_valid_log("ws-turn")
