"""Docker workspaces through the server's REST API, against a real container engine (podman
here): the create route makes the container, the review routes run git in it, delete removes
it; a Docker runtime without an image is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.integration.server_support import AUTH, MODEL, server_client
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from xum.store import registry

pytestmark = pytest.mark.slow


def test_create_review_and_delete_a_docker_workspace(
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        refused = client.post(
            "/api/workspaces",
            json={"projectPath": str(repo), "runtime": {"type": "docker"}, "model": MODEL},
            headers=AUTH,
        )
        assert refused.status_code == 422 and "image" in refused.text
        body = {
            "projectPath": str(repo),
            "runtime": {
                "type": "docker",
                "image": container_engine.image,
                "shareCredentials": True,
            },
            "model": MODEL,
        }
        res = client.post("/api/workspaces", json=body, headers=AUTH)
        assert res.status_code == 201, res.text
        ws = res.json()
        assert ws["runtime"] == {"type": "docker", "host": None, "image": container_engine.image}
        assert ws["path"] == "/src" and ws["branch"] == ws["name"]
        name = f"xum-{ws['id']}"
        record = registry.get_workspace(ws["id"])
        assert record is not None and record.extra["container_credentials"] is True
        assert container_engine.state(name) == "running"

        done = container_engine.run("exec", name, "sh", "-c", "echo more >> /src/app.py")
        assert done.returncode == 0, done.stderr
        status = client.get(f"/api/workspaces/{ws['id']}/git/status", headers=AUTH).json()
        assert status["branch"] == ws["name"]
        assert [(e["path"], e["worktree"]) for e in status["entries"]] == [("app.py", "M")]
        diff = client.get(f"/api/workspaces/{ws['id']}/git/diff", headers=AUTH).json()
        assert "+more" in diff["diff"]

        preview = client.get(f"/api/workspaces/{ws['id']}/deletion", headers=AUTH)
        assert preview.status_code == 200, preview.text
        assert "container" in [item["kind"] for item in preview.json()["removes"]]
        gone = client.delete(f"/api/workspaces/{ws['id']}", params={"force": "true"}, headers=AUTH)
        assert gone.status_code in (200, 204), gone.text
        assert container_engine.state(name) is None
