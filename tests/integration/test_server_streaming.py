"""Turns through the server: the WebSocket replays history then streams live events from a real
turn against the fake LLM server; reconnecting with `afterSeq` misses nothing; queues,
interrupts, errors, history pages and costs."""

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
    wait_for,
)
from xum.engine.derive import replay_events
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

LONG_TEXT = "".join(f"word{i} " for i in range(100))


def log_events(workspace_id: str) -> list[dict[str, Any]]:
    return [e.to_dict() for e in replay_events(SessionLog.open(workspace_id).frames)]


def test_subscribe_replays_history_then_streams_a_live_turn(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(
        fakellm.reply(
            "Looking.",
            fakellm.ToolCall("bash", {"script": "echo hi-from-bash", "display_name": "echo"}),
        ),
        fakellm.reply("All done."),
        fakellm.reply("Second answer."),
    )
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        # Turn 1 runs with nobody watching.
        res = client.post(f"/api/workspaces/{wid}/messages", json={"text": "run it"}, headers=AUTH)
        assert res.status_code == 202 and res.json() == {"disposition": "started", "when": None}
        wait_for(
            lambda: (
                client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]["state"]
                == "idle"
            )
        )
        with client.websocket_connect(WS_URL, headers=AUTH) as ws:
            assert ws.receive_json()["type"] == "hello"
            replay = subscribe(ws, wid)
            replayed = events_of(replay, wid)
            assert replayed == log_events(wid)  # exactly the committed history, in order
            kinds = [e["type"] for e in replayed]
            assert kinds[0] == "turn-start" and kinds[-1] == "turn-end"
            assert "tool-result" in kinds
            tool = next(e for e in replayed if e["type"] == "tool-result")
            assert "hi-from-bash" in tool["output"]
            subscribed = replay[-1]
            assert subscribed["lastSeq"] == replayed[-1]["seq"]
            assert subscribed["status"]["state"] == "idle"

            # Turn 2 streams live.
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "again"}, headers=AUTH)
            live = receive_until(ws, is_event("turn-end"))
        live_events = events_of(live, wid)
        deltas = "".join(e["text"] for e in live_events if e["type"] == "text-delta")
        assert deltas == "Second answer."
        committed = [e for e in live_events if "seq" in e]
        seqs = [e["seq"] for e in committed]
        assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
        assert seqs[0] == subscribed["lastSeq"] + 1
        statuses = [m["status"]["state"] for m in live if m["type"] == "workspace-status"]
        assert "streaming" in statuses
        # The live stream's committed events are the log's, seq for seq.
        by_seq = {e["seq"]: e["type"] for e in log_events(wid)}
        assert [(e["seq"], e["type"]) for e in committed] == [
            (s, t) for s, t in by_seq.items() if s > subscribed["lastSeq"]
        ]


def test_reconnect_mid_stream_misses_nothing(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(fakellm.reply(LONG_TEXT, chunk_size=7, delay=0.02))
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        with subscribed(client, wid) as ws1:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "write"}, headers=AUTH)
            deltas_seen = 0

            def enough(m: dict[str, Any]) -> bool:
                nonlocal deltas_seen
                if m.get("type") == "event" and m["event"]["type"] == "text-delta":
                    deltas_seen += 1
                return deltas_seen >= 5

            first = receive_until(ws1, enough)
        first_events = events_of(first, wid)
        last_seq = max(e["seq"] for e in first_events if "seq" in e)
        # The page reloads: a new socket resumes from the last committed seq it saw.
        with client.websocket_connect(WS_URL, headers=AUTH) as ws2:
            ws2.receive_json()
            resumed = subscribe(ws2, wid, last_seq)
            partials = [m for m in resumed if m["type"] == "partial"]
            assert len(partials) == 1, "the reply was still streaming: its partial comes first"
            partial = partials[0]
            assert partial["afterSeq"] == last_seq
            assert partial["message"]["text"]
            assert LONG_TEXT.startswith(partial["message"]["text"])
            rest = receive_until(ws2, is_event("turn-end"))
        second_events = events_of(resumed + rest, wid)
        # The partial plus the deltas after it are the whole reply, no gap, no overlap.
        after = "".join(e["text"] for e in second_events if e["type"] == "text-delta")
        assert partial["message"]["text"] + after == LONG_TEXT
        # Committed events over both sockets: every one of the log's, each once.
        seqs = [e["seq"] for e in first_events + second_events if "seq" in e]
        assert len(seqs) == len(set(seqs))
        assert seqs == [e["seq"] for e in log_events(wid)]
        final = next(e for e in second_events if e["type"] == "assistant-message")
        assert final["text"] == LONG_TEXT


