"""Dev Container workspaces through the lifecycle API, with the real Dev Container CLI and
podman: a config that mounts the worktree at its own path, the init hook (its working directory
is the host worktree, translated into the container), rename (the worktree stays where the
container mounts it), fork (a worktree and container of its own, from the source's HEAD)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from tests.support.hooks import sh_git
from xum.runtime.base import Runtime
from xum.runtime.devcontainer import DevcontainerRuntime
from xum.workspaces import lifecycle
from xum.workspaces.checkouts.factory import checkout_for
from xum.workspaces.safety.trust import set_trusted

pytestmark = pytest.mark.slow

INIT = '#!/bin/sh\necho "init on $XUM_RUNTIME in $PWD"\n'


async def in_container(runtime: Runtime, script: str) -> str:
    out = bytearray()
    done = await runtime.exec(script, env={}, timeout_s=60, on_output=out.extend)
    assert done.exit_code == 0, (done, bytes(out))
    return out.decode(errors="replace")


async def test_same_path_config_init_hook_rename_and_fork(
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    same_path = devcontainer_json(
        container_engine.image,
        workspaceFolder="${localWorkspaceFolder}",
        workspaceMount="source=${localWorkspaceFolder},target=${localWorkspaceFolder},type=bind",
    )
    project = make_repo(
        tmp_path / "proj",
        {
            "app.py": "print('hi')\n",
            ".devcontainer.json": same_path,
            ".xum/init": INIT,
        },
    )
    (project / ".xum" / "init").chmod(0o755)
    # Committed executable: the worktree is made from the commit.
    sh_git(project, "add", ".")
    sh_git(project, "commit", "-qm", "init hook executable")
    set_trusted(project)
    created = await lifecycle.create_workspace(project, "devcontainer", name_hint="same")
    record = created.record
    try:
        assert record.extra["devcontainer_folder"] == record.path  # the same path inside
        assert created.init is not None
        lines = [line async for line in created.init.stream()]
        assert await created.init.wait() == "succeeded"
        assert lines == [f"init on devcontainer in {record.path}"]
        runtime = created.runtime
        assert isinstance(runtime, DevcontainerRuntime)
        assert await in_container(runtime, "pwd") == f"{record.path}\n"

        renamed = await lifecycle.rename_workspace(record.id, "renamed")
        assert renamed.path == record.path and renamed.branch == "renamed"
        reopened = checkout_for(renamed).open_runtime()
        try:
            assert await in_container(reopened, "cat app.py") == "print('hi')\n"
        finally:
            await reopened.close()

        fork = await lifecycle.fork_workspace(record.id, "forked")
        try:
            forked = fork.record
            assert forked.runtime == "devcontainer" and forked.branch == "forked"
            assert forked.path != record.path and Path(forked.path, "app.py").is_file()
            assert forked.extra["container"] != record.extra["container"]
            assert container_engine.state(str(forked.extra["container"])) == "running"
            assert await in_container(fork.runtime, "pwd") == f"{forked.path}\n"
        finally:
            await fork.runtime.close()
            await lifecycle.delete_workspace(forked.id, force=True)
        assert container_engine.state(str(forked.extra["container"])) is None
        assert not Path(forked.path).exists()
    finally:
        await created.runtime.close()
        await lifecycle.delete_workspace(record.id, force=True)
    assert container_engine.state(str(record.extra["container"])) is None
