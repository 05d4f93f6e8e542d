"""Slash commands through the engine (the path the server uses): a one-shot override affects
one message only; a skill invocation becomes the skill's body. Then the chat commands the
server carries out itself (`/model`, `/fork`), against its real routes and the fake LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.contextkit import write
from tests.gitrepo import make_repo
from tests.integration.context_harness import ContextHarness, texts_of
from tests.integration.server_support import (
    AUTH,
    create_workspace,
    server_client,
    use_fake_llm,
    wait_for,
)
from xum.core.errors import UsageError
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


async def test_a_one_shot_override_lasts_one_message(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The override resolves its model the way the CLI and server do: from the environment.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    h = ContextHarness(fake_llm, make_repo(tmp_path / "repo"))
    try:
        session = h.session(thinking="off")
        fake_llm.script(fakellm.text("a"), fakellm.text("b"), fakellm.text("c"))
        await session.run_turn("/haiku quick question")
        await session.run_turn("/+high think hard")
        await session.run_turn("normal again")
        first, second, third = (r.json for r in fake_llm.requests)
        assert (
            first["model"] == "claude-haiku-5-5"
            and texts_of(fake_llm.requests[0])[-1] == "quick question"
        )
        assert second["model"] == "claude-sonnet-5-5" and second["thinking"]["type"] != "disabled"
        assert third["model"] == "claude-sonnet-5-5" and third["thinking"] == {"type": "disabled"}
        assert session.route.model_string == "anthropic:claude-sonnet-5-5"
        with pytest.raises(UsageError):
            await session.run_turn("/+ nothing")
        # The server carries out /model and /fork before a session sees them; a session that
        # gets one anyway refuses it rather than sending the command to the model as text.
        for command in ("/model opus", "/fork other"):
            with pytest.raises(UsageError, match=command.split()[0]):
                await session.run_turn(command)
        assert len(fake_llm.requests) == 3  # the bad commands sent nothing
    finally:
        await h.close()


async def test_a_skill_invocation_is_recorded_with_what_was_typed(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    write(
        repo / ".xum/skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: ship it\n---\nShip $1.\n",
    )
    h = ContextHarness(fake_llm, repo)
    try:
        fake_llm.script(fakellm.text("shipping"))
        await h.session().run_turn("/deploy staging")
    finally:
        await h.close()
    assert "Ship staging." in texts_of(fake_llm.requests[0])[-1]
    user = next(f for f in SessionLog.open(h.ws_id).frames if f.type == ev.USER_MESSAGE)
    assert user.data["typed"] == "/deploy staging"
    assert user.data["slash"] == {"kind": "skill", "name": "deploy", "arguments": "staging"}


# ---- Chat commands through the server (`/model`, `/fork`) --------------------------------------


def _send(client: Any, wid: str, text: str, when: str = "step") -> Any:
    return client.post(
        f"/api/workspaces/{wid}/messages", json={"text": text, "when": when}, headers=AUTH
    )


def _history(client: Any, wid: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = client.get(
        f"/api/workspaces/{wid}/history", headers=AUTH
    ).json()["events"]
    return events


def _idle(client: Any, wid: str) -> bool:
    status = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]
    return bool(status["state"] == "idle" and status["lastSeq"] > 0)


def test_the_slash_route_lists_commands_skills_aliases_and_thinking(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / ".xum/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: ship\n---\nGo.\n")
    # Skills named like a chat command or an alias are shadowed, so not offered.
    write(repo / ".xum/skills/fork/SKILL.md", "---\nname: fork\ndescription: mine\n---\nMine.\n")
    write(repo / ".xum/skills/opus/SKILL.md", "---\nname: opus\ndescription: mine\n---\nMine.\n")
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        res = client.get(f"/api/workspaces/{wid}/slash", headers=AUTH)
        assert res.status_code == 200
        commands = res.json()["commands"]
    by_name = {c["name"]: c for c in commands}
    assert [c["name"] for c in commands[:2]] == ["/model", "/fork"]
    assert by_name["/model"]["kind"] == by_name["/fork"]["kind"] == "command"
    assert by_name["/model"]["usage"] == "<alias|provider:model>"
    assert by_name["/deploy"]["kind"] == "skill"
    assert by_name["/opus"]["kind"] == "override"  # the alias, not the shadowed skill
    skills = [c["name"] for c in commands if c["kind"] == "skill"]
    assert "/fork" not in skills and "/opus" not in skills
    assert [c["name"] for c in commands].count("/fork") == 1
    assert commands[-1]["name"] == "/+" and commands[-1]["kind"] == "override"


def test_model_command_changes_the_model_and_sends_nothing(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = make_repo(tmp_path / "repo")
    with server_client() as client:
        wid = create_workspace(client, repo, model="opus")["id"]
        res = _send(client, wid, "/model sonnet")
        assert res.status_code == 202, res.text
        body = res.json()
        assert body["disposition"] == "command" and body["command"] == "model"
        assert body["workspace"]["id"] == wid
        assert body["workspace"]["model"] == "anthropic:claude-sonnet-5-5"
        got = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()
        assert got["model"] == "anthropic:claude-sonnet-5-5"
        assert _history(client, wid) == []

        # Errors: no model, an unknown one, extra words or lines. The model stays as it was.
        bare = _send(client, wid, "/model")
        assert bare.status_code == 422 and bare.json()["error"]["code"] == "usage_error"
        assert "/model needs a model" in bare.json()["error"]["message"]
        unknown = _send(client, wid, "/model no-such-model-xyz")
        assert unknown.status_code == 422
        assert unknown.json()["error"]["message"].startswith("model:")
        for extra in ("/model opus fix it", "/model opus\nand a message"):
            res = _send(client, wid, extra)
            assert res.status_code == 422
            assert "one model and nothing else" in res.json()["error"]["message"]
        assert client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["model"] == got["model"]
        assert _history(client, wid) == []
    assert fake_llm.requests == []  # nothing reached the model

    # `/models ...` is not the command: it is sent as typed, with the new model.
    fake_llm.script(fakellm.text("plain"))
    with server_client() as client:
        assert _send(client, wid, "/models are fun").json()["disposition"] == "started"
        wait_for(lambda: _idle(client, wid))
    assert [r.json["model"] for r in fake_llm.requests] == ["claude-sonnet-5-5"]
    assert texts_of(fake_llm.requests[0])[-1] == "/models are fun"


def test_fork_command_forks_and_sends_the_following_lines(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = make_repo(tmp_path / "repo")
    fake_llm.script(fakellm.text("first answer"), fakellm.text("fork answer"))
    with server_client() as client:
        source = create_workspace(client, repo, "worktree")
        wid = source["id"]
        assert _send(client, wid, "hello").status_code == 202
        wait_for(lambda: _idle(client, wid))
        before = len(_history(client, wid))

        # A bare /fork: a fork with the conversation, and no request to the model.
        res = _send(client, wid, "/fork", when="turn")
        assert res.status_code == 202, res.text
        plain = res.json()
        assert plain["disposition"] == "command" and plain["command"] == "fork"
        assert plain["workspace"]["id"] != wid and plain["forkMessage"] is None
        assert len(_history(client, plain["workspace"]["id"])) == before  # the conversation
        assert len(fake_llm.requests) == 1

        # A named fork with its first message on the lines below.
        res = _send(client, wid, "/fork try-redis\n\nnow use redis\nplease")
        body = res.json()
        fork = body["workspace"]
        assert res.status_code == 202 and body["forkMessage"] == "started"
        assert fork["name"] == "try-redis"
        assert fork["runtime"]["type"] == "worktree" and fork["branch"] == "try-redis"
        wait_for(lambda: _idle(client, fork["id"]) and len(fake_llm.requests) == 2)
        wait_for(
            lambda: (
                client.get(f"/api/workspaces/{fork['id']}", headers=AUTH).json()["status"]["state"]
                == "idle"
            )
        )
        assert texts_of(fake_llm.requests[1])[-1] == "now use redis\nplease"
        # The fork carries the source's conversation; the source got nothing new.
        assert "hello" in texts_of(fake_llm.requests[1])
        assert len(_history(client, wid)) == before

        # Errors: two words on the command line, a taken name.
        two = _send(client, wid, "/fork two words")
        assert two.status_code == 422 and two.json()["error"]["code"] == "usage_error"
        taken = _send(client, wid, "/fork try-redis")
        assert taken.status_code == 409 and taken.json()["error"]["code"] == "name_taken"
        names = [
            w["name"] for w in client.get("/api/workspaces", headers=AUTH).json()["workspaces"]
        ]
        assert names.count("try-redis") == 1 and len(names) == 3
    assert len(fake_llm.requests) == 2


def test_fork_command_keeps_the_fork_when_its_message_cannot_start(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")  # and no provider key anywhere
    with server_client() as client:
        wid = create_workspace(client, repo, "worktree")["id"]
        res = _send(client, wid, "/fork no-key\nstart here")
        assert res.status_code == 202, res.text
        body = res.json()
        assert body["forkMessage"] is None
        assert body["forkMessageError"]["code"] == "config_error"
        fork = client.get(f"/api/workspaces/{body['workspace']['id']}", headers=AUTH)
        assert fork.status_code == 200 and fork.json()["name"] == "no-key"