def test_live_tool_output_reaches_subscribers_and_a_reconnect_picks_it_up(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    first, second = tmp_path / "first", tmp_path / "second"
    script = (
        f'echo live-one; while [ ! -e "{first}" ]; do sleep 0.01; done; echo live-two; '
        f'while [ ! -e "{second}" ]; do sleep 0.01; done; echo live-three'
    )
    fake_llm.script(
        fakellm.tool_call("bash", {"script": script, "display_name": "live"}, id="call_live"),
        fakellm.reply("Done."),
    )

    def output(kind: str) -> Any:
        return lambda m: (
            m.get("type") == "event"
            and m["event"]["type"] == "tool-output"
            and kind in m["event"]["text"]
        )

    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        with subscribed(client, wid) as ws1:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "run"}, headers=AUTH)
            seen = events_of(receive_until(ws1, output("live-one")), wid)
        assert "tool-result" not in [e["type"] for e in seen]
        live = seen[-1]
        assert live == {
            "type": "tool-output",
            "call_id": "call_live",
            "stream": "output",
            "text": "live-one\n",
        }
        last_seq = max(e["seq"] for e in seen if "seq" in e)
        first.touch()  # printed while no client is connected: that text is not replayed
        with client.websocket_connect(WS_URL, headers=AUTH) as ws2:
            ws2.receive_json()
            resumed = subscribe(ws2, wid, last_seq)
            assert not [m for m in resumed if m["type"] == "resync"]
            second.touch()
            rest = events_of(receive_until(ws2, is_event("turn-end")), wid)
        texts = "".join(e["text"] for e in rest if e["type"] == "tool-output")
        assert texts.endswith("live-three\n") and "live-one" not in texts
        result = next(e for e in rest if e["type"] == "tool-result")
        assert result["output"].startswith("live-one\nlive-two\nlive-three\n")
        outputs = [i for i, e in enumerate(rest) if e["type"] == "tool-output"]
        assert outputs and max(outputs) < rest.index(result)


def test_two_clients_see_the_same_stream(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(fakellm.reply("shared reply", chunk_size=3))
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        with (
            client.websocket_connect(WS_URL, headers=AUTH) as a,
            client.websocket_connect(WS_URL, headers=AUTH) as b,
        ):
            a.receive_json()
            b.receive_json()
            subscribe(a, wid)
            subscribe(b, wid)
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "x"}, headers=AUTH)
            got_a = events_of(receive_until(a, is_event("turn-end")), wid)
            got_b = events_of(receive_until(b, is_event("turn-end")), wid)
        assert got_a == got_b
        # Unsubscribed clients get no events, only statuses.


def test_queue_after_step_and_after_turn(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    release = tmp_path / "release"  # the tool runs until the test has queued both messages
    script = f"while [ ! -e {release} ]; do sleep 0.01; done; echo released"
    fake_llm.script(
        fakellm.tool_call("bash", {"script": script, "display_name": "wait"}),
        fakellm.reply("saw the step message"),
        fakellm.reply("second turn"),
    )
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        with subscribed(client, wid) as ws:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "start"}, headers=AUTH)
            receive_until(ws, is_event("tool-call"))  # the tool is running now
            step = client.post(
                f"/api/workspaces/{wid}/messages",
                json={"text": "also this", "when": "step"},
                headers=AUTH,
            )
            turn = client.post(
                f"/api/workspaces/{wid}/messages",
                json={"text": "then this", "when": "turn"},
                headers=AUTH,
            )
            status = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]
            release.touch()  # (before the checks: a failing one must not leave the tool held)
            assert step.json() == {"disposition": "queued", "when": "step"}
            assert turn.json() == {"disposition": "queued", "when": "turn"}
            # The texts themselves, in the order they will run (the composer lists them).
            assert status["queued"] == {
                "step": 1,
                "turn": 1,
                "messages": [
                    {"when": "step", "text": "also this", "truncated": False},
                    {"when": "turn", "text": "then this", "truncated": False},
                ],
            }
            first_turn = receive_until(ws, is_event("turn-end"))
            second_turn = receive_until(ws, is_event("turn-end"))
        users = [e for e in events_of(first_turn, wid) if e["type"] == "user-message"]
        assert users[-1]["text"] == "also this" and users[-1]["queued"] is True
        second = events_of(second_turn, wid)
        assert second[0]["type"] == "turn-start"
        assert [e["text"] for e in second if e["type"] == "user-message"] == ["then this"]
        # The step message reached the model right after the tool result.
        second_request = fake_llm.requests[1].json["messages"]
        assert "also this" in str(second_request[-1])
        wait_for(
            lambda: (
                client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]["queued"]
                == {"step": 0, "turn": 0, "messages": []}
            )
        )


