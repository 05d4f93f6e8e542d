"""Stopping a real agent's turn through xum while its command runs, over the server's API.

The model has the agent run a long `sleep` (opencode in its own shell, Claude Code through a
terminal xum runs for it, Codex in its own sandbox); the browser's Stop (`POST /interrupt`) ends
the turn as interrupted, the command's process is gone (found by a marker in its command line:
Codex leaves it running after a cancel, and xum stops it), the next message is a normal turn with
the same agent, and `xum session` replays what streamed live."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.integration.server_support import (
    AUTH,
    events_of,
    is_event,
    receive_until,
    server_client,
    subscribed,
)
from tests.support.external_agents import committed, replay
from tests.support.real_agents import (
    DEFINITIONS,
    configure,
    processes_with,
    shell_call,
    wait_until,
)
from xum.testing import external_agents as agents
from xum.testing import fakellm

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

STEP = 45.0  # one real agent's step on a loaded 2-core machine takes a few seconds


@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_stopping_a_real_agents_turn_stops_its_command(
    name: str, repo: Path, tmp_path: Path
) -> None:
    model = agents.AgentModel()
    # A number no other process has in its command line: `sleep` takes fractions.
    marker = f"{290 + os.getpid() % 9}.{int.from_bytes(os.urandom(4), 'big')}"
    with fakellm.FakeLLM(responder=model) as llm, server_client() as client:
        configure(name, llm, tmp_path / "agent")
        body = {"projectPath": str(repo), "runtime": {"type": "local"}, "externalAgent": name}
        created = client.post("/api/workspaces", json=body, headers=AUTH)
        assert created.status_code == 201, created.text
        wid = created.json()["id"]
        url = f"/api/workspaces/{wid}"
        assert client.patch(url, json={"permissions": "auto"}, headers=AUTH).status_code == 200

        model.script(shell_call(name, f"sleep {marker}"))
        with subscribed(client, wid) as ws:
            sent = client.post(f"{url}/messages", json={"text": "Wait a while."}, headers=AUTH)
            assert sent.status_code == 202
            # Stop once xum has recorded the call (Codex reports it after the command started).
            started = receive_until(ws, is_event("tool-call"), timeout=STEP)
            wait_until(lambda: bool(processes_with(marker)), STEP, "the sleep starting")
            stopped = client.post(f"{url}/interrupt", headers=AUTH)
            assert stopped.status_code == 200 and stopped.json()["interrupted"] is True
            ended = receive_until(ws, is_event("turn-end"), timeout=STEP)
            live = events_of(started + ended, wid)
        assert live[-1]["reason"] == "interrupted", live[-3:]
        # Every tool call has its result, also one the agent never reported done (Claude Code).
        calls = [e["call_id"] for e in live if e["type"] == "tool-call"]
        assert calls and calls == [e["call_id"] for e in live if e["type"] == "tool-result"]
        wait_until(lambda: not processes_with(marker), 20, "the sleep ending")

        # The next message is a turn like any other.
        model.script(fakellm.reply("Back again."))
        after = max(e["seq"] for e in live if "seq" in e)
        with subscribed(client, wid, after=after) as ws:
            client.post(f"{url}/messages", json={"text": "Still there?"}, headers=AUTH)
            more = events_of(receive_until(ws, is_event("turn-end"), timeout=STEP), wid)
        assert more[-1]["reason"] == "completed", more[-3:]
        said = [e["text"] for e in more if e["type"] == "assistant-message"]
        assert "Back again." in "".join(said)
        assert not llm.errors, llm.errors
    events: list[dict[str, Any]] = live + more
    assert replay(repo, wid) == committed(events)
