"""A browser reloaded while a command runs sees the command's whole output: the new subscription
gets the committed events, then the running call and what it printed so far, then the live
deltas (docs/server.md: a reload picks every stream up where it left off)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def _has_output(text: str) -> Any:
    return lambda m: (
        m.get("type") == "event"
        and m["event"]["type"] == "tool-output"
        and text in m["event"]["text"]
    )


def test_a_reload_mid_command_shows_the_output_printed_before_it(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    barrier = tmp_path / "release"
    # A line every 0.1 s until the test releases it (bounded: 600 lines at most).
    script = (
        f'i=0; while [ ! -e "{barrier}" ] && [ $i -lt 600 ]; do i=$((i+1)); '
        "echo tick-$i; sleep 0.1; done; echo done"
    )
    fake_llm.script(
        fakellm.tool_call("bash", {"script": script, "display_name": "ticks"}, id="call_ticks"),
        fakellm.reply("Finished."),
    )
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        with subscribed(client, wid) as first:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "go"}, headers=AUTH)
            receive_until(first, _has_output("tick-3\n"))
        # The page reloads: a new socket subscribes from the start, as a fresh page does.
        with client.websocket_connect(WS_URL, headers=AUTH) as second:
            second.receive_json()
            snapshot = events_of(subscribe(second, wid, 0), wid)
            running = [e for e in snapshot if e["type"] == "tool-call"]
            assert [e["call_id"] for e in running] == ["call_ticks"]
            replayed = "".join(e["text"] for e in snapshot if e["type"] == "tool-output")
            assert replayed.startswith("tick-1\ntick-2\ntick-3\n")
            barrier.touch()
            rest = events_of(receive_until(second, is_event("turn-end")), wid)
        live = "".join(e["text"] for e in rest if e["type"] == "tool-output")
        result = next(e for e in rest if e["type"] == "tool-result")
        # What the page shows (the replay, then the deltas) is the command's whole output,
        # every line once, none missing.
        shown = replayed + live
        assert result["output"].startswith(shown)
        ticks = [line for line in shown.splitlines() if line.startswith("tick-")]
        assert ticks == [f"tick-{i}" for i in range(1, len(ticks) + 1)]
        assert shown.endswith("done\n")


def test_a_finished_command_leaves_nothing_to_replay(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "echo once", "display_name": "once"}, id="c1"),
        fakellm.reply("Done."),
    )
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        with subscribed(client, wid) as ws:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "go"}, headers=AUTH)
            receive_until(ws, is_event("turn-end"))
        with client.websocket_connect(WS_URL, headers=AUTH) as fresh:
            fresh.receive_json()
            snapshot = events_of(subscribe(fresh, wid, 0), wid)
        # The committed result is there; no live output or running call is sent again.
        assert [e for e in snapshot if e["type"] in ("tool-output", "tool-call")] == []
        assert any(e["type"] == "tool-result" for e in snapshot)
