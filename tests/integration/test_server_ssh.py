"""SSH workspaces through the server's REST API, against a real sshd on 127.0.0.1 (tests/sshd.py):
creation ships the checkout to the host, and the review routes run git there."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import GIT, make_repo
from tests.integration.server_support import (
    AUTH,
    MODEL,
    TestClient,
    server_client,
)
from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from xum.runtime.ssh import close_master


def create_ssh_workspace(client: TestClient, project: Path, host: str) -> dict[str, Any]:
    body = {"projectPath": str(project), "runtime": {"type": "ssh", "host": host}, "model": MODEL}
    res = client.post("/api/workspaces", json=body, headers=AUTH)
    assert res.status_code == 201, res.text
    data: dict[str, Any] = res.json()
    return data


def test_create_an_ssh_workspace_and_review_its_changes(
    tmp_path: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "app.py").write_text("not committed: stays on this machine\n")
    with server_client() as client:
        ws = create_ssh_workspace(client, repo, ssh_host.alias)
        assert ws["runtime"] == {"type": "ssh", "host": ssh_host.alias}
        remote = Path(ws["path"])
        assert remote.parent == ssh_host.remote_home / "xum" / "src" / "repo"
        assert (remote / "app.py").read_text() == "def greet():\n    return 'hi'\n"
        listed = client.get("/api/workspaces", headers=AUTH).json()["workspaces"]
        assert [w["id"] for w in listed] == [ws["id"]]

        clean = client.get(f"/api/workspaces/{ws['id']}/git/status", headers=AUTH)
        assert clean.status_code == 200, clean.text
        assert clean.json()["isGit"] and clean.json()["branch"] == ws["name"]
        assert clean.json()["entries"] == []

        # The agent commits on the host, then leaves an edit and a new file uncommitted.
        (remote / "app.py").write_text("def greet():\n    return 'hello'\n")
        subprocess.run([*GIT, "commit", "-qam", "say hello"], cwd=remote, check=True)
        (remote / "app.py").write_text("def greet():\n    return 'hello!'\n")
        (remote / "notes.txt").write_text("remote only\n")

        status = client.get(f"/api/workspaces/{ws['id']}/git/status", headers=AUTH).json()
        entries = {e["path"]: (e["index"], e["worktree"]) for e in status["entries"]}
        assert entries == {"app.py": (" ", "M"), "notes.txt": ("?", "?")}
        assert status["base"]["ref"] == "HEAD"  # the host's repository has no main branch

        diff = client.get(f"/api/workspaces/{ws['id']}/git/diff", headers=AUTH).json()
        assert diff["isGit"] and not diff["truncated"]
        assert "-    return 'hello'" in diff["diff"] and "+    return 'hello!'" in diff["diff"]
        assert "+remote only" in diff["diff"]
        files = {f["path"]: f for f in diff["files"]}
        assert files["app.py"]["additions"] == 1 and files["app.py"]["deletions"] == 1
        assert files["notes.txt"]["untracked"] is True and files["notes.txt"]["additions"] == 1
        one = client.get(
            f"/api/workspaces/{ws['id']}/git/diff", params={"path": "notes.txt"}, headers=AUTH
        ).json()
        assert [f["path"] for f in one["files"]] == ["notes.txt"] and "hello" not in one["diff"]

        gone = client.delete(f"/api/workspaces/{ws['id']}", params={"force": "true"}, headers=AUTH)
        assert gone.status_code in (200, 204), gone.text
        assert not remote.exists()


def test_review_routes_say_when_the_ssh_host_is_unreachable(
    tmp_path: Path,
    ssh_host: Sshd,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        ws = create_ssh_workspace(client, repo, ssh_host.alias)
        close_master(ssh_host.alias)
        config = tmp_path / "down_config"
        config.write_text(f"Host {ssh_host.alias}\n  HostName 127.0.0.1\n  Port 1\n")
        monkeypatch.setenv("XUM_SSH_CONFIG", str(config))
        for route in ("status", "diff"):
            res = client.get(f"/api/workspaces/{ws['id']}/git/{route}", headers=AUTH)
            assert res.status_code == 400, res.text
            error = res.json()["error"]
            assert error["code"] == "ssh_error" and ssh_host.alias in error["message"]
