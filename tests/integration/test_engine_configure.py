"""A session's model, thinking level and agent change for the next turn without reopening
(`AgentSession.configure`), and a one-shot override is the turn's, never the session's.

The session's events are watched synchronously: the sink sees `step-start` while the turn runs,
so what the test does there happens mid-turn, with no sleeps and no second task.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.engine import Harness, as_dicts, engine_session, no_retry_client
from xum.engine.agent import AgentSession, SessionSettings
from xum.engine.replay import rebuild_requests
from xum.engine.route import resolve_route
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import MODEL, fake_route

OTHER = "anthropic:claude-opus-5-5"


def on_first_step(action: Callable[[], None]) -> Callable[[dict[str, Any]], None]:
    """An event sink that runs `action` at the first `step-start` it sees (mid-turn)."""
    done: list[bool] = []

    def sink(event: dict[str, Any]) -> None:
        if event["type"] == "step-start" and not done:
            done.append(True)
            action()

    return sink


def turn_models(ws_id: str) -> list[str]:
    return [str(f.data["model"]) for f in SessionLog.open(ws_id).frames if f.type == ev.TURN_START]


async def test_configure_mid_turn_takes_effect_at_the_next_turn(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    h = Harness(fake_llm, tmp_path)
    seen: dict[str, str] = {}
    holder: list[AgentSession] = []

    def change() -> None:
        session = holder[0]
        session.configure(route=fake_route(fake_llm, OTHER), thinking="high", agent="plan")
        # The running turn keeps what it started with.
        seen["model"], seen["thinking"] = session.route.model_string, session.thinking
        seen["agent"] = session.agent_id

    try:
        session = h.session(emit=on_first_step(change), thinking="off")
        holder.append(session)
        first_client = session.client
        fake_llm.script(fakellm.text("one"), fakellm.text("two"))
        await session.run_turn("first")
        assert seen == {"model": MODEL, "thinking": "off", "agent": "exec"}
        # Between turns the session reports what the next turn will use.
        assert (session.route.model_string, session.thinking, session.agent_id) == (
            OTHER,
            "high",
            "plan",
        )
        assert session.client is first_client  # same endpoint: the client is kept
        await session.run_turn("second")
        assert turn_models(h.ws_id) == [MODEL, OTHER]
        sent = rebuild_requests(SessionLog.open(h.ws_id).frames)
        assert [(r.model, r.request.thinking) for r in sent] == [(MODEL, "off"), (OTHER, "high")]
        await session.aclose()
    finally:
        await h.close()


async def test_configure_between_turns_applies_at_once_with_a_client_of_its_own(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    route = fake_route(fake_llm)
    client = no_retry_client(route)
    events: list[dict[str, Any]] = []
    session = engine_session(
        tmp_path,
        route,
        client,
        settings=SessionSettings(system_prompt="You are a test.", thinking="off"),
        emit=as_dicts(events.append),
    )
    try:
        # Another key: another endpoint, so the session opens (and later closes) its own client.
        env = {"ANTHROPIC_API_KEY": "second-key", "ANTHROPIC_BASE_URL": fake_llm.url}
        session.configure(route=resolve_route(OTHER, env=env, config={}))
        assert session.client is not client
        assert session.client.endpoint.api_key == "second-key"
        fake_llm.script(fakellm.text("hi"))
        result = await session.run_turn("hello")
        assert result.reason == "completed"
        assert fake_llm.requests[-1].headers.get("x-api-key") == "second-key"
        assert turn_models("ws-test") == [OTHER]
        with pytest.raises(ValueError, match="client comes with the route"):
            session.configure(client=client)
    finally:
        await session.aclose()
        await client.aclose()


async def test_a_one_shot_override_is_the_turns_not_the_sessions(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")  # the override resolves its model from these
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    h = Harness(fake_llm, tmp_path)
    holder: list[AgentSession] = []
    during: dict[str, str] = {}

    def look() -> None:
        session = holder[0]
        during["model"], during["thinking"] = session.route.model_string, session.thinking
        during["configured"] = session.settings.thinking

    try:
        session = h.session(emit=on_first_step(look), thinking="off")
        holder.append(session)
        fake_llm.script(fakellm.text("thought"))
        await session.run_turn("/opus+high think it over")
        assert during == {"model": OTHER, "thinking": "high", "configured": "off"}
        assert (session.route.model_string, session.thinking) == (MODEL, "off")
        assert session.settings.thinking == "off"
    finally:
        await h.close()
