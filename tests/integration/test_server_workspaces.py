"""Projects and workspaces over the API, against real git repositories and a real registry."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.gitrepo import GIT, make_repo
from tests.integration.server_support import (
    AUTH,
    MODEL,
    create_workspace,
    server_client,
)
from xum.core.paths import secrets_path


def test_projects_add_list_and_errors(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    with server_client() as client:
        assert client.get("/api/projects", headers=AUTH).json() == {"projects": []}
        res = client.post("/api/projects", json={"path": str(repo / "sub")}, headers=AUTH)
        assert res.status_code == 201
        assert res.json()["path"] == str(repo)  # the git toplevel
        assert res.json()["isGit"] is True and res.json()["trusted"] is False
        again = client.post("/api/projects", json={"path": str(repo)}, headers=AUTH)
        assert again.status_code == 200
        listed = client.get("/api/projects", headers=AUTH).json()["projects"]
        assert [p["path"] for p in listed] == [str(repo)]
        for bad in ("relative/path", str(tmp_path / "missing"), str(repo / "app.py")):
            err = client.post("/api/projects", json={"path": bad}, headers=AUTH)
            assert err.status_code == 422, bad
            assert err.json()["error"]["code"] == "invalid_request"
        assert client.post("/api/projects", json={}, headers=AUTH).status_code == 422


def test_trust_is_recorded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        res = client.post(
            "/api/projects/trust", json={"path": str(repo), "trusted": True}, headers=AUTH
        )
        assert res.status_code == 200 and res.json()["trusted"] is True
        listed = client.get("/api/projects", headers=AUTH).json()["projects"]
        assert listed[0]["trusted"] is True
        res = client.post(
            "/api/projects/trust", json={"path": str(repo), "trusted": False}, headers=AUTH
        )
        assert res.json()["trusted"] is False


def test_project_secrets_are_write_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    value = "ghp_supersecretvalue123"
    with server_client() as client:
        client.post("/api/projects", json={"path": str(repo)}, headers=AUTH)
        res = client.put(
            "/api/projects/secrets",
            json={"path": str(repo), "name": "GH_TOKEN", "value": value},
            headers=AUTH,
        )
        assert res.status_code == 200 and res.json() == {"names": ["GH_TOKEN"]}
        listed = client.get("/api/projects/secrets", params={"path": str(repo)}, headers=AUTH)
        assert listed.json() == {"names": ["GH_TOKEN"]}
        assert value not in res.text + listed.text
        assert json.loads(secrets_path().read_text())[str(repo)]["GH_TOKEN"] == value
        bad = client.put(
            "/api/projects/secrets",
            json={"path": str(repo), "name": "1BAD NAME", "value": "x"},
            headers=AUTH,
        )
        assert bad.status_code == 422
        unknown = client.get("/api/projects/secrets", params={"path": "/nowhere"}, headers=AUTH)
        assert unknown.status_code == 404
        gone = client.delete(
            "/api/projects/secrets", params={"path": str(repo), "name": "GH_TOKEN"}, headers=AUTH
        )
        assert gone.json() == {"names": []}


def test_create_list_get_edit_workspaces(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        with client.websocket_connect("ws://localhost:3000/api/ws", headers=AUTH) as ws:
            assert ws.receive_json()["type"] == "hello"
            local = create_workspace(client, repo, "local", title="Fix the tests")
            assert ws.receive_json() == {"type": "workspaces-changed"}
        assert local["runtime"] == {"type": "local", "host": None}
        assert local["path"] == str(repo) and local["title"] == "Fix the tests"
        assert local["name"].startswith("fix-the-tests-")
        assert local["model"] == MODEL and local["agent"] == "exec"
        assert local["status"]["state"] == "idle"

        wt = create_workspace(client, repo, "worktree", name="feature x", thinking="high")
        assert wt["runtime"]["type"] == "worktree" and wt["branch"] == wt["name"]
        assert Path(wt["path"]).is_dir() and wt["thinking"] == "high"
        branches = subprocess.run(
            ["git", "branch", "--list", wt["name"]], cwd=repo, capture_output=True, text=True
        ).stdout
        assert wt["name"] in branches

        listed = client.get("/api/workspaces", headers=AUTH).json()["workspaces"]
        assert {w["id"] for w in listed} == {local["id"], wt["id"]}
        only = client.get("/api/workspaces", params={"project": "/elsewhere"}, headers=AUTH)
        assert only.json() == {"workspaces": []}

        got = client.get(f"/api/workspaces/{wt['id']}", headers=AUTH)
        assert got.status_code == 200 and got.json()["id"] == wt["id"]
        missing = client.get("/api/workspaces/nope123", headers=AUTH)
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        assert client.get("/api/workspaces/..%2f..%2fetc", headers=AUTH).status_code == 404

        edited = client.patch(
            f"/api/workspaces/{local['id']}",
            json={"title": "New title", "model": "opus", "thinking": "low"},
            headers=AUTH,
        )
        assert edited.status_code == 200
        assert edited.json()["title"] == "New title"
        assert edited.json()["model"] == "anthropic:claude-opus-5-5"
        assert edited.json()["thinking"] == "low"


def test_create_workspace_errors(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    plain = tmp_path / "plain"
    plain.mkdir()
    with server_client() as client:

        def create(**body: object) -> tuple[int, dict[str, object]]:
            res = client.post("/api/workspaces", json=body, headers=AUTH)
            return res.status_code, res.json()

        status, body = create(projectPath=str(repo), runtime={"type": "local"}, model="bad model:")
        assert status == 422 and "model" in str(body)
        status, body = create(projectPath=str(repo), runtime={"type": "local"}, thinking="lots")
        assert status == 422 and "thinking" in str(body)
        status, body = create(projectPath=str(repo), runtime={"type": "docker"})
        assert status == 422
        status, body = create(
            projectPath=str(repo), runtime={"type": "ssh", "host": "nohost.invalid"}
        )
        assert status == 400 and "nohost.invalid" in str(body)  # ssh itself could not connect
        status, body = create(projectPath=str(repo), runtime={"type": "ssh"})
        assert status == 422
        status, body = create(projectPath=str(repo), runtime={"type": "ssh", "host": "-oProxy=x"})
        assert status == 422
        status, body = create(projectPath=str(plain), runtime={"type": "worktree"})
        assert status == 400 and "git" in body["error"]["message"]  # type: ignore[index]
        assert client.get("/api/workspaces", headers=AUTH).json() == {"workspaces": []}


def test_read_marker_moves_forward_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        ws = create_workspace(client, repo)
        res = client.post(f"/api/workspaces/{ws['id']}/read", json={"seq": 5}, headers=AUTH)
        assert res.status_code == 200 and res.json()["readSeq"] == 5
        res = client.post(f"/api/workspaces/{ws['id']}/read", json={"seq": 2}, headers=AUTH)
        assert res.json()["readSeq"] == 5
        assert (
            client.post(
                f"/api/workspaces/{ws['id']}/read", json={"seq": -1}, headers=AUTH
            ).status_code
            == 422
        )


def test_git_status_and_diff_against_the_base(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        wt = create_workspace(client, repo, "worktree")
        path = Path(wt["path"])
        (path / "app.py").write_text("def greet():\n    return 'hello'\n")
        subprocess.run([*GIT, "commit", "-qam", "say hello"], cwd=path, check=True)
        (path / "new file.txt").write_text("brand new\n")
        (path / "app.py").write_text("def greet():\n    return 'hello!'\n")
        status = client.get(f"/api/workspaces/{wt['id']}/git/status", headers=AUTH).json()
        assert status["isGit"] and status["branch"] == wt["name"]
        assert status["base"]["ref"] == "main"
        assert status["ahead"] == 1 and status["behind"] == 0
        entries = {e["path"]: (e["index"], e["worktree"]) for e in status["entries"]}
        assert entries == {"app.py": (" ", "M"), "new file.txt": ("?", "?")}
        diff = client.get(f"/api/workspaces/{wt['id']}/git/diff", headers=AUTH).json()
        # Against the merge-base with main: the commit and the uncommitted edit together.
        assert "-    return 'hi'" in diff["diff"] and "+    return 'hello!'" in diff["diff"]
        assert "+brand new" in diff["diff"]
        files = {f["path"]: f for f in diff["files"]}
        assert files["app.py"]["additions"] == 1 and files["app.py"]["deletions"] == 1
        assert files["new file.txt"]["untracked"] is True
        one = client.get(
            f"/api/workspaces/{wt['id']}/git/diff", params={"path": "app.py"}, headers=AUTH
        ).json()
        assert "brand new" not in one["diff"] and [f["path"] for f in one["files"]] == ["app.py"]
        bad = client.get(
            f"/api/workspaces/{wt['id']}/git/diff", params={"path": "../x"}, headers=AUTH
        )
        assert bad.status_code == 422


def test_git_diff_is_bounded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        ws = create_workspace(client, repo)
        (repo / "big.txt").write_text("line of text\n" * 200_000)
        subprocess.run([*GIT, "add", "big.txt"], cwd=repo, check=True)
        diff = client.get(f"/api/workspaces/{ws['id']}/git/diff", headers=AUTH).json()
        assert diff["truncated"] is True
        assert len(diff["diff"].encode()) <= 512 * 1024


def test_git_routes_outside_git(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with server_client() as client:
        ws = create_workspace(client, plain)
        status = client.get(f"/api/workspaces/{ws['id']}/git/status", headers=AUTH).json()
        assert status["isGit"] is False and status["entries"] == []
        diff = client.get(f"/api/workspaces/{ws['id']}/git/diff", headers=AUTH).json()
        assert diff["isGit"] is False


def test_agents_route_lists_selectable_agents_and_edit_checks_the_id(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    agents = repo / ".xum" / "agents"
    agents.mkdir(parents=True)
    (agents / "review.md").write_text(
        "---\nname: Review\ndescription: Terse reviewer feedback\nbase: exec\n"
        "ui:\n  color: '#aa3366'\n---\nReview the change.\n"
    )
    (agents / "secret.md").write_text(
        "---\nname: Secret\nbase: exec\nui:\n  hidden: true\n---\nx\n"
    )
    (agents / "gone.md").write_text("---\nname: Gone\nbase: exec\ndisabled: true\n---\nx\n")
    with server_client() as client:
        ws = create_workspace(client, repo)
        res = client.get(f"/api/workspaces/{ws['id']}/agents", headers=AUTH)
        assert res.status_code == 200
        listed = {a["id"]: a for a in res.json()["agents"]}
        assert {"exec", "plan", "review"} <= listed.keys()
        assert "secret" not in listed and "gone" not in listed
        assert listed["review"] == {
            "id": "review",
            "name": "Review",
            "description": "Terse reviewer feedback",
            "color": "#aa3366",
            "scope": "project",
        }
        assert listed["exec"]["scope"] == "built-in"

        def edit(agent: str) -> Any:
            return client.patch(f"/api/workspaces/{ws['id']}", json={"agent": agent}, headers=AUTH)

        assert edit("review").json()["agent"] == "review"
        assert edit("secret").json()["agent"] == "secret"  # hidden: not offered, still allowed
        for bad in ("gone", "no-such-agent"):
            res = edit(bad)
            assert res.status_code == 422 and res.json()["error"]["code"] == "invalid_request"
            assert res.json()["error"]["message"].startswith("agent:")
        assert edit("Not An Id").status_code == 422
        assert client.get(f"/api/workspaces/{ws['id']}", headers=AUTH).json()["agent"] == "secret"
        assert client.get("/api/workspaces/nope123/agents", headers=AUTH).status_code == 404