def test_queued_texts_in_the_status_are_bounded(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from xum.server.hub import QUEUED_LISTED, QUEUED_PREVIEW_CHARS

    use_fake_llm(monkeypatch, fake_llm)
    release = tmp_path / "release"
    script = f"while [ ! -e {release} ]; do sleep 0.01; done; echo released"
    fake_llm.script(fakellm.tool_call("bash", {"script": script, "display_name": "wait"}))
    fake_llm.set_default(fakellm.reply("ok"))
    long = "x" * (QUEUED_PREVIEW_CHARS + 10)
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        with subscribed(client, wid) as ws:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "start"}, headers=AUTH)
            receive_until(ws, is_event("tool-call"))
            texts = [long] + [f"message {i}" for i in range(QUEUED_LISTED + 2)]
            for text in texts:
                client.post(
                    f"/api/workspaces/{wid}/messages",
                    json={"text": text, "when": "turn"},
                    headers=AUTH,
                )
            queued = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]["queued"]
            # Pushed to the socket too, as the sidebar status.
            pushed = receive_until(
                ws,
                lambda m: (
                    m.get("type") == "workspace-status"
                    and m["status"]["queued"]["turn"] == len(texts)
                ),
            )[-1]["status"]["queued"]
            cleared = client.delete(f"/api/workspaces/{wid}/queue", headers=AUTH).json()
            release.touch()
        assert queued == pushed
        assert queued["turn"] == len(texts)  # the count stays exact
        assert len(queued["messages"]) == QUEUED_LISTED
        first = queued["messages"][0]
        assert first["truncated"] is True and first["text"] == long[:QUEUED_PREVIEW_CHARS]
        assert queued["messages"][1] == {"when": "turn", "text": "message 0", "truncated": False}
        assert cleared["unsent"][0] == long  # the queue route hands back the whole text


def test_interrupt_stops_the_turn_and_hands_back_the_queue(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(fakellm.reply(LONG_TEXT, chunk_size=2, delay=0.02))
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        assert client.post(f"/api/workspaces/{wid}/interrupt", headers=AUTH).json() == {
            "interrupted": False,
            "unsent": [],
        }
        with subscribed(client, wid) as ws:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "go"}, headers=AUTH)
            receive_until(ws, is_event("text-delta"))
            client.post(
                f"/api/workspaces/{wid}/messages",
                json={"text": "later", "when": "turn"},
                headers=AUTH,
            )
            res = client.post(f"/api/workspaces/{wid}/interrupt", headers=AUTH)
            assert res.json() == {"interrupted": True, "unsent": ["later"]}
            end = receive_until(ws, is_event("turn-end"))[-1]["event"]
        assert end["reason"] == "interrupted"
        wait_for(
            lambda: (
                client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]["state"]
                == "idle"
            )
        )
        turn_starts = [e for e in log_events(wid) if e["type"] == "turn-start"]
        assert len(turn_starts) == 1  # the queued turn did not run


def test_provider_error_ends_the_turn_and_marks_the_workspace(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(fakellm.error(400, message="bad request from the test"))
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        with subscribed(client, wid) as ws:
            client.post(f"/api/workspaces/{wid}/messages", json={"text": "go"}, headers=AUTH)
            msgs = receive_until(ws, is_event("turn-end"))
        kinds = [e["type"] for e in events_of(msgs, wid)]
        assert "error" in kinds
        assert events_of(msgs, wid)[-1]["reason"] == "error"
        wait_for(
            lambda: (
                client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]["state"]
                == "error"
            )
        )
        status = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]
        assert status["error"]["message"]


def test_no_provider_is_a_clear_error(repo: Path) -> None:
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        res = client.post(f"/api/workspaces/{wid}/messages", json={"text": "go"}, headers=AUTH)
        assert res.status_code == 422
        assert res.json()["error"]["code"] == "config_error"
        empty = client.post(f"/api/workspaces/{wid}/messages", json={"text": "  "}, headers=AUTH)
        assert empty.status_code == 422
        bad_when = client.post(
            f"/api/workspaces/{wid}/messages", json={"text": "x", "when": "later"}, headers=AUTH
        )
        assert bad_when.status_code == 422
        missing = client.post("/api/workspaces/nope/messages", json={"text": "x"}, headers=AUTH)
        assert missing.status_code == 404


