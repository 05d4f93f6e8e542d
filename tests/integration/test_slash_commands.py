"""Slash commands through the engine (the path the server uses): a one-shot override affects
one message only; a skill invocation becomes the skill's body."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contextkit import make_repo, write
from tests.integration.context_harness import ContextHarness, texts_of
from xum.core.errors import UsageError
from xum.store import events as ev
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
        assert len(fake_llm.requests) == 3  # the bad command sent nothing
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
