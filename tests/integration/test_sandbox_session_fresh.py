"""A new workspace (no `.xum` directory yet) keeps one session sandbox from its first command:
the empty `.xum` the sandbox holds read-only is there before the first bwrap starts, so the
second command sees the same boundaries and is not given a new sandbox. Inside, `.xum` stays
read-only.

Through the real middleware, bash tool and bubblewrap, like tests/integration/test_sandbox_session.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.sandbox_rig import make_rig, set_sandbox
from xum.runtime.sandbox import local_backend

pytestmark = pytest.mark.skipif(
    not local_backend().ok, reason=f"no working bubblewrap here: {local_backend().detail}"
)


async def test_a_new_workspace_keeps_its_first_sandbox(tmp_path: Path) -> None:
    set_sandbox(mode="workspace-write")
    workspace = make_repo(tmp_path / "repo")
    assert not (workspace / ".xum").exists()
    rig = make_rig(workspace)
    middleware = rig.middleware
    try:
        first = await rig.bash("readlink /proc/self/ns/mnt")
        box = middleware.session_sandbox
        pid = None if box is None else box.pid
        second = await rig.bash("readlink /proc/self/ns/mnt; touch .xum/planted")
        assert not first.is_error, first.output
        assert pid is not None
        box = middleware.session_sandbox
        assert box is not None and box.pid == pid  # the same sandbox served both
        assert first.output.split()[0] == second.output.split()[0]  # the same namespace
        # `.xum` is still held read-only: nothing can be planted in it.
        assert second.is_error and "Read-only file system" in second.output
        assert (workspace / ".xum").is_dir() and not any((workspace / ".xum").iterdir())
    finally:
        await middleware.aclose()
