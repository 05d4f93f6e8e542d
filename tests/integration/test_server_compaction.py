"""Compaction through the server: `/compact`, `/clear` and `/idle` sent as messages, and Start
Here, against the real routes and the fake LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import make_repo
from tests.integration.context_harness import system_of, texts_of
from tests.integration.server_support import (
    AUTH,
    create_workspace,
    server_client,
    use_fake_llm,
    wait_for,
)
from xum.context import compaction as texts
from xum.store import compaction_config as cc
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest


def _send(client: Any, wid: str, text: str) -> Any:
    return client.post(f"/api/workspaces/{wid}/messages", json={"text": text}, headers=AUTH)


def _history(client: Any, wid: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = client.get(
        f"/api/workspaces/{wid}/history", headers=AUTH
    ).json()["events"]
    return events


def _settled(client: Any, wid: str, turns: int) -> bool:
    ends = [e for e in _history(client, wid) if e["type"] == "turn-end"]
    status = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]
    return len(ends) >= turns and status["state"] in ("idle", "error")


def respond(request: RecordedRequest) -> fakellm.Reply:
    if '<agent id="compact"' in system_of(request):
        return fakellm.text("We agreed on a plan for the parser.")
    return fakellm.text(f"answer {len(request.json['messages'])}")


def test_compact_and_clear_are_sent_like_messages(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.set_responder(respond)
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        assert _send(client, wid, "let us write a parser").status_code == 202
        wait_for(lambda: _settled(client, wid, 1))
        res = _send(client, wid, "/compact\ncarry on")
        assert res.status_code == 202 and res.json()["disposition"] == "started", res.text
        wait_for(lambda: _settled(client, wid, 3))
        events = _history(client, wid)
        types = [e["type"] for e in events]
        assert types.index("compaction-start") < types.index("compaction")
        compaction = next(e for e in events if e["type"] == "compaction")
        assert compaction["trigger"] == "manual"
        assert (
            compaction["summary"] == texts.COMPACTION_LEAD + "We agreed on a plan for the parser."
        )
        follow = fake_llm.requests[-1]
        assert texts_of(follow) == [compaction["summary"], "carry on"]

        res = _send(client, wid, "/clear")
        assert res.status_code == 202, res.text
        wait_for(lambda: any(e["type"] == "context-reset" for e in _history(client, wid)))
        reset = next(e for e in _history(client, wid) if e["type"] == "context-reset")
        assert reset["hard"] is True
        bad = _send(client, wid, "/compact -t few")
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "usage_error"


def test_idle_sets_the_projects_idle_compaction(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        ws = create_workspace(client, repo)
        res = _send(client, ws["id"], "/idle 24")
        assert res.status_code == 202, res.text
        body = res.json()
        assert body["disposition"] == "command" and body["command"] == "idle"
        assert body["idleHours"] == 24
        assert cc.idle_hours(ws["projectPath"]) == 24
        off = _send(client, ws["id"], "/idle off").json()
        assert off["idleHours"] is None and cc.idle_hours(ws["projectPath"]) is None
        for bad in ("/idle", "/idle soon", "/idle -3", "/idle 2 3"):
            res = _send(client, ws["id"], bad)
            assert res.status_code == 422 and "/idle" in res.json()["error"]["message"], bad
        assert _history(client, ws["id"]) == []


def test_start_here_makes_a_reply_the_whole_context(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "true", "display_name": "check"}),
        fakellm.text("Use a recursive descent parser."),
        fakellm.text("ok"),
    )
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        _send(client, wid, "how should I parse it?")
        wait_for(lambda: _settled(client, wid, 1))
        replies = [e for e in _history(client, wid) if e["type"] == "assistant-message"]
        url = f"/api/workspaces/{wid}/start-here"
        refused = client.post(url, json={"seq": replies[0]["seq"]}, headers=AUTH)
        assert refused.status_code == 422, refused.text  # it has tool calls
        res = client.post(url, json={"seq": replies[1]["seq"]}, headers=AUTH)
        assert res.status_code == 200, res.text
        boundary = next(e for e in _history(client, wid) if e["type"] == "compaction")
        assert boundary["seq"] == res.json()["seq"] and boundary["trigger"] == "start_here"
        assert boundary["source_seq"] == replies[1]["seq"]
        _send(client, wid, "go")
        wait_for(lambda: _settled(client, wid, 2))
    assert texts_of(fake_llm.requests[-1]) == [
        texts.REPLY_LEAD + "Use a recursive descent parser.",
        "go",
    ]


def test_idle_workspaces_are_compacted_and_badged(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.set_responder(respond)
    repo, other = make_repo(tmp_path / "repo"), make_repo(tmp_path / "other")
    with server_client(idle_check_s=0.2) as client:
        wid = create_workspace(client, repo)["id"]
        untouched = create_workspace(client, other)["id"]  # its project has no /idle
        for target in (wid, untouched):
            _send(client, target, "remember the parser work")
            wait_for(lambda t=target: _settled(client, t, 1))
        # 0.0002 hours is under a second: the next checks find the workspace idle.
        assert _send(client, wid, "/idle 0.0002").json()["idleHours"] == 0.0002

        def compacted() -> bool:
            return any(e["type"] == "compaction" for e in _history(client, wid))

        wait_for(compacted, timeout=20)
        wait_for(lambda: _settled(client, wid, 2))
        boundary = next(e for e in _history(client, wid) if e["type"] == "compaction")
        assert boundary["trigger"] == "idle"

        def badged() -> bool:
            ws = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()
            return bool(ws["idleCompactedSeq"] == ws["status"]["lastSeq"])

        wait_for(badged)
        # Already compacted: later checks leave it alone (one summarization request in all).
        count = sum(1 for r in fake_llm.requests if '<agent id="compact"' in system_of(r))
        assert count == 1
        assert not any(e["type"] == "compaction" for e in _history(client, untouched))
        # Activity clears the badge.
        _send(client, wid, "back again")
        wait_for(lambda: _settled(client, wid, 3))
        ws = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()
        assert ws["idleCompactedSeq"] < ws["status"]["lastSeq"]


def test_goal_in_the_composer_continues_until_complete(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(
        fakellm.text("Looking at the schema."),  # the kickoff (the objective as the message)
        fakellm.text("Wrote the migration."),  # continuation 1
        fakellm.tool_call("complete_goal", {"summary": "Migrated and tested."}),  # 2
        fakellm.text("Done."),
        fakellm.text("Later answer."),
    )
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        res = _send(client, wid, "/goal --turns 5 migrate the schema")
        assert res.status_code == 202 and res.json()["disposition"] == "started", res.text
        wait_for(lambda: _settled(client, wid, 3))
        events = _history(client, wid)
        assert events[0]["type"] == "goal" and events[0]["goal"]["source"] == "user"
        rows = [e for e in events if e["type"] == "user-message"]
        assert rows[0]["text"] == "migrate the schema"
        assert [r.get("kind") for r in rows[1:]] == ["goal_continuation", "goal_continuation"]
        done = next(e for e in events if e["type"] == "tool-result")
        assert done["meta"]["goal"]["status"] == "complete"
        # Complete: a later message is one turn, no more continuations.
        _send(client, wid, "thanks")
        wait_for(lambda: _settled(client, wid, 4))
        assert len(fake_llm.requests) == 5
        bad = _send(client, wid, "/goal --turns many x")
        assert bad.status_code == 422


def test_the_context_route_and_the_threshold_setting(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.set_default(fakellm.text("ok"))
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        url = f"/api/workspaces/{wid}/context"
        empty = client.get(url, headers=AUTH).json()
        assert empty["tokens"] is None and empty["threshold"] == 70
        assert empty["window"] == 1_000_000 and empty["autoCompact"] is True
        _send(client, wid, "hello")
        wait_for(lambda: _settled(client, wid, 1))
        used = client.get(url, headers=AUTH).json()
        reported = fake_llm.requests[0].cache.prompt_tokens  # type: ignore[union-attr]
        assert used["tokens"] >= reported and used["estimated"] is False
        put = "/api/settings/auto-compaction"
        res = client.put(put, json={"model": "sonnet", "threshold": 95}, headers=AUTH)
        assert res.json() == {"model": "anthropic:claude-sonnet-5-5", "threshold": 90}
        assert client.get(url, headers=AUTH).json()["threshold"] == 90
        off = client.put(put, json={"model": "sonnet", "threshold": 100}, headers=AUTH).json()
        assert off["threshold"] == 100
        assert client.get(url, headers=AUTH).json()["autoCompact"] is False
        for bad in (
            {"model": "sonnet", "threshold": 0},
            {"model": "not a model!", "threshold": 50},
        ):
            assert client.put(put, json=bad, headers=AUTH).status_code == 422