def test_history_pages_and_costs(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.set_default(fakellm.reply("ok"))
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        for i in range(3):
            client.post(f"/api/workspaces/{wid}/messages", json={"text": f"m{i}"}, headers=AUTH)
            wait_for(
                lambda n=i: (
                    sum(e["type"] == "turn-end" for e in log_events(wid)) == n + 1
                    and client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]["state"]
                    == "idle"
                )
            )
        everything = log_events(wid)
        pages: list[dict[str, Any]] = []
        after = 0
        while True:
            page = client.get(
                f"/api/workspaces/{wid}/history",
                params={"afterSeq": after, "limit": 4},
                headers=AUTH,
            ).json()
            pages.extend(page["events"])
            assert len(page["events"]) <= 4
            if not page["hasMore"]:
                break
            after = page["lastSeq"]
        assert pages == everything
        tail = client.get(
            f"/api/workspaces/{wid}/history", params={"beforeSeq": 10**6, "limit": 3}, headers=AUTH
        ).json()
        assert tail["events"] == everything[-3:] and tail["hasMore"] is True
        older = client.get(
            f"/api/workspaces/{wid}/history",
            params={"beforeSeq": tail["firstSeq"], "limit": 500},
            headers=AUTH,
        ).json()
        assert older["events"] + tail["events"] == everything and older["hasMore"] is False
        assert (
            client.get(
                f"/api/workspaces/{wid}/history", params={"limit": 501}, headers=AUTH
            ).status_code
            == 422
        )
        both = client.get(
            f"/api/workspaces/{wid}/history", params={"afterSeq": 1, "beforeSeq": 5}, headers=AUTH
        )
        assert both.status_code == 422

        costs = client.get(f"/api/workspaces/{wid}/costs", headers=AUTH).json()
        assert len(costs["turns"]) == 3
        assert all(t["reason"] == "completed" and t["steps"] == 1 for t in costs["turns"])
        replies = [e for e in everything if e["type"] == "assistant-message"]
        assert costs["usage"]["inputTokens"] == sum(r["usage"]["input_tokens"] for r in replies)
        assert costs["costUsd"] == pytest.approx(sum(r["cost_usd"] for r in replies))
        assert 0 < costs["cacheHitRatio"] < 1  # later turns reuse the cached prefix


def test_a_slash_command_that_cannot_run_is_refused_up_front(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.set_default(fakellm.reply("ok"))
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        res = client.post(f"/api/workspaces/{wid}/messages", json={"text": "/opus+"}, headers=AUTH)
        assert res.status_code == 422, res.text
        assert res.json()["error"]["code"] == "usage_error"
        assert fake_llm.requests == []
        # A one-shot override runs that message on the other model.
        ok = client.post(
            f"/api/workspaces/{wid}/messages", json={"text": "/haiku say hi"}, headers=AUTH
        )
        assert ok.status_code == 202
        wait_for(lambda: len(fake_llm.requests) == 1)
        assert fake_llm.requests[0].json["model"] == "claude-haiku-5-5"


def test_events_another_process_commits_reach_subscribers(repo: Path) -> None:
    from xum.llm.types import text_message
    from xum.store import frame_types as ev

    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        with subscribed(client, wid) as ws:
            # Another writer (as `xum run` would be) appends to the same log.
            other = SessionLog.open(wid, purpose="another process")
            other.append_many(
                [
                    (ev.TURN_START, {"turn_id": "t-ext"}),
                    (ev.USER_MESSAGE, {"message": text_message("user", "from elsewhere")}),
                ]
            )
            other.close()
            got = receive_until(ws, is_event("user-message"))
        events = events_of(got, wid)
        assert [e["type"] for e in events] == ["turn-start", "user-message"]
        assert events[1]["text"] == "from elsewhere" and events[1]["seq"] == 2


def test_slash_menu_lists_the_workspace_skills_and_aliases(repo: Path) -> None:
    skill = repo / ".xum" / "skills" / "fix-issue"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: fix-issue\ndescription: Fix an issue with a test first.\n"
        'argument-hint: "[number]"\n---\n\nFix issue #$1.\n'
    )
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        res = client.get(f"/api/workspaces/{wid}/slash", headers=AUTH)
        assert res.status_code == 200
        commands = {c["name"]: c for c in res.json()["commands"]}
        assert commands["/fix-issue"]["kind"] == "skill"
        assert commands["/fix-issue"]["usage"] == "[number]"
        assert commands["/opus"]["kind"] == "override"
        models = client.get("/api/settings/models", headers=AUTH).json()["models"]
        opus = next(m for m in models if m["model"] == "anthropic:claude-opus-5-5")
        assert opus["thinkingLevels"][0] == "low" and "max" in opus["thinkingLevels"]
