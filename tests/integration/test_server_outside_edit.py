"""An outside edit of an open session's log while the server runs (a garbage line inserted into
`chat.jsonl` by an editor or a script): the next message reopens the session, reading the log
the way the quarantine rules say (docs/sessions.md), and goes on; no restart needed."""

from __future__ import annotations

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
from xum.store.sessionlog import LOG_NAME, SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def insert_garbage(xum_root: Path, workspace_id: str) -> None:
    path = xum_root / "sessions" / workspace_id / LOG_NAME
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) > 3
    path.write_bytes(b"".join([*lines[:2], b"this line was typed by hand\n", *lines[2:]]))


def test_a_garbage_line_inserted_into_an_open_log_is_quarantined_and_the_chat_goes_on(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch, xum_root: Path
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(fakellm.text("first answer"), fakellm.text("second answer"))
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        res = client.post(f"/api/workspaces/{wid}/messages", json={"text": "one"}, headers=AUTH)
        assert res.status_code == 202, res.text
        wait_for(lambda: len(fake_llm.requests) == 1 and idle(client, wid))
        insert_garbage(xum_root, wid)  # the session stays open in the server meanwhile

        with client.websocket_connect(WS_URL, headers=AUTH) as ws:
            assert ws.receive_json()["type"] == "hello"
            ws.send_json({"type": "subscribe", "workspaceId": wid, "afterSeq": 0})
            receive_until(ws, lambda m: m["type"] == "subscribed")
            res = client.post(f"/api/workspaces/{wid}/messages", json={"text": "two"}, headers=AUTH)
            assert res.status_code == 202, res.text
            seen = receive_until(
                ws, lambda m: is_event("turn-end")(m) and m["event"].get("reason") == "completed"
            )
        kinds = [e["type"] for e in events_of(seen, wid)]
        assert "error" not in kinds
        wait_for(lambda: idle(client, wid))
        status = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]
        assert not status.get("error")
    log = SessionLog.open(wid)
    assert [f.damaged for f in log.frames].count(True) == 1  # kept on disk, quarantined
    assert log.frames[-1].type == "turn_end"
    texts = [
        part["text"]
        for f in log.frames
        if f.type == "assistant_message"
        for part in f.data["message"]["content"]
        if part.get("type") == "text"
    ]
    assert texts == ["first answer", "second answer"]
    # The second request carried a valid history: the first exchange, then the new message.
    second = fake_llm.requests[1].json["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
