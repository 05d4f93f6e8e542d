"""An external agent in a Dev Container workspace: started in the container `devcontainer up`
made (the real Dev Container CLI and podman, the tests' own image), through the engine's
`exec -i --user <remoteUser>`, in the container's workspace folder, with what the container's
commands get (the probed login environment, the config's `remoteEnv`) under the definition's
`env`. Its `fs/*` and `terminal/*` requests are served in the container as well, and what it
writes is in the worktree on this machine (the container's bind mount). The image has no
python, so the agent is a few lines of bash (committed in the project, so it is in the
worktree)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.integration.server_support import AUTH, idle, server_client, wait_for
from tests.support.bash_acp_agent import BASH_AGENT
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from tests.support.external_agents import configure, final, run_xum, texts
from xum.store import registry
from xum.workspaces.safety.trust import set_trusted

# The test image is a bare root filesystem (no /etc/profile): the profile is the user's own.
POST_CREATE = 'mkdir -p "$HOME" && echo "export PROBED=from-profile" >> "$HOME/.profile"'

pytestmark = pytest.mark.slow


def project(tmp_path: Path, config: str) -> Path:
    repo = make_repo(
        tmp_path / "proj",
        {"agent.sh": BASH_AGENT, "app.py": "x = 1\n", ".devcontainer/devcontainer.json": config},
    )
    set_trusted(repo)
    return repo


def test_the_agent_runs_in_the_dev_container_with_its_environment(
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    config = devcontainer_json(
        container_engine.image,
        postCreateCommand=POST_CREATE,
        remoteEnv={"FROM_REMOTE": "remote-env", "AGENT_KEY": "the-configs"},
    )
    repo = project(tmp_path, config)
    # The definition's env wins over remoteEnv.
    configure(Path("/nowhere"), command="bash", args=["agent.sh"], env={"AGENT_KEY": "its-own"})
    code, events, err = run_xum(
        repo, "--runtime", "devcontainer", "--external-agent", "fake", "go", timeout=300
    )
    assert code == 0, err
    record = registry.get_workspace(final(events)["workspace_id"])
    assert record is not None and record.runtime == "devcontainer"
    folder = str(record.extra["devcontainer_folder"])
    assert folder != record.path  # the default: /workspaces/<name> in the container
    (said,) = texts(events)
    assert said == (
        f"user=0 cwd={folder} remote=remote-env probed=from-profile key=its-own "
        f"terminal={folder} terminal-user=0 read=#!/bin/bash"
    )
    # Both writes are in the worktree here: the container's workspace folder is its mount.
    worktree = Path(record.path)
    assert (worktree / "from-agent.txt").read_text() == "made in the dev container\n"
    assert (worktree / "served.txt").read_text() == "through xum\n"
    # The next message starts it again in the same container.
    code, again, err = run_xum(repo, "--workspace", record.id, "again", timeout=300)
    assert code == 0, err
    assert texts(again) == [said]


def test_the_agent_runs_as_the_remote_user_and_read_only_is_refused(
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    home = tmp_path / "nobody-home"
    home.mkdir()
    home.chmod(0o777)  # written by uid 65534 in the container
    config = devcontainer_json(
        container_engine.image,
        remoteUser="nobody",
        # As in test_devcontainer_remote_env: no uid-matching build, an explicit identity map.
        updateRemoteUserUID=False,
        runArgs=["--uidmap=0:0:65537", "--gidmap=0:0:65537"],
        mounts=[f"type=bind,source={home},target=/nonexistent"],
        postCreateCommand=POST_CREATE,
    )
    repo = project(tmp_path, config)
    configure(Path("/nowhere"), command="bash", args=["agent.sh"])
    code, events, _err = run_xum(
        repo,
        "--runtime",
        "devcontainer",
        "--permissions",
        "read-only",
        "--external-agent",
        "fake",
        "go",
        timeout=300,
    )
    assert code == 1
    end = next(e for e in events if e["type"] == "turn-end")
    assert "cannot keep an agent read-only" in end["error"]["message"]
    record = registry.get_workspace(final(events)["workspace_id"])
    assert record is not None
    assert not (Path(record.path) / "served.txt").exists()

    code, events, err = run_xum(
        repo, "--workspace", record.id, "--permissions", "auto", "go", timeout=300
    )
    assert code == 0, (err, json.dumps(events)[-2000:])
    folder = str(record.extra["devcontainer_folder"])
    (said,) = texts(events)
    # The remote user (nobody, uid 65534) runs the agent and its terminals; it cannot write the
    # worktree (owned by root here), so neither write is there.
    assert said == (
        f"user=65534 cwd={folder} remote=none probed=from-profile key=none "
        f"terminal={folder} terminal-user=65534 read=#!/bin/bash"
    )
    assert not (Path(record.path) / "from-agent.txt").exists()


def test_the_api_creates_one_and_its_turn_runs_in_the_container(
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    repo = project(tmp_path, devcontainer_json(container_engine.image))
    configure(Path("/nowhere"), command="bash", args=["agent.sh"])
    with server_client() as client:
        body = {"projectPath": str(repo), "runtime": {"type": "devcontainer"}}
        res = client.post("/api/workspaces", json={**body, "externalAgent": "fake"}, headers=AUTH)
        assert res.status_code == 201, res.text
        wid = res.json()["id"]
        assert res.json()["externalAgent"] == "fake"
        sent = client.post(f"/api/workspaces/{wid}/messages", json={"text": "hi"}, headers=AUTH)
        assert sent.status_code == 202, sent.text
        wait_for(lambda: idle(client, wid), timeout=120)
        history = client.get(f"/api/workspaces/{wid}/history", headers=AUTH).json()["events"]
        record = registry.get_workspace(wid)
        assert record is not None
        folder = str(record.extra["devcontainer_folder"])
        said = [e["text"] for e in history if e["type"] == "assistant-message"]
        assert len(said) == 1 and said[0].startswith(f"user=0 cwd={folder} "), said
        assert (Path(record.path) / "served.txt").read_text() == "through xum\n"
