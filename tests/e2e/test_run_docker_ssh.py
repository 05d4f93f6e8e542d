"""A Docker workspace on a remote container engine reached over SSH, the way users move their
workspaces to a bigger host: podman's API service runs behind the tests' loopback sshd, and the
CLI's own remote settings are all xum is given, either `CONTAINER_HOST=ssh://<user>@127.0.0.1:
<port><socket>` with `CONTAINER_SSHKEY` (the sshd's client key), or a podman connection (a
`service_destinations` entry of containers.conf, chosen with `CONTAINER_CONNECTION`). `xum run
-r "docker <image>"` runs its turn with the fake LLM: the bash step runs in a container of that
engine, and deleting the workspace removes it there.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.cli import env_for, events, run_xum
from tests.sshd import Sshd, sshd  # noqa: F401 - fixtures
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.podman_service import podman_api_service
from xum.store import registry
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.workspaces import lifecycle

pytestmark = pytest.mark.slow


def _accepted(server: Sshd) -> int:
    """How many logins the sshd has accepted so far (it logs each to sshd.log)."""
    text = (server.base / "sshd.log").read_text(errors="replace")
    return text.count("Accepted publickey")


def _local_state(engine: Engine, name: str) -> str | None:
    """The container's state as the local engine sees it (the remote settings left out)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTAINER_")}
    done = subprocess.run(
        [engine.cli, "inspect", "--format", "{{.State.Status}}", name],
        env={**env, **engine.env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 else None


@pytest.mark.repo(identity=True)
@pytest.mark.parametrize("how", ["container-host", "connection"])
def test_run_on_a_podman_engine_reached_over_ssh(
    how: str,
    fake_llm: FakeLLM,
    repo: Path,
    tmp_path: Path,
    sshd: Sshd,  # noqa: F811
    container_engine: Engine,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if container_engine.cli != "podman":
        pytest.skip("the remote engine here is podman's API service")
    # podman's ssh client checks the host key against ~/.ssh/known_hosts (the test's HOME).
    ssh_dir = Path(os.environ["HOME"], ".ssh")
    ssh_dir.mkdir(mode=0o700, exist_ok=True)
    (ssh_dir / "known_hosts").write_text((sshd.base / "known_hosts").read_text())
    fake_llm.script(
        fakellm.tool_call(
            "bash",
            {
                "script": '. /etc/os-release; echo "os=$ID"; pwd; git branch --show-current',
                "display_name": "where",
            },
        ),
        fakellm.text("ran on the remote engine"),
    )
    # The remote settings end with the block, so the engine fixture's cleanup sees the local one.
    with (
        podman_api_service(tmp_path / "podman.sock", container_engine.env) as socket,
        monkeypatch.context() as remote_env,
    ):
        remote = f"ssh://{getpass.getuser()}@127.0.0.1:{sshd.port}{socket}"
        key = sshd.base / "client_key"
        if how == "container-host":
            remote_env.setenv("CONTAINER_HOST", remote)
            remote_env.setenv("CONTAINER_SSHKEY", str(key))
        else:  # `podman system connection add` writes the same entry
            conf = tmp_path / "remote-containers.conf"
            local = Path(container_engine.env["CONTAINERS_CONF"]).read_text()
            conf.write_text(
                f'{local}\n[engine.service_destinations.bigbox]\nuri = "{remote}"\n'
                f'identity = "{key}"\n'
            )
            remote_env.setenv("CONTAINERS_CONF", str(conf))
            remote_env.setenv("CONTAINER_CONNECTION", "bigbox")
        logins = _accepted(sshd)
        result = run_xum(
            "run", "--json", "-r", f"docker {container_engine.image}", "work over there",
            cwd=repo, env=env_for(fake_llm),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        (tool,) = [e for e in events(result.stdout) if e["type"] == "tool-result"]
        assert not tool["is_error"], tool
        (record,) = registry.list_workspaces()
        assert tool["output"].split()[:3] == ["os=xum-test", "/src", record.name]
        assert "ran on the remote engine" in result.stdout
        # The engine was reached through the sshd (each CLI call is one login).
        assert _accepted(sshd) > logins
        name = record.extra["container"]
        # The service's storage is this machine's (rootful): the container is there.
        assert _local_state(container_engine, name) == "running"
        asyncio.run(lifecycle.delete_workspace(record.id, force=True))  # through the remote
        assert _local_state(container_engine, name) is None
