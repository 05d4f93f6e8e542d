"""Dev Container workspaces through the server's REST API: the project's configs are listed (the
browser offers the runtime only when there is one), the create route starts the named config's
container with the real Dev Container CLI and podman, delete removes container and worktree."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.integration.server_support import AUTH, MODEL, server_client
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from xum.store import registry


def test_the_configs_route_lists_what_the_project_has(tmp_path: Path) -> None:
    plain = make_repo(tmp_path / "plain")
    named = make_repo(
        tmp_path / "named",
        {
            ".devcontainer.json": "{}\n",
            ".devcontainer/api/devcontainer.json": "{}\n",
        },
    )
    with server_client() as client:
        for project in (plain, named):
            added = client.post("/api/projects", json={"path": str(project)}, headers=AUTH)
            assert added.status_code in (200, 201), added.text
        none = client.get("/api/projects/devcontainers", params={"path": str(plain)}, headers=AUTH)
        assert none.status_code == 200 and none.json() == {"configs": []}
        some = client.get("/api/projects/devcontainers", params={"path": str(named)}, headers=AUTH)
        assert some.json() == {
            "configs": [
                {"name": None, "path": ".devcontainer.json"},
                {"name": "api", "path": ".devcontainer/api/devcontainer.json"},
            ]
        }
        unknown = client.get(
            "/api/projects/devcontainers", params={"path": str(tmp_path / "nope")}, headers=AUTH
        )
        assert unknown.status_code == 404


@pytest.mark.slow
def test_create_and_delete_a_dev_container_workspace_of_a_named_config(
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "app.py": "print('hi')\n",
            ".devcontainer/tools/devcontainer.json": devcontainer_json(container_engine.image),
        },
    )
    with server_client() as client:
        body = {
            "projectPath": str(repo),
            "runtime": {"type": "devcontainer", "config": "tools"},
            "model": MODEL,
        }
        res = client.post("/api/workspaces", json=body, headers=AUTH)
        assert res.status_code == 201, res.text
        ws = res.json()
        assert ws["runtime"]["type"] == "devcontainer"
        record = registry.get_workspace(ws["id"])
        assert record is not None and Path(record.path).is_dir()
        assert record.extra["devcontainer_config"] == ".devcontainer/tools/devcontainer.json"
        container = str(record.extra["container"])
        assert container_engine.state(container) == "running"
        seen = container_engine.run(
            "exec", container, "cat", f"/workspaces/{Path(record.path).name}/app.py"
        )
        assert seen.stdout == "print('hi')\n"

        preview = client.get(f"/api/workspaces/{ws['id']}/deletion", headers=AUTH)
        assert preview.status_code == 200, preview.text
        kinds = [item["kind"] for item in preview.json()["removes"]]
        assert "container" in kinds and "worktree" in kinds
        gone = client.delete(f"/api/workspaces/{ws['id']}", headers=AUTH)
        assert gone.status_code in (200, 204), gone.text
        assert container_engine.state(container) is None
        assert not Path(record.path).exists()

        missing = dict(body, runtime={"type": "devcontainer", "config": "nope"})
        refused = client.post("/api/workspaces", json=missing, headers=AUTH)
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == "devcontainer_config"
        assert "named 'nope'" in refused.text
