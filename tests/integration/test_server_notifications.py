"""Notifications through the server (docs/notifications.md): the agent's `notify` call reaches
the clients that asked for notifications (and only those) and waits in the inbox; "Notify on all
responses" notifies once per response; an inbox kind listed in config.json notifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.server_support import (
    AUTH,
    WS,
    WS_URL,
    create_workspace,
    idle,
    receive_until,
    server_client,
    use_fake_llm,
    wait_for,
)
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def _follow(ws: WS, notifications: bool) -> None:
    """Ask for notifications (or not), then the inbox: its snapshot says both were taken."""
    if notifications:
        ws.send_json({"type": "notifications-subscribe"})
    ws.send_json({"type": "inbox-subscribe"})
    receive_until(ws, lambda m: m["type"] == "inbox")


def _notification(ws: WS) -> dict[str, Any]:
    found: dict[str, Any] = receive_until(ws, lambda m: m["type"] == "notification")[-1]
    return dict(found["notification"])


def _quiet_until_pong(ws: WS, marker: str) -> list[dict[str, Any]]:
    """Every message up to the answer of a ping sent now (messages are sent in order)."""
    ws.send_json({"type": "ping", "id": marker})
    return receive_until(ws, lambda m: m["type"] == "pong" and m.get("id") == marker)


def test_notify_reaches_subscribed_clients_and_the_inbox(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    with server_client() as client:
        wid = create_workspace(client, repo, name="tests")["id"]
        fake_llm.script(
            fakellm.tool_call("notify", {"title": "Tests pass", "message": "41 green"}),
            fakellm.text("Done."),
        )
        with (
            client.websocket_connect(WS_URL, headers=AUTH) as shows,
            client.websocket_connect(WS_URL, headers=AUTH) as quiet,
        ):
            _follow(shows, notifications=True)
            _follow(quiet, notifications=False)
            sent = client.post(f"/api/workspaces/{wid}/messages", json={"text": "go"}, headers=AUTH)
            assert sent.status_code == 202
            notice = _notification(shows)
            assert notice["source"] == "notify"
            assert notice["workspaceId"] == wid and notice["workspaceName"] == "tests"
            assert (notice["title"], notice["body"]) == ("Tests pass", "41 green")
            item = receive_until(
                quiet, lambda m: m["type"] == "inbox-added" and m["item"]["kind"] == "notify"
            )[-1]["item"]
            assert item["summary"] == "Tests pass: 41 green"
            assert item["detail"]["title"] == "Tests pass" and item["actions"] == ["read"]
            wait_for(lambda: idle(client, wid))
            seen = _quiet_until_pong(quiet, "after")
            assert not [m for m in seen if m["type"] == "notification"]
            # No inbox kind is configured to notify, and the bell is off: nothing more.
            more = _quiet_until_pong(shows, "after")
            assert not [m for m in more if m["type"] == "notification"]


def test_notify_on_all_responses_and_inbox_kinds(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    update_config(lambda c: c.update({"notifications": {"inboxKinds": ["turn-ended"]}}))
    with server_client() as client:
        wid = create_workspace(client, repo, name="bell")["id"]
        assert (
            client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["notifyOnResponse"] is False
        )
        on = client.patch(f"/api/workspaces/{wid}", json={"notifyOnResponse": True}, headers=AUTH)
        assert on.status_code == 200 and on.json()["notifyOnResponse"] is True
        assert client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["notifyOnResponse"] is True
        with client.websocket_connect(WS_URL, headers=AUTH) as ws:
            _follow(ws, notifications=True)
            fake_llm.script(fakellm.text("First answer."))
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "one"}, headers=AUTH)
            notice = _notification(ws)
            assert (notice["source"], notice["title"]) == ("response", "Response complete")
            wait_for(lambda: idle(client, wid))
            # The turn-ended inbox item is not notified a second time.
            assert not [m for m in _quiet_until_pong(ws, "one") if m["type"] == "notification"]

            off = client.patch(
                f"/api/workspaces/{wid}", json={"notifyOnResponse": False}, headers=AUTH
            )
            assert off.json()["notifyOnResponse"] is False
            fake_llm.script(fakellm.text("Second answer."))
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "two"}, headers=AUTH)
            notice = _notification(ws)
            assert (notice["source"], notice["title"]) == ("turn-ended", "Turn ended")
            assert notice["body"] == "the turn is done"
