""" "Share credentials" on a Dev Container workspace, with the real Dev Container CLI and podman:
only when asked, the SSH agent's socket is mounted (`devcontainer up --mount`) and commands get
`SSH_AUTH_SOCK`, ~/.gitconfig is copied in and `gh auth setup-git` runs with the project's
GH_TOKEN (the test image's `gh` notes its calls); the token never shows in the container's
configuration."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from xum.runtime.base import Runtime
from xum.store.secrets import set_project_secret
from xum.workspaces import lifecycle

pytestmark = pytest.mark.slow

TOKEN = "ghp_sharedDevcontainerToken0123456789"
PROBE = (
    'cat "$HOME/.gitconfig" 2>/dev/null || echo no-gitconfig; '
    'echo "sock=${SSH_AUTH_SOCK:-none}"; '
    "if command -v ssh-add >/dev/null; then ssh-add -l >/dev/null 2>&1; echo agent=$?; fi; "
    "cat /tmp/gh-calls 2>/dev/null || echo no-gh-calls"
)


@pytest.fixture
def agent_socket(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A real ssh-agent of this test's own, named by SSH_AUTH_SOCK."""
    if shutil.which("ssh-agent") is None:
        pytest.skip("ssh-agent is not installed (openssh-client)")
    directory = tempfile.mkdtemp(prefix="xum-agent-", dir="/tmp")  # a short socket path
    socket = os.path.join(directory, "agent.sock")
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", socket], stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):  # bounded poll: the socket appears when the agent listens
            if os.path.exists(socket) or agent.poll() is not None:
                break
            time.sleep(0.02)
        assert os.path.exists(socket), "ssh-agent did not start"
        monkeypatch.setenv("SSH_AUTH_SOCK", socket)
        yield socket
    finally:
        agent.terminate()
        agent.wait(timeout=20)
        shutil.rmtree(directory, ignore_errors=True)


async def in_container(runtime: Runtime, script: str) -> str:
    out = bytearray()
    await runtime.exec(script, env={}, on_output=out.extend)
    await runtime.close()
    return out.decode(errors="replace")


def test_credentials_go_in_only_when_asked(
    tmp_path: Path,
    agent_socket: str,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    project = make_repo(
        tmp_path / "proj",
        {"app.py": "x = 1\n", ".devcontainer.json": devcontainer_json(container_engine.image)},
    )
    (Path.home() / ".gitconfig").write_text("[user]\n\tname = Shared Person\n")
    set_project_secret(str(project), "GH_TOKEN", TOKEN)

    plain = asyncio.run(
        lifecycle.create_workspace(project, "devcontainer", name_hint="plain", run_init=False)
    )
    seen = asyncio.run(in_container(plain.runtime, PROBE))
    assert "no-gitconfig" in seen and "sock=none" in seen and "no-gh-calls" in seen, seen
    assert plain.record.extra["container_credentials"] is False

    shared = asyncio.run(
        lifecycle.create_workspace(
            project,
            "devcontainer",
            name_hint="shared",
            run_init=False,
            extra={"container_credentials": True},
        )
    )
    seen = asyncio.run(in_container(shared.runtime, PROBE))
    assert "name = Shared Person" in seen
    assert "sock=/run/xum-ssh-agent.sock" in seen
    if shutil.which("ssh-add"):
        assert "agent=1" in seen, seen  # 1: the agent answered and holds no key (2: no agent)
    assert "auth setup-git token=set" in seen
    inspected = container_engine.run("inspect", str(shared.record.extra["container"]))
    assert inspected.returncode == 0 and TOKEN not in inspected.stdout
    assert shared.record.extra["container_credentials"] is True
    for created in (plain, shared):
        asyncio.run(lifecycle.delete_workspace(created.record.id, force=True))
