"""The attention inbox through the server with two connected clients: a plan-mode question
arrives in both, is answered by item id and leaves both; the proposed plan then waits in both
(no separate "turn ended" notice: the plan says more) and leaves when the workspace is read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.server_support import (
    AUTH,
    WS,
    WS_URL,
    create_workspace,
    receive_until,
    server_client,
    use_fake_llm,
    wait_for,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

QUESTION = {
    "question": "Which database?",
    "header": "Database",
    "multiSelect": False,
    "options": [
        {"label": "Postgres", "description": "server"},
        {"label": "SQLite", "description": "file"},
    ],
}


def _inbox_message(kind: str, item_kind: str | None = None) -> Any:
    def stop(msg: dict[str, Any]) -> bool:
        if msg.get("type") != kind:
            return False
        return item_kind is None or msg["item"]["kind"] == item_kind

    return stop


def _follow(ws: WS) -> list[dict[str, Any]]:
    """Ask for the inbox: the messages up to its snapshot."""
    ws.send_json({"type": "inbox-subscribe"})
    return receive_until(ws, lambda m: m["type"] == "inbox")


def test_items_reach_every_client_and_leave_every_client_when_answered(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    with server_client() as client:
        wid = create_workspace(client, repo, agent="plan")["id"]
        plan_file = client.get(f"/api/workspaces/{wid}/plan", headers=AUTH).json()["path"]
        fake_llm.script(
            fakellm.tool_call("ask_user_question", {"questions": [QUESTION]}),
            fakellm.tool_call("file_edit_insert", {"path": plan_file, "content": "# Use SQLite\n"}),
            fakellm.tool_call("propose_plan", {}),
            fakellm.text("The plan is ready."),
        )
        with (
            client.websocket_connect(WS_URL, headers=AUTH) as one,
            client.websocket_connect(WS_URL, headers=AUTH) as two,
        ):
            assert [m["type"] for m in _follow(one)][:1] == ["hello"]
            assert _follow(two)[-1]["items"] == []
            sent = client.post(
                f"/api/workspaces/{wid}/messages", json={"text": "plan it"}, headers=AUTH
            )
            assert sent.status_code == 202
            asked = [
                receive_until(ws, _inbox_message("inbox-added"))[-1]["item"] for ws in (one, two)
            ]
            assert asked[0] == asked[1]
            item = asked[0]
            assert item["kind"] == "question" and item["workspaceId"] == wid
            assert item["summary"] == "question: Which database?"
            assert item["detail"]["questions"][0]["options"][1]["label"] == "SQLite"
            listed = client.get("/api/inbox", headers=AUTH).json()["items"]
            assert [i["id"] for i in listed] == [item["id"]]

            wrong = client.post(
                f"/api/inbox/{item['id']}/approve", json={"decision": "once"}, headers=AUTH
            )
            assert wrong.status_code == 422 and "not an approval" in wrong.text
            answered = client.post(
                f"/api/inbox/{item['id']}/answer",
                json={"answers": {"Which database?": "SQLite"}},
                headers=AUTH,
            )
            assert answered.status_code == 200, answered.text
            for ws in (one, two):
                gone = receive_until(ws, lambda m: m["type"] == "inbox-removed")[-1]
                assert gone["id"] == item["id"] and gone["workspaceId"] == wid
                plan = receive_until(ws, _inbox_message("inbox-added", "plan"))[-1]["item"]
                assert plan["detail"]["content"] == "# Use SQLite\n"
                assert plan["actions"] == ["open", "read"]
            again = client.post(
                f"/api/inbox/{item['id']}/answer", json={"answers": None}, headers=AUTH
            )
            assert again.status_code == 404 and "answered already" in again.json()["error"]["hint"]

            wait_for(
                lambda: (
                    client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]["state"]
                    == "idle"
                )
            )
            listed = client.get("/api/inbox", headers=AUTH).json()["items"]
            assert [i["kind"] for i in listed] == ["plan"]  # no separate turn-ended notice
            status = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]
            read = client.post(
                f"/api/workspaces/{wid}/read", json={"seq": status["lastSeq"]}, headers=AUTH
            )
            assert read.status_code == 200
            for ws in (one, two):
                gone = receive_until(ws, lambda m: m["type"] == "inbox-removed")[-1]
                assert gone["id"] == listed[0]["id"]
            assert client.get("/api/inbox", headers=AUTH).json()["items"] == []
