"""Usage-based automatic compaction through the engine, against the fake LLM server: before a
message at the threshold, between the steps of a tool loop and mid-reply past threshold + 5%;
off at 100%; only for a known context window; and the refusal of a request that cannot fit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.engine import engine_session
from xum.context import compaction as texts
from xum.engine.agent import AgentSession, SessionSettings
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.store import compaction_config as cc
from xum.store import frame_types as ev
from xum.store.config import update_config
from xum.store.projection import rebuild_history
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest

MODEL = "anthropic:claude-sonnet-5-5"
SUMMARY = "SUMMARY: big messages were exchanged."


def is_compaction(request: RecordedRequest) -> bool:
    return any('<agent id="compact"' in b["text"] for b in request.json.get("system", []))


def first_text(request: RecordedRequest) -> str:
    content = request.json["messages"][0]["content"]
    return content if isinstance(content, str) else content[0].get("text", "")


def block_texts(request: RecordedRequest) -> list[str]:
    out: list[str] = []
    for message in request.json["messages"]:
        out.extend(b["text"] for b in message["content"] if b.get("type") == "text")
    return out


def set_window(tokens: int, model: str = MODEL) -> None:
    def mutate(config: dict[str, Any]) -> None:
        config[cc.CONTEXT_WINDOWS_KEY] = {model: tokens}

    update_config(mutate)


class Auto:
    def __init__(self, server: FakeLLM, workdir: Path, model: str = MODEL) -> None:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
        self.route = resolve_route(model, env=env, config={})
        self.server = server
        self.workdir = workdir
        self.events: list[dict[str, Any]] = []
        self.client = open_client(self.route.endpoint, retry=RetryPolicy(max_retries=0))

    def session(self) -> AgentSession:
        return engine_session(
            self.workdir,
            self.route,
            self.client,
            ws_id="ws-auto",
            name="auto",
            settings=SessionSettings(system_prompt="You are a test.", tools=["bash"]),
            events=self.events,
        )

    def frames(self) -> list[Any]:
        return list(SessionLog.open("ws-auto").frames)


@pytest.fixture
async def auto(fake_llm: FakeLLM, tmp_path: Path) -> AsyncIterator[Auto]:
    a = Auto(fake_llm, tmp_path)
    yield a
    await a.client.aclose()


def assert_replayed(auto: Auto, server: FakeLLM) -> None:
    """Every step's request is on record: the log rebuilds each one byte for byte (the
    summarization requests are not steps)."""
    from xum.engine.replay import rebuild_requests

    sent = [r for r in server.requests if not is_compaction(r)]
    rebuilt = rebuild_requests(auto.frames())
    assert len(rebuilt) == len(sent)
    for recorded, request in zip(rebuilt, sent, strict=True):
        assert auto.client.request_body(recorded.request) == request.body


def summaries_or(reply: Any) -> Any:
    def respond(request: RecordedRequest) -> fakellm.Reply:
        return fakellm.text(SUMMARY) if is_compaction(request) else reply(request)

    return respond


async def test_a_message_at_the_threshold_is_sent_after_a_compaction(
    fake_llm: FakeLLM, auto: Auto
) -> None:
    set_window(6000)
    fake_llm.set_responder(summaries_or(lambda _r: fakellm.text("ok")))
    session = auto.session()
    limit = session.compactor.policy().limit
    assert limit == 4200  # 70% of 6000 by default
    crossed_at = None
    for i in range(30):
        before = session.compactor.tokens()
        message = f"message {i}: " + "lorem ipsum " * 100
        due = session.compactor.due_before_send(message)
        await session.run_turn(message)
        if due:
            crossed_at = (i, before)
            break
    assert crossed_at is not None, "the history never reached the threshold"
    frames = auto.frames()
    starts = [f for f in frames if f.type == ev.TURN_START]
    assert starts[-2].data.get("kind") == "compaction"  # the compaction ran first ...
    boundary = next(f for f in frames if f.type == ev.COMPACTION)
    assert boundary.data["trigger"] == "auto"
    # ... then the message went out, starting from the summary.
    last = fake_llm.requests[-1]
    assert block_texts(last) == [texts.COMPACTION_LEAD + SUMMARY, message]
    # The provider never saw a request larger than the window.
    assert max(r.cache.prompt_tokens for r in fake_llm.requests if r.cache) <= 6000
    assert_replayed(auto, fake_llm)


async def test_a_tool_loop_compacts_between_steps_and_goes_on(
    fake_llm: FakeLLM, auto: Auto
) -> None:
    set_window(8000)
    calls = {"n": 0}

    def reply(_request: RecordedRequest) -> fakellm.Reply:
        calls["n"] += 1
        if calls["n"] <= 12:
            script = f"python3 -c \"print('y' * 2500)\"  # pass {calls['n']}"
            return fakellm.tool_call("bash", {"script": script, "display_name": "print"})
        return fakellm.text("all done")

    fake_llm.set_responder(summaries_or(reply))
    session = auto.session()
    result = await session.run_turn("print a lot, many times")
    assert result.reason == "completed", result.error
    assert result.text == "all done"
    frames = auto.frames()
    assert [f.type for f in frames].count(ev.TURN_START) == 1  # one turn throughout
    boundaries = [f for f in frames if f.type == ev.COMPACTION]
    assert boundaries and all(b.data["trigger"] == "force" for b in boundaries)
    after = next(i for i, r in enumerate(fake_llm.requests) if is_compaction(r)) + 1
    assert first_text(fake_llm.requests[after]) == texts.COMPACTION_LEAD + SUMMARY
    history = rebuild_history(frames)
    assert history[0] == ev.summary_message(texts.COMPACTION_LEAD + SUMMARY)
    assert any(e["type"] == "advisory" and e["kind"] == "auto-compaction" for e in auto.events)
    assert_replayed(auto, fake_llm)


async def test_a_reply_past_threshold_plus_five_is_cut_compacted_and_resumed(
    fake_llm: FakeLLM, auto: Auto
) -> None:
    set_window(6000)
    replies = iter(
        [
            fakellm.text("short answer"),
            fakellm.text("word " * 3000, chunk_size=40),  # pushes far past 75% while streaming
            fakellm.text("resumed from the summary"),
        ]
    )
    fake_llm.set_responder(summaries_or(lambda _r: next(replies)))
    session = auto.session()
    await session.run_turn("hello " * 300)
    result = await session.run_turn("write an essay")
    assert result.reason == "completed" and result.text == "resumed from the summary"
    frames = auto.frames()
    cut = [f for f in frames if f.type == ev.ASSISTANT_MESSAGE][1]
    assert cut.data["finish_reason"] == "compaction"
    assert 0 < len(cut.data["message"]["content"][0]["text"]) < len("word " * 3000)
    boundary = next(f for f in frames if f.type == ev.COMPACTION)
    assert boundary.data["trigger"] == "force" and boundary.seq > cut.seq
    assert first_text(fake_llm.requests[-1]) == texts.COMPACTION_LEAD + SUMMARY
    assert_replayed(auto, fake_llm)


async def test_at_100_percent_nothing_compacts_and_an_oversized_request_is_refused(
    fake_llm: FakeLLM, auto: Auto
) -> None:
    set_window(3000)
    assert cc.set_threshold(MODEL, 100) == 100
    fake_llm.set_default(fakellm.text("ok"))
    session = auto.session()
    results = [await session.run_turn("chunk " * 200) for _ in range(12)]
    refused = next(r for r in results if r.reason == "error")
    assert refused.error is not None and refused.error["kind"] == "context_length"
    assert "3,000-token context window" in refused.error["message"]
    assert "/compact" in refused.error["hint"]
    assert ev.COMPACTION not in [f.type for f in auto.frames()]
    sent = len(fake_llm.requests)
    assert sent == results.index(refused)  # the refused turn sent nothing
    assert max(r.cache.prompt_tokens for r in fake_llm.requests if r.cache) <= 3000


async def test_no_known_window_means_no_automatic_compaction(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    # A model the table does not know, with no `contextWindows` entry: nothing is assumed.
    auto = Auto(fake_llm, tmp_path, model="anthropic:claude-private-test")
    try:
        fake_llm.set_default(fakellm.text("ok"))
        session = auto.session()
        assert session.compactor.policy().window is None
        for _ in range(5):
            await session.run_turn("chunk " * 2000)
        assert ev.COMPACTION not in [f.type for f in auto.frames()]
    finally:
        await auto.client.aclose()


def test_thresholds_are_saved_per_model_and_capped() -> None:
    assert cc.threshold_for(MODEL) == 70
    assert cc.set_threshold(MODEL, 95) == 90
    assert cc.set_threshold("openai:gpt-6.1-sol", 0) == 1
    assert cc.threshold_for(MODEL) == 90 and cc.threshold_for("openai:gpt-6.1-sol") == 1
    assert cc.set_threshold(MODEL, 100) == 100
    assert cc.threshold_for("anthropic:claude-haiku-5-5") == 70
