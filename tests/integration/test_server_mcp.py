"""MCP settings over the API: the global and repo files edited in place (values write-only),
tool search, the Test button against real servers, and a workspace's overrides written and kept
out of git."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.integration.server_support import AUTH, create_workspace, server_client
from tests.mcp.support import server_command
from tests.support.hooks import make_project
from xum.workspaces.mcp.paths import global_path, local_path

USER_FILE = """// my MCP servers
{
  "servers": {
    // knowledge graph
    "memory": "npx -y @modelcontextprotocol/server-memory",
  },
}
"""


def test_servers_are_added_edited_and_removed_in_place(tmp_path: Path) -> None:
    global_path().parent.mkdir(parents=True, exist_ok=True)
    global_path().write_text(USER_FILE)
    with server_client() as client:
        listed = client.get("/api/settings/mcp", headers=AUTH).json()
        assert listed["toolSearch"] is True
        assert [s["name"] for s in listed["globalConfig"]["servers"]] == ["memory"]

        body = {"name": "gh", "command": "gh-mcp", "env": {"GH_TOKEN": "ghp_secret123"}}
        res = client.put("/api/settings/mcp/servers", json=body, headers=AUTH)
        assert res.status_code == 200, res.text
        row = next(s for s in res.json()["globalConfig"]["servers"] if s["name"] == "gh")
        assert row["envNames"] == ["GH_TOKEN"] and "ghp_secret123" not in res.text
        text = global_path().read_text()
        assert "// knowledge graph" in text and "// my MCP servers" in text

        # An edit that sends null for a value keeps it.
        body = {"name": "gh", "command": "gh-mcp --v2", "env": {"GH_TOKEN": None}}
        assert client.put("/api/settings/mcp/servers", json=body, headers=AUTH).status_code == 200
        assert "ghp_secret123" in global_path().read_text()
        assert "gh-mcp --v2" in global_path().read_text()

        bad = {"name": "x", "command": "a", "url": "http://h"}
        res = client.put("/api/settings/mcp/servers", json=bad, headers=AUTH)
        assert res.status_code == 422 and "exactly one" in res.text

        res = client.put("/api/settings/mcp/tool-search", json={"enabled": False}, headers=AUTH)
        assert res.json()["toolSearch"] is False

        res = client.delete("/api/settings/mcp/servers?name=memory", headers=AUTH)
        assert [s["name"] for s in res.json()["globalConfig"]["servers"]] == ["gh"]
        assert "server-memory" not in global_path().read_text()
        assert (
            client.delete("/api/settings/mcp/servers?name=memory", headers=AUTH).status_code == 404
        )


def test_unparseable_file_is_refused_untouched() -> None:
    global_path().parent.mkdir(parents=True, exist_ok=True)
    global_path().write_text('{"servers": {,}}')
    with server_client() as client:
        listed = client.get("/api/settings/mcp", headers=AUTH).json()
        assert listed["globalConfig"]["problems"][0].startswith(f"{global_path()}:1:")
        res = client.put(
            "/api/settings/mcp/servers", json={"name": "a", "command": "x"}, headers=AUTH
        )
        assert res.status_code == 422
    assert global_path().read_text() == '{"servers": {,}}'


def test_the_test_button_reports_tools_or_the_connection_error(tmp_path: Path) -> None:
    with server_client() as client:
        for name, command in (
            ("good", server_command()),
            ("bad", server_command("--exit-at-start")),
        ):
            body = {"name": name, "command": command}
            assert (
                client.put("/api/settings/mcp/servers", json=body, headers=AUTH).status_code == 200
            )
        good = client.post("/api/settings/mcp/test", json={"name": "good"}, headers=AUTH).json()
        assert good["ok"] and "echo" in [t["name"] for t in good["tools"]]
        assert good["prompts"] == ["greet"]
        bad = client.post("/api/settings/mcp/test", json={"name": "bad"}, headers=AUTH).json()
        assert not bad["ok"] and "refusing to start" in bad["error"]


def test_repo_servers_are_listed_but_tested_only_when_trusted(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    with server_client() as client:
        assert (
            client.post("/api/projects", json={"path": str(project)}, headers=AUTH).status_code
            == 201
        )
        body = {
            "name": "local",
            "scope": "repo",
            "project": str(project),
            "command": server_command(),
        }
        res = client.put("/api/settings/mcp/servers", json=body, headers=AUTH)
        assert res.status_code == 200, res.text
        repo = res.json()["repo"]
        assert repo["trusted"] is False and [s["name"] for s in repo["servers"]] == ["local"]
        assert (project / ".xum" / "mcp.jsonc").exists()
        test = {"name": "local", "scope": "repo", "project": str(project)}
        res = client.post("/api/settings/mcp/test", json=test, headers=AUTH)
        assert res.status_code == 409 and "not trusted" in res.text


def test_workspace_overrides_are_written_and_excluded_from_git(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    global_path().parent.mkdir(parents=True, exist_ok=True)
    global_path().write_text('{"servers": {"a": "x", "b": "y"}}')
    with server_client() as client:
        workspace = create_workspace(client, project)
        url = f"/api/workspaces/{workspace['id']}/mcp"
        listed = client.get(url, headers=AUTH).json()
        assert [(s["name"], s["enabled"]) for s in listed["servers"]] == [("a", True), ("b", True)]
        body = {"servers": {"a": {"enabled": False}, "b": {"allowedTools": ["one"]}}}
        res = client.put(url, json=body, headers=AUTH)
        assert res.status_code == 200, res.text
        rows = {s["name"]: s for s in res.json()["servers"]}
        assert rows["a"]["enabled"] is False and rows["b"]["allowedTools"] == ["one"]
    path = local_path(workspace["path"])
    assert path.exists()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "mcp.local.jsonc" not in status
    exclude = (project / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.xum/mcp.local.jsonc") == 1
