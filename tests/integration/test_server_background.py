"""The background processes routes: a process the agent started is listed (with its last lines)
and announced to subscribers as `background-processes`; stopping it over REST kills it and
wakes nobody; unknown ids are 404s that say where the list is."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.server_support import (
    AUTH,
    create_workspace,
    events_of,
    is_event,
    receive_until,
    server_client,
    subscribed,
    use_fake_llm,
    wait_for,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def test_list_and_stop_a_background_process(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    arguments = {
        "script": "echo warming up; echo listening on 4321; sleep 300",
        "display_name": "Dev server",
        "run_in_background": True,
        "monitor": {},
    }
    fake_llm.script(fakellm.tool_call("bash", arguments), fakellm.reply("Started."))
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        empty = client.get(f"/api/workspaces/{wid}/background", headers=AUTH)
        assert empty.status_code == 200 and empty.json() == {"processes": []}
        with subscribed(client, wid) as ws:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "go"}, headers=AUTH)
            announced = events_of(receive_until(ws, is_event("background-processes")), wid)[-1]
        (row,) = announced["processes"]
        assert row["display_name"] == "Dev server" and row["status"] == "running"
        assert row["monitored"] is True and row["started_at"] > 0
        pid = row["process_id"]

        def listed() -> list[str]:
            rows = client.get(f"/api/workspaces/{wid}/background", headers=AUTH).json()
            return list(rows["processes"][0]["last_lines"])

        wait_for(lambda: listed() == ["warming up", "listening on 4321"])
        stopped = client.post(f"/api/workspaces/{wid}/background/{pid}/stop", headers=AUTH)
        assert stopped.status_code == 200, stopped.text
        assert stopped.json()["process"]["status"] == "stopped"
        after = client.get(f"/api/workspaces/{wid}/background", headers=AUTH).json()
        assert after["processes"][0]["status"] == "stopped"
        # An explicit stop: the monitor made no wake-up (it would be waiting by now, the stop
        # having waited for the process to end).
        host = client.app.state.xum.hosts.get(wid)
        assert host is not None and host.watch.pending == []
        assert len(fake_llm.requests) == 2

        missing = client.post(f"/api/workspaces/{wid}/background/nope/stop", headers=AUTH)
        assert missing.status_code == 404
        assert "background" in missing.json()["error"]["hint"]
        nobody = client.get("/api/workspaces/nope/background", headers=AUTH)
        assert nobody.status_code == 404
