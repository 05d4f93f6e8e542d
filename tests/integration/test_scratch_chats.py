"""Scratch chats through the server (docs/workspaces.md): a workspace with no project, in a
private folder under `$XUM_ROOT/chats`, where the agent's tools (the sandboxed bash and the file
tools) work although it lies inside xum's own directory; it survives a server restart, cannot be
forked, and deleting it removes its folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.integration.server_support import (
    AUTH,
    MODEL,
    idle,
    server_client,
    use_fake_llm,
    wait_for,
)
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def test_a_scratch_chat_lives_in_its_own_folder_and_goes_with_it(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    # The sandbox is required, not best effort: bash must run in it and still write the folder.
    update_config(lambda c: c.update({"sandbox": {"mode": "workspace-write"}}))
    root = Path(os.environ["XUM_ROOT"])
    with server_client() as client:
        made = client.post("/api/chats", json={"model": MODEL}, headers=AUTH)
        assert made.status_code == 201, made.text
        chat = made.json()
        wid = chat["id"]
        folder = root / "chats" / wid
        assert chat["scratch"] is True and chat["branch"] is None
        assert chat["path"] == str(folder) and folder.is_dir()
        assert chat["runtime"]["type"] == "local" and chat["name"].startswith("chat-")
        assert not client.get("/api/projects", headers=AUTH).json()["projects"]
        listed = client.get("/api/workspaces", headers=AUTH).json()["workspaces"]
        assert [w["id"] for w in listed if w["scratch"]] == [wid]

        fake_llm.script(
            fakellm.tool_call(
                "bash", {"script": "echo from-bash > made.txt && pwd", "display_name": "write"}
            ),
            fakellm.tool_call(
                "file_edit_insert",
                {
                    "path": "notes.md",
                    "content": "# Notes\n",
                    "insert_after": None,
                    "insert_before": None,
                },
            ),
            fakellm.text("Both files are there."),
        )
        sent = client.post(f"/api/workspaces/{wid}/messages", json={"text": "go"}, headers=AUTH)
        assert sent.status_code == 202
        wait_for(lambda: idle(client, wid), timeout=30)
        assert (folder / "made.txt").read_text() == "from-bash\n"
        assert (folder / "notes.md").read_text() == "# Notes\n"
        results = [m for r in fake_llm.requests for m in r.json["messages"] if m["role"] == "user"]
        assert str(folder) in str(results)  # `pwd` ran in the chat's folder

        forked = client.post(f"/api/workspaces/{wid}/fork", json={}, headers=AUTH)
        assert forked.status_code == 422 and "cannot be forked" in forked.text

    with server_client() as client:  # a restart: the chat and its files are still there
        again = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()
        assert again["scratch"] is True and (folder / "made.txt").exists()
        preview = client.get(f"/api/workspaces/{wid}/deletion", headers=AUTH).json()
        assert {"kind": "chat-folder", "path": str(folder)} in [
            {k: v for k, v in item.items() if v is not None} for item in preview["removes"]
        ]
        deleted = client.delete(f"/api/workspaces/{wid}", headers=AUTH)
        assert deleted.status_code == 200, deleted.text
        assert not folder.exists()
        assert client.get(f"/api/workspaces/{wid}", headers=AUTH).status_code == 404


def test_a_sub_agent_works_in_the_chat_folder(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    root = Path(os.environ["XUM_ROOT"])
    task = {
        "agentId": "exec",
        "title": "helper",
        "prompt": "write child.txt",
        "model": None,
        "thinking": None,
        "n": None,
        "run_in_background": None,
        "isolation": None,  # the default: no worktree can be made here, so the same folder
    }
    fake_llm.script(
        fakellm.tool_call("task", task),
        fakellm.tool_call("bash", {"script": "echo child > child.txt", "display_name": "write"}),
        fakellm.tool_call("agent_report", {"reportMarkdown": "wrote it", "title": None}),
        fakellm.text("Reported."),  # the child's turn ends
        fakellm.text("The helper wrote it."),
    )
    with server_client() as client:
        wid = client.post("/api/chats", json={"model": MODEL}, headers=AUTH).json()["id"]
        folder = root / "chats" / wid
        client.post(f"/api/workspaces/{wid}/messages", json={"text": "delegate"}, headers=AUTH)
        wait_for(lambda: idle(client, wid), timeout=30)
        assert (folder / "child.txt").read_text() == "child\n"
        children = [
            w
            for w in client.get("/api/workspaces", headers=AUTH).json()["workspaces"]
            if w["parentId"] == wid
        ]
        assert [c["path"] for c in children] == [str(folder)]
        assert children[0]["scratch"] is False  # the chat's own record only
