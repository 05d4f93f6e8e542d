"""A real agent's permission requests answered through xum's approvals, over the server's API.

opencode (its config says `"permission": {"bash": "ask", "edit": "ask"}`) and Claude Code (in
its default mode) ask before they run a command. In a workspace whose permission mode is `ask`,
the request reaches a WebSocket subscriber as xum's `approval-request` and the inbox as an
approval item; allowed from the inbox, the command runs and its output reaches the model's next
request; denied over the workspace's approvals route, it does not run and the agent ends its
turn; "always" keeps the command's prefix in xum's rules, and the next such command runs without
asking. Afterwards `xum session`
replays both turns with the events they streamed live."""

from __future__ import annotations

import subprocess
import sys
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
from tests.support.real_agents import ASKING, configure, request_text, shell_call
from xum.testing import external_agents as agents
from xum.testing import fakellm

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

STEP = 45.0  # one real agent's step on a loaded 2-core machine takes a few seconds


def _seqs(events: list[dict[str, Any]]) -> int:
    return max((e["seq"] for e in events if "seq" in e), default=0)


@pytest.mark.parametrize("name", ASKING)
def test_a_person_allows_and_denies_a_real_agents_commands(
    name: str, repo: Path, tmp_path: Path
) -> None:
    model = agents.AgentModel()
    denied = repo / "denied.txt"
    with fakellm.FakeLLM(responder=model) as llm, server_client() as client:
        configure(name, llm, tmp_path / "agent")
        body = {"projectPath": str(repo), "runtime": {"type": "local"}, "externalAgent": name}
        created = client.post("/api/workspaces", json=body, headers=AUTH)
        assert created.status_code == 201, created.text
        wid = created.json()["id"]
        url = f"/api/workspaces/{wid}"
        assert client.patch(url, json={"permissions": "ask"}, headers=AUTH).status_code == 200
        live: list[dict[str, Any]] = []

        # 1. Allowed from the inbox: the command runs, its output reaches the model.
        model.script(shell_call(name, "echo allowed-$((6 * 7))"), fakellm.reply("It ran."))
        with subscribed(client, wid) as ws:
            sent = client.post(f"{url}/messages", json={"text": "Run it."}, headers=AUTH)
            assert sent.status_code == 202
            asked = events_of(receive_until(ws, is_event("approval-request"), timeout=STEP), wid)
            request = asked[-1]
            assert "allowed-$((6 * 7))" in request["subject"]
            assert request["kind"] == "command"
            items = client.get("/api/inbox", headers=AUTH).json()["items"]
            (item,) = [i for i in items if i["kind"] == "approval" and i["workspaceId"] == wid]
            assert item["detail"]["request_id"] == request["request_id"]
            answered = client.post(
                f"/api/inbox/{item['id']}/approve", json={"decision": "once"}, headers=AUTH
            )
            assert answered.status_code == 200 and answered.json() == {"accepted": True}
            rest = events_of(receive_until(ws, is_event("turn-end"), timeout=STEP), wid)
            live += asked + rest
        resolved = next(e for e in rest if e["type"] == "approval-resolved")
        assert (resolved["decision"], resolved["by"]) == ("once", "user")
        assert rest[-1]["reason"] == "completed", rest[-3:]
        assert "allowed-42" in request_text(model.turn_requests[-1])
        assert any(e["type"] == "tool-result" and "allowed-42" in str(e) for e in rest)
        assert "It ran." in "".join(e["text"] for e in rest if e["type"] == "assistant-message")
        items = client.get("/api/inbox", headers=AUTH).json()["items"]
        assert [i for i in items if i["kind"] == "approval"] == []  # answered: it left

        # 2. Denied over the workspace's approvals route: the command does not run.
        turns_before = len(model.turn_requests)
        model.script(shell_call(name, f"touch {denied}"))
        with subscribed(client, wid, after=_seqs(live)) as ws:
            client.post(f"{url}/messages", json={"text": "Make the file."}, headers=AUTH)
            asked = events_of(receive_until(ws, is_event("approval-request"), timeout=STEP), wid)
            answered = client.post(
                f"{url}/approvals/{asked[-1]['request_id']}",
                json={"decision": "deny", "reason": "not now"},
                headers=AUTH,
            )
            assert answered.status_code == 200
            rest = events_of(receive_until(ws, is_event("turn-end"), timeout=STEP), wid)
            live += asked + rest
        resolved = next(e for e in rest if e["type"] == "approval-resolved")
        assert (resolved["decision"], resolved["by"]) == ("deny", "user")
        assert not denied.exists()
        (result,) = [e for e in rest if e["type"] == "tool-result"]
        assert result["is_error"] is True
        # Both agents end their turn on a refusal (ACP carries no reason back to the agent).
        assert rest[-1]["reason"] == "completed"
        assert len(model.turn_requests) == turns_before + 1

        # 3. "Always" from the inbox: xum keeps the command's prefix, and the next command it
        # covers runs without asking (the agent was allowed once each time).
        first, second = repo / "kept-1.txt", repo / "kept-2.txt"
        model.script(shell_call(name, f"touch {first}"), fakellm.reply("Made one."))
        with subscribed(client, wid, after=_seqs(live)) as ws:
            client.post(f"{url}/messages", json={"text": "Make one."}, headers=AUTH)
            asked = events_of(receive_until(ws, is_event("approval-request"), timeout=STEP), wid)
            assert asked[-1]["prefix"] == "touch"
            items = client.get("/api/inbox", headers=AUTH).json()["items"]
            (item,) = [i for i in items if i["kind"] == "approval" and i["workspaceId"] == wid]
            assert "always" in item["actions"]
            answered = client.post(
                f"/api/inbox/{item['id']}/approve", json={"decision": "always"}, headers=AUTH
            )
            assert answered.status_code == 200
            rest = events_of(receive_until(ws, is_event("turn-end"), timeout=STEP), wid)
            live += asked + rest
        assert first.exists() and rest[-1]["reason"] == "completed"
        model.script(shell_call(name, f"touch {second}"), fakellm.reply("Made two."))
        with subscribed(client, wid, after=_seqs(live)) as ws:
            client.post(f"{url}/messages", json={"text": "Make another."}, headers=AUTH)
            rest = events_of(receive_until(ws, is_event("turn-end"), timeout=STEP), wid)
            live += rest
        assert second.exists() and rest[-1]["reason"] == "completed"
        assert not [e for e in rest if e["type"] == "approval-request"]  # xum's rule answered
        assert not llm.errors, llm.errors

    # 4. The log replays what streamed live (messages, the tool calls and their results).
    replayed = replay(repo, wid)
    assert replayed == committed(live)
    plain = subprocess.run(
        [sys.executable, "-m", "xum", "session", wid],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "It ran." in plain and "allowed-42" in plain, plain
