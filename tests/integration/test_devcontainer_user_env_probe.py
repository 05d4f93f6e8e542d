"""A Dev Container's `userEnvProbe`: after `up`, the remote user's shell environment is probed once
and every command gets it, under the config's `remoteEnv` (which wins). The config's
`postCreateCommand` writes the user's `~/.profile` (which also prints a greeting, which must not
spoil the probe); with the default probe (`loginInteractiveShell`) a command sees the
profile's variable, with `"userEnvProbe": "none"` it does not. Real Dev Container CLI and
podman."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from xum.workspaces import lifecycle

pytestmark = pytest.mark.slow

# The test image is a bare root filesystem (no /etc/profile): the profile is root's own.
POST_CREATE = (
    'mkdir -p "$HOME" && printf "%s\\n" "echo hello-from-profile" '
    '"export PROBED=from-profile" "export BOTH=from-profile" >> "$HOME/.profile"'
)
LOOK = 'echo "probed=${PROBED:-unset}"; echo "both=${BOTH:-unset}"'


def seen(
    image: str, tmp_path: Path, name: str, **fields: object
) -> tuple[list[str], dict[str, object]]:
    """Make a Dev Container workspace of a config of `image` with `fields`, run LOOK in it,
    delete it; the command's output lines and the record's `extra`."""
    config = devcontainer_json(
        image,
        postCreateCommand=POST_CREATE,
        remoteEnv={"BOTH": "from-remote-env"},
        **fields,
    )
    project = make_repo(tmp_path / name, {".devcontainer/devcontainer.json": config})

    async def scenario() -> tuple[list[str], dict[str, object]]:
        created = await lifecycle.create_workspace(
            project, "devcontainer", name_hint=name, run_init=False
        )
        try:
            out = bytearray()
            done = await created.runtime.exec(LOOK, env={}, timeout_s=60, on_output=out.extend)
            assert done.exit_code == 0, bytes(out)
            return out.decode(errors="replace").splitlines(), dict(created.record.extra)
        finally:
            await created.runtime.close()
            await lifecycle.delete_workspace(created.record.id, force=True, branch="always")

    return asyncio.run(scenario())


def test_the_user_env_probe_gives_commands_the_login_shells_variables(
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    image = container_engine.image
    lines, extra = seen(image, tmp_path, "probed")
    assert lines == ["probed=from-profile", "both=from-remote-env"]
    probed = extra["devcontainer_probe_env"]
    assert isinstance(probed, dict) and probed["PROBED"] == "from-profile"
    assert "PWD" not in probed and "SHLVL" not in probed

    lines, extra = seen(image, tmp_path, "unprobed", userEnvProbe="none")
    assert lines == ["probed=unset", "both=from-remote-env"]
    assert extra["devcontainer_probe_env"] == {}
