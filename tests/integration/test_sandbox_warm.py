"""The session sandbox starts with the session's turn, ahead of its first command
(`SandboxMiddleware.warm`): the first command then runs in the sandbox already started, not in a
new one, and a session whose settings keep commands out of the sandbox starts none.

Through the real middleware, bash tool and bubblewrap, like tests/integration/test_sandbox_session.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.sandbox_rig import Rig, make_rig, set_sandbox
from xum.engine import events as E
from xum.runtime.sandbox import local_backend

pytestmark = pytest.mark.skipif(
    not local_backend().ok, reason=f"no working bubblewrap here: {local_backend().detail}"
)


@pytest.fixture
async def parts(tmp_path: Path) -> AsyncIterator[Rig]:
    # A new workspace: no `.xum` yet (warming makes the held mount point, as a command does).
    rig = make_rig(make_repo(tmp_path / "repo"))
    yield rig
    await rig.middleware.aclose()


async def test_the_first_command_runs_in_the_sandbox_started_ahead_of_it(parts: Rig) -> None:
    set_sandbox(mode="workspace-write")
    task = parts.middleware.warm(parts.ctx)
    assert task is not None
    await task
    box = parts.middleware.session_sandbox
    assert box is not None and box.pid is not None  # running before any command
    started = box.pid
    assert parts.middleware.warm(parts.ctx) is task  # once per session
    first = await parts.bash("readlink /proc/self/ns/mnt")
    assert not first.is_error, first.output
    assert box.pid == started  # the command took the sandbox started for it
    # Still the sandbox's boundaries: `.xum` is held read-only, the workspace is writable.
    second = await parts.bash("touch written && touch .xum/planted")
    assert second.is_error and "Read-only file system" in second.output
    assert (parts.workspace / "written").exists()
    assert box.pid == started
    assert not [e for e in parts.events if isinstance(e, E.Advisory)]


async def test_no_sandbox_starts_when_commands_run_without_one(parts: Rig) -> None:
    set_sandbox(mode="off")
    task = parts.middleware.warm(parts.ctx)
    assert task is not None
    await task
    assert parts.middleware.session_sandbox is None
    result = await parts.bash("echo plain")
    assert not result.is_error and parts.middleware.session_sandbox is None


async def test_a_sandbox_started_ahead_ends_with_the_session(parts: Rig) -> None:
    set_sandbox(mode="workspace-write")
    task = parts.middleware.warm(parts.ctx)
    assert task is not None
    await task
    box = parts.middleware.session_sandbox
    assert box is not None and box.pid is not None
    await parts.middleware.aclose()
    assert box.pid is None
