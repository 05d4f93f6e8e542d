"""The server's workspace JSON carries the workspace's port block, and the remote client of the
host reads it back."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import make_repo
from tests.integration.server_support import AUTH, create_workspace, server_client
from xum.core.portblock import PortBlock
from xum.host.remote_wire import record_from_json
from xum.store.config import update_config


def test_workspaces_show_their_ports(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        one = create_workspace(client, repo)
        two = create_workspace(client, repo, "worktree")
        assert one["ports"] == {"first": 20000, "last": 20009, "count": 10}
        assert two["ports"] == {"first": 20010, "last": 20019, "count": 10}
        listed = client.get("/api/workspaces", headers=AUTH).json()["workspaces"]
        assert {w["id"]: w["ports"]["first"] for w in listed} == {
            one["id"]: 20000,
            two["id"]: 20010,
        }
        assert record_from_json(one).ports == PortBlock(20000, 10)
        # Switched off: the block stays on the record but is not offered, so none is shown.
        update_config(lambda config: config.__setitem__("ports", {"enabled": False}))
        shown = client.get(f"/api/workspaces/{one['id']}", headers=AUTH).json()
        assert shown["ports"] is None
        assert record_from_json(shown).ports is None
