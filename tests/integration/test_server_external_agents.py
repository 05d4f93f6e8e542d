"""External ACP agents through the server's API: the picker's list (never the definition's
environment), a workspace created with `externalAgent` (checked: unknown names, engine
settings; a Dev Container one: tests/integration/test_external_agent_devcontainer.py), a turn of the scripted fake agent (a real subprocess) seen over
REST history and the WebSocket, and settings that do not apply refused by PATCH."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.integration.server_support import (
    AUTH,
    WS_URL,
    events_of,
    idle,
    is_event,
    receive_until,
    server_client,
    subscribe,
    wait_for,
)
from tests.support.external_agents import configure, write_script


def create(client: Any, project: Path, **fields: Any) -> Any:
    body = {"projectPath": str(project), "runtime": {"type": "local"}, **fields}
    return client.post("/api/workspaces", json=body, headers=AUTH)


def test_the_list_names_the_configured_agents_without_their_environment(tmp_path: Path) -> None:
    with server_client() as client:
        assert client.get("/api/external-agents", headers=AUTH).json() == {"agents": []}
    configure(write_script(tmp_path / "s.json", []), label="Fake agent", models=["m-1"])
    configure(write_script(tmp_path / "s.json", []), name="other")
    with server_client() as client:
        res = client.get("/api/external-agents", headers=AUTH)
        assert client.get("/api/external-agents").status_code == 401
    assert res.status_code == 200
    assert res.json() == {
        "agents": [
            {"name": "fake", "label": "Fake agent", "models": ["m-1"]},
            {"name": "other", "label": "other", "models": []},
        ]
    }
    assert "XUM_FAKE_ACP_SCRIPT" not in res.text and "fake_acp_agent" not in res.text


def test_creation_checks_the_name_and_engine_settings(repo: Path, tmp_path: Path) -> None:
    configure(write_script(tmp_path / "s.json", []))
    with server_client() as client:
        unknown = create(client, repo, externalAgent="nope")
        assert unknown.status_code == 422
        error = unknown.json()["error"]
        assert 'no external agent "nope"' in error["message"]
        assert "configured: fake" in error["message"]
        assert "docs/external-agents.md" in error["hint"]
        model = create(client, repo, externalAgent="fake", model="anthropic:claude-sonnet-5-5")
        assert model.status_code == 422
        assert "model: not available with an external agent" in model.json()["error"]["message"]
        # Nothing was created by the refused requests.
        assert client.get("/api/workspaces", headers=AUTH).json()["workspaces"] == []


def test_a_turn_runs_the_external_agent_and_shows_in_history(repo: Path, tmp_path: Path) -> None:
    script = [[{"message": "Hello from "}, {"message": "the fake agent."}], [{"message": "Again."}]]
    configure(write_script(tmp_path / "s.json", script))
    with server_client() as client:
        res = create(client, repo, externalAgent="fake")
        assert res.status_code == 201, res.text
        wid = res.json()["id"]
        assert res.json()["externalAgent"] == "fake"
        listed = client.get("/api/workspaces", headers=AUTH).json()["workspaces"]
        assert [w["externalAgent"] for w in listed] == ["fake"]
        sent = client.post(f"/api/workspaces/{wid}/messages", json={"text": "hi"}, headers=AUTH)
        assert sent.status_code == 202, sent.text
        wait_for(lambda: idle(client, wid), timeout=60)
        history = client.get(f"/api/workspaces/{wid}/history", headers=AUTH).json()["events"]
        said = [e["text"] for e in history if e["type"] == "assistant-message"]
        assert said == ["Hello from the fake agent."]
        ends = [e for e in history if e["type"] == "turn-end"]
        assert [e["reason"] for e in ends] == ["completed"]
        # A second turn, live over the WebSocket.
        with client.websocket_connect(WS_URL, headers=AUTH) as ws:
            assert ws.receive_json()["type"] == "hello"
            subscribe(ws, wid)
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "more"}, headers=AUTH)
            live = events_of(receive_until(ws, is_event("turn-end"), timeout=60), wid)
        assert [e["text"] for e in live if e["type"] == "assistant-message"] == ["Again."]


def test_engine_settings_are_refused_for_an_external_workspace(repo: Path, tmp_path: Path) -> None:
    configure(write_script(tmp_path / "s.json", []))
    with server_client() as client:
        wid = create(client, repo, externalAgent="fake").json()["id"]
        url = f"/api/workspaces/{wid}"
        for change in (
            {"model": "anthropic:claude-sonnet-5-5"},
            {"thinking": "high"},
            {"agent": "plan"},
        ):
            res = client.patch(url, json=change, headers=AUTH)
            assert res.status_code == 422, change
            assert 'external agent "fake"' in res.json()["error"]["message"]
        # What does apply still does.
        res = client.patch(url, json={"title": "Renamed", "permissions": "ask"}, headers=AUTH)
        assert res.status_code == 200
        assert res.json()["title"] == "Renamed" and res.json()["permissions"] == "ask"
        assert res.json()["model"] is None
