"""The plan card's Edit over the API: read the workspace's plan file, write it back, and a write
that would overwrite a newer plan (or land while a turn runs) is refused."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import make_repo
from tests.integration.server_support import AUTH, create_workspace, server_client
from xum.context.plan import MAX_PLAN_BYTES


def test_read_edit_and_conflicts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        ws = create_workspace(client, repo)
        url = f"/api/workspaces/{ws['id']}/plan"
        empty = client.get(url, headers=AUTH).json()
        assert empty["exists"] is False and empty["content"] == "" and empty["sha256"] == ""
        path = Path(empty["path"])
        assert path.name.endswith(".md") and not path.exists()

        made = client.put(
            url, json={"content": "# Plan\n1. one\n", "expectedSha256": ""}, headers=AUTH
        )
        assert made.status_code == 200, made.text
        assert path.read_text() == "# Plan\n1. one\n"
        read = client.get(url, headers=AUTH).json()
        assert read["exists"] is True and read["content"] == "# Plan\n1. one\n"

        # Someone else (the agent, an editor) changed it since: the stale edit is refused.
        path.write_text("# Plan\n1. one\n2. two\n")
        stale = client.put(
            url, json={"content": "# Mine\n", "expectedSha256": read["sha256"]}, headers=AUTH
        )
        assert stale.status_code == 409 and stale.json()["error"]["code"] == "plan_changed"
        assert path.read_text() == "# Plan\n1. one\n2. two\n"
        fresh = client.get(url, headers=AUTH).json()
        ok = client.put(
            url, json={"content": "# Mine\n", "expectedSha256": fresh["sha256"]}, headers=AUTH
        )
        assert ok.status_code == 200 and path.read_text() == "# Mine\n"

        too_big = "x" * (MAX_PLAN_BYTES + 1)
        # Refused by the request body limit or by the field's own (whichever is lower).
        assert client.put(url, json={"content": too_big}, headers=AUTH).status_code in (413, 422)
        assert path.read_text() == "# Mine\n"
        assert client.get(url).status_code == 401
        assert client.get("/api/workspaces/nope/plan", headers=AUTH).status_code == 404
