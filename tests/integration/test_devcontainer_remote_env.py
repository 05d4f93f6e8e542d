"""A Dev Container workspace's commands get the config's `remoteEnv` (resolved once after `up`,
`${containerEnv:...}` against the container, `${localEnv:...}` without xum's own secrets), and
with a non-root `remoteUser` "Share credentials" puts `.gitconfig` and the `gh` setup in that
user's home. Real Dev Container CLI and podman; the test image's `nobody` has the home
`/nonexistent`, which the config mounts from a directory here so the test can look into it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from xum.runtime.base import Runtime
from xum.store.secrets import set_project_secret
from xum.workspaces import lifecycle
from xum.workspaces.checkouts.factory import checkout_for

pytestmark = pytest.mark.slow

TOKEN = "ghp_devcontainerRemoteUser0123456789"
PROBE = (
    'echo "greeting=$GREETING"; echo "derived=$DERIVED"; echo "leak=${LEAK:-none}"; '
    'echo "user=$(id -u)"; echo "home=$HOME"; echo "name=$(git config --global user.name)"'
)


async def in_container(runtime: Runtime, script: str) -> list[str]:
    out = bytearray()
    done = await runtime.exec(script, env={}, timeout_s=60, on_output=out.extend)
    assert done.exit_code == 0, (done, bytes(out))
    return out.decode(errors="replace").splitlines()


def test_remote_env_and_credentials_for_a_non_root_remote_user(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    home = tmp_path / "nobody-home"
    home.mkdir()
    home.chmod(0o777)  # written by uid 65534 in the container
    config = devcontainer_json(
        container_engine.image,
        remoteUser="nobody",
        # No uid-matching image build; an explicit identity map keeps the CLI from asking
        # podman for `--userns=keep-id`, which podman refuses when run as root.
        updateRemoteUserUID=False,
        runArgs=["--uidmap=0:0:65537", "--gidmap=0:0:65537"],
        containerEnv={"FROM_CONTAINER": "container-side"},
        remoteEnv={
            "GREETING": "hello from remoteEnv",
            "DERIVED": "${containerEnv:FROM_CONTAINER}-remote",
            # xum's provider key is not in the CLI's environment: this resolves to nothing.
            "LEAK": "${localEnv:ANTHROPIC_API_KEY}",
        },
        mounts=[f"type=bind,source={home},target=/nonexistent"],
    )
    project = make_repo(tmp_path / "proj", {".devcontainer/devcontainer.json": config})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-xum-own-key-0123456789")
    (Path.home() / ".gitconfig").write_text("[user]\n\tname = Shared Person\n")
    set_project_secret(str(project), "GH_TOKEN", TOKEN)

    created = asyncio.run(
        lifecycle.create_workspace(
            project,
            "devcontainer",
            name_hint="remote",
            run_init=False,
            extra={"container_credentials": True},
        )
    )
    record = created.record
    try:
        assert record.extra["devcontainer_user"] == "nobody"
        lines = asyncio.run(in_container(created.runtime, PROBE))
        assert "greeting=hello from remoteEnv" in lines
        assert "derived=container-side-remote" in lines
        assert "leak=none" in lines
        assert "user=65534" in lines and "home=/nonexistent" in lines
        # The shared .gitconfig is the remote user's, in its own home (not root's).
        assert "name=Shared Person" in lines
        assert "Shared Person" in (home / ".gitconfig").read_text()
        assert (
            "auth setup-git token=set"
            in container_engine.run(
                "exec", str(record.extra["container"]), "cat", "/tmp/gh-calls"
            ).stdout
        )
        assert (
            container_engine.run(
                "exec", str(record.extra["container"]), "test", "-e", "/root/.gitconfig"
            ).returncode
            != 0
        )
        # Opening the workspace again (another process, a restart) keeps the remoteEnv.
        reopened = checkout_for(record).open_runtime()
        try:
            assert "greeting=hello from remoteEnv" in asyncio.run(in_container(reopened, PROBE))
        finally:
            asyncio.run(reopened.close())
        inspected = container_engine.run("inspect", str(record.extra["container"]))
        assert TOKEN not in inspected.stdout and os.environ["ANTHROPIC_API_KEY"] not in str(
            record.extra
        )
    finally:
        asyncio.run(created.runtime.close())
        asyncio.run(lifecycle.delete_workspace(record.id, force=True))
