"""Approvals through the server: the permission mode set per workspace, the request reaching a
subscriber as an event (again after a reconnect), answered over REST, and the Safety settings."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.integration.server_support import (
    AUTH,
    WS_URL,
    create_workspace,
    events_of,
    is_event,
    receive_until,
    server_client,
    subscribe,
    subscribed,
    use_fake_llm,
)
from xum.core.paths import xum_root
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def test_an_approval_waits_for_the_browser_and_is_answered_over_rest(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "touch made.txt", "display_name": "touch"}),
        fakellm.reply("Made it."),
        fakellm.tool_call("bash", {"script": "touch again.txt", "display_name": "touch"}),
        fakellm.reply("Again."),
    )
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        edited = client.patch(f"/api/workspaces/{wid}", json={"permissions": "ask"}, headers=AUTH)
        assert edited.status_code == 200 and edited.json()["permissions"] == "ask"
        bad = client.patch(f"/api/workspaces/{wid}", json={"permissions": "yolo"}, headers=AUTH)
        assert bad.status_code == 422
        with subscribed(client, wid) as ws:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "go"}, headers=AUTH)
            request = events_of(receive_until(ws, is_event("approval-request")), wid)[-1]
        assert request["subject"] == "touch made.txt" and request["kind"] == "command"
        assert request["prefix"] == "touch"
        assert not (repo / "made.txt").exists()  # it waits
        status = client.get("/api/workspaces", headers=AUTH).json()["workspaces"][0]["status"]
        assert status["state"] == "waiting"
        # A client that subscribes now still gets the request (informational events are not
        # replayed from the log).
        with client.websocket_connect(WS_URL, headers=AUTH) as ws:
            ws.receive_json()
            again = events_of(subscribe(ws, wid), wid)
            assert [e["request_id"] for e in again if e["type"] == "approval-request"] == [
                request["request_id"]
            ]
            pending = client.get(f"/api/workspaces/{wid}/approvals", headers=AUTH).json()
            assert [p["request_id"] for p in pending["approvals"]] == [request["request_id"]]
            missing = client.post(
                f"/api/workspaces/{wid}/approvals/nope", json={"decision": "once"}, headers=AUTH
            )
            assert missing.status_code == 404
            answered = client.post(
                f"/api/workspaces/{wid}/approvals/{request['request_id']}",
                json={"decision": "always"},
                headers=AUTH,
            )
            assert answered.status_code == 200
            rest = events_of(receive_until(ws, is_event("turn-end")), wid)
        resolved = next(e for e in rest if e["type"] == "approval-resolved")
        assert resolved["decision"] == "always" and resolved["by"] == "user"
        result = next(e for e in rest if e["type"] == "tool-result")
        assert result["meta"]["approval"]["decision"] == "always"
        assert (repo / "made.txt").exists()
        # Remembered for the project: the next `touch` runs without asking.
        with subscribed(client, wid, after=max(e["seq"] for e in rest if "seq" in e)) as ws:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "again"}, headers=AUTH)
            second = events_of(receive_until(ws, is_event("turn-end")), wid)
        assert not [e for e in second if e["type"] == "approval-request"]
        assert (repo / "again.txt").exists()
        safety = client.get("/api/settings/safety", headers=AUTH).json()
        assert [(r["project"], r["prefix"]) for r in safety["rules"]] == [(str(repo), "touch")]
        forgot = client.post(
            "/api/settings/safety/rules/forget",
            json={"project": str(repo), "prefix": "touch"},
            headers=AUTH,
        )
        assert forgot.status_code == 200 and forgot.json()["rules"] == []


def test_safety_settings_are_checked_and_stored_in_config_json(repo: Path) -> None:
    with server_client() as client:
        got = client.get("/api/settings/safety", headers=AUTH).json()
        assert got["sandbox"]["mode"] == "auto" and got["readDenylist"]["sensitive"] is False
        assert set(got["backend"]) == {"ok", "detail", "effective"}
        put = client.put(
            "/api/settings/safety",
            json={
                "sandbox": {"mode": "workspace-write", "egress": "off", "writable": ["~/.cache"]},
                "readDenylist": {"sensitive": True, "paths": ["~/secrets"]},
            },
            headers=AUTH,
        )
        assert put.status_code == 200, put.text
        config = orjson.loads((xum_root() / "config.json").read_bytes())
        assert config["sandbox"]["egress"] == "off" and config["sandbox"]["writable"] == [
            "~/.cache"
        ]
        assert config["readDenylist"] == {"sensitive": True, "paths": ["~/secrets"]}
        relative = client.put(
            "/api/settings/safety",
            json={"readDenylist": {"paths": ["relative/path"]}},
            headers=AUTH,
        )
        assert relative.status_code == 422 and "not absolute" in relative.text
        assert orjson.loads((xum_root() / "config.json").read_bytes())["readDenylist"]["paths"] == [
            "~/secrets"
        ]
