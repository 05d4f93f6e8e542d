"""Workspace lifecycle over the API (rename, fork, archive, delete with its preview) and plan
mode's questions, through the real lifecycle service, git and the fake LLM server."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integration.server_support import (
    AUTH,
    WS_URL,
    create_workspace,
    events_of,
    idle,
    is_event,
    receive_until,
    server_client,
    use_fake_llm,
    wait_for,
)
from xum.core.paths import session_dir
from xum.engine.derive import replay_events
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def test_rename_moves_the_worktree_and_branch(repo: Path) -> None:
    with server_client() as client:
        wt = create_workspace(client, repo, "worktree")
        res = client.post(
            f"/api/workspaces/{wt['id']}/rename", json={"name": "better-name"}, headers=AUTH
        )
        assert res.status_code == 200, res.text
        renamed = res.json()
        assert renamed["name"] == "better-name" and renamed["branch"] == "better-name"
        assert Path(renamed["path"]).is_dir() and not Path(wt["path"]).exists()
        bad = client.post(f"/api/workspaces/{wt['id']}/rename", json={"name": "../x"}, headers=AUTH)
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_name"
        other = create_workspace(client, repo, "worktree")
        taken = client.post(
            f"/api/workspaces/{other['id']}/rename", json={"name": "better-name"}, headers=AUTH
        )
        assert taken.status_code == 409


def test_fork_copies_the_conversation(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.set_default(fakellm.reply("noted"))
    with server_client() as client:
        src = create_workspace(client, repo, "worktree", title="Original")
        client.post(
            f"/api/workspaces/{src['id']}/messages", json={"text": "remember 42"}, headers=AUTH
        )
        wait_for(lambda: idle(client, src["id"]) and session_dir(src["id"]).exists())
        wait_for(
            lambda: any(
                e.type == "turn-end" for e in replay_events(SessionLog.open(src["id"]).frames)
            )
        )
        res = client.post(
            f"/api/workspaces/{src['id']}/fork", json={"name": "the-fork"}, headers=AUTH
        )
        assert res.status_code == 201, res.text
        fork = res.json()
        assert fork["name"] == "the-fork" and fork["runtime"]["type"] == "worktree"
        assert fork["model"] == src["model"] and fork["title"] == "Original"
        history = client.get(f"/api/workspaces/{fork['id']}/history", headers=AUTH).json()
        texts = [e.get("text") for e in history["events"]]
        assert "remember 42" in texts and "noted" in texts
        # The fork's next turn continues that conversation.
        client.post(
            f"/api/workspaces/{fork['id']}/messages", json={"text": "and now?"}, headers=AUTH
        )
        wait_for(lambda: len(fake_llm.requests) == 2)
        assert "remember 42" in str(fake_llm.requests[1].json["messages"])


def test_archive_hides_and_blocks_sending_until_unarchived(repo: Path) -> None:
    with server_client() as client:
        ws = create_workspace(client, repo)
        res = client.post(f"/api/workspaces/{ws['id']}/archive", headers=AUTH)
        assert res.status_code == 200 and res.json()["archivedAt"] is not None
        assert client.get("/api/workspaces", headers=AUTH).json()["workspaces"] == []
        archived = client.get("/api/workspaces", params={"archived": "only"}, headers=AUTH).json()
        assert [w["id"] for w in archived["workspaces"]] == [ws["id"]]
        send = client.post(
            f"/api/workspaces/{ws['id']}/messages", json={"text": "hi"}, headers=AUTH
        )
        assert send.status_code == 409
        back = client.post(f"/api/workspaces/{ws['id']}/unarchive", headers=AUTH)
        assert back.status_code == 200 and back.json()["archivedAt"] is None
        assert len(client.get("/api/workspaces", headers=AUTH).json()["workspaces"]) == 1


def test_delete_preview_then_delete(repo: Path) -> None:
    with server_client() as client:
        wt = create_workspace(client, repo, "worktree")
        (Path(wt["path"]) / "scratch.txt").write_text("unsaved work\n")
        preview = client.get(f"/api/workspaces/{wt['id']}/deletion", headers=AUTH).json()
        kinds = {item["kind"] for item in preview["removes"]}
        assert {"worktree", "branch", "record"} <= kinds
        assert preview["dirtyFiles"] == ["scratch.txt"]
        assert any("uncommitted" in w for w in preview["warnings"])
        assert Path(wt["path"]).exists()  # a preview changes nothing
        refused = client.delete(f"/api/workspaces/{wt['id']}", headers=AUTH)
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "workspace_dirty"
        assert Path(wt["path"]).exists()
        done = client.delete(
            f"/api/workspaces/{wt['id']}",
            params={"force": "true", "branch": "always"},
            headers=AUTH,
        )
        assert done.status_code == 200, done.text
        assert done.json()["branchDeleted"] is True
        assert not Path(wt["path"]).exists()
        branches = subprocess.run(
            ["git", "branch", "--list", wt["name"]], cwd=repo, capture_output=True, text=True
        ).stdout
        assert branches.strip() == ""
        assert client.get(f"/api/workspaces/{wt['id']}", headers=AUTH).status_code == 404
        local = create_workspace(client, repo)
        keep = client.get(f"/api/workspaces/{local['id']}/deletion", headers=AUTH).json()
        assert any(str(repo) in k for k in keep["keeps"])
        assert client.delete(f"/api/workspaces/{local['id']}", headers=AUTH).status_code == 200
        assert repo.is_dir() and (repo / "app.py").exists()


def test_deleted_lists_what_the_preview_listed(repo: Path) -> None:
    with server_client() as client:
        for policy in ("always", "merged", "never"):
            wt = create_workspace(client, repo, "worktree")
            work = Path(wt["path"])
            (work / "mine.txt").write_text("work\n")
            subprocess.run(["git", "add", "."], cwd=work, check=True)
            subprocess.run(
                ["git", "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", "w"],
                cwd=work,
                check=True,
            )
            url = f"/api/workspaces/{wt['id']}"
            preview = client.get(f"{url}/deletion", params={"branch": policy}, headers=AUTH)
            done = client.delete(url, params={"branch": policy}, headers=AUTH)
            assert done.status_code == 200, done.text
            listed = preview.json()["removes"]
            removed = done.json()["removed"]
            if policy == "merged":  # the branch has a commit of its own: git keeps it
                assert not done.json()["branchDeleted"] and done.json()["notes"]
                listed = [item for item in listed if item["kind"] != "branch"]
            assert removed == listed
            for item in removed:
                assert item["path"] is None or not Path(item["path"]).exists()
            kept = subprocess.run(
                ["git", "branch", "--list", wt["name"]], cwd=repo, capture_output=True, text=True
            ).stdout.strip()
            assert bool(kept) == (policy != "always")


def test_delete_is_refused_while_a_turn_runs(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(fakellm.reply("x" * 400, chunk_size=2, delay=0.01))
    with server_client() as client:
        ws = create_workspace(client, repo)
        client.post(f"/api/workspaces/{ws['id']}/messages", json={"text": "go"}, headers=AUTH)
        res = client.delete(f"/api/workspaces/{ws['id']}", headers=AUTH)
        assert res.status_code == 409
        client.post(f"/api/workspaces/{ws['id']}/interrupt", headers=AUTH)
        wait_for(lambda: idle(client, ws["id"]))


QUESTION = {
    "question": "Which database should the plan target?",
    "header": "Database",
    "multiSelect": False,
    "options": [
        {"label": "Postgres", "description": "The production database."},
        {"label": "SQLite", "description": "Simple, local."},
    ],
}


def test_plan_mode_question_round_trip(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(fakellm.tool_call("ask_user_question", {"questions": [QUESTION]}))
    fake_llm.set_default(fakellm.reply("Planning for Postgres."))  # plan mode may ask again
    with server_client() as client:
        ws = create_workspace(client, repo, agent="plan")
        wid = ws["id"]
        with client.websocket_connect(WS_URL, headers=AUTH) as sock:
            sock.receive_json()
            sock.send_json({"type": "subscribe", "workspaceId": wid, "afterSeq": 0})
            receive_until(sock, lambda m: m["type"] == "subscribed")
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "plan it"}, headers=AUTH)
            asked = receive_until(sock, lambda m: m["type"] == "question")[-1]
            assert asked["questions"][0]["question"] == QUESTION["question"]
            assert asked["questions"][0]["options"][0]["label"] == "Postgres"
            status = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]
            assert status["state"] == "waiting"
            pending = client.get(f"/api/workspaces/{wid}/question", headers=AUTH).json()
            assert pending["question"]["questionId"] == asked["questionId"]
            # A client that connects now is told about the question too.
            with client.websocket_connect(WS_URL, headers=AUTH) as late:
                late.receive_json()
                late.send_json({"type": "subscribe", "workspaceId": wid, "afterSeq": 0})
                seen = receive_until(late, lambda m: m["type"] == "subscribed")
                assert any(m["type"] == "question" for m in seen)
            wrong = client.post(
                f"/api/workspaces/{wid}/answers",
                json={"questionId": "nope", "answers": {}},
                headers=AUTH,
            )
            assert wrong.status_code == 404
            ok = client.post(
                f"/api/workspaces/{wid}/answers",
                json={
                    "questionId": asked["questionId"],
                    "answers": {QUESTION["question"]: "Postgres"},
                },
                headers=AUTH,
            )
            assert ok.json() == {"accepted": True}
            rest = receive_until(sock, is_event("turn-end"))
        result = next(e for e in events_of(rest, wid) if e["type"] == "tool-result")
        assert "Postgres" in result["output"] and result["meta"]["answered"] is True
        assert any(m["type"] == "question-closed" for m in rest)
        wait_for(lambda: idle(client, wid))
