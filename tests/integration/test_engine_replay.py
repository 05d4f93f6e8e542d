"""The exact request of every step can be rebuilt from the session log: over plan and exec
segments, a forced tool step, a one-shot model and thinking override, and a step that failed,
the rebuilt requests encode to the very bytes the fake LLM server received."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import make_repo
from tests.integration.context_harness import MODELS, ContextHarness
from xum.engine.replay import rebuild_request, rebuild_requests
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

OVERRIDES = {
    "anthropic": ("opus", "anthropic:claude-opus-5-5"),
    "openai-responses": ("luna", "openai:gpt-6-luna"),
}
BAD_REQUEST = {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}


@pytest.mark.parametrize("wire", sorted(MODELS))
async def test_every_step_request_is_rebuilt_byte_for_byte(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wire: str
) -> None:
    model, key_var, url_var = MODELS[wire]
    monkeypatch.setenv(key_var, "k")  # the one-shot override resolves its model from these
    monkeypatch.setenv(url_var, fake_llm.url)
    alias, override_model = OVERRIDES[wire]
    h = ContextHarness(fake_llm, make_repo(tmp_path / "repo"), wire=wire)
    clients: dict[str, Any] = {}
    try:
        h.plan_file.parent.mkdir(parents=True, exist_ok=True)
        h.plan_file.write_text("# Plan\n\nAlready written.\n")
        fake_llm.script(
            fakellm.tool_call("file_read", {"path": "app.py"}),
            fakellm.text("Here is what I would do."),  # forgets to propose: a forced step
            fakellm.tool_call("propose_plan", {}),
            fakellm.text("Proposed."),
        )
        session = h.session("plan", max_output_tokens=4096)
        await session.run_turn("plan it")
        session.set_mode("exec")  # another tool set: a new context segment
        fake_llm.script(
            fakellm.tool_call("bash", {"script": "echo hi", "display_name": "e"}),
            fakellm.text("Done."),
        )
        await session.run_turn("do it")
        fake_llm.script(fakellm.text("Thought hard."))
        await session.run_turn(f"/{alias}+high think it over")
        fake_llm.script(fakellm.error(400, BAD_REQUEST))
        failed = await session.run_turn("once more")
        assert failed.reason == "error"

        frames = SessionLog.open(h.ws_id).frames
        rebuilt = rebuild_requests(frames)
        assert len(rebuilt) == len(fake_llm.requests) == 8
        for recorded, sent in zip(rebuilt, fake_llm.requests, strict=True):
            if recorded.model not in clients:
                clients[recorded.model] = open_client(resolve_route(recorded.model).endpoint)
            assert clients[recorded.model].request_body(recorded.request) == sent.body, (
                recorded.turn_id,
                recorded.step,
            )
        choices = [r.request.tool_choice for r in rebuilt]
        assert choices == [None, None, {"name": "propose_plan"}, None, None, None, None, None]
        assert [r.model for r in rebuilt].count(override_model) == 1
        assert rebuilt[6].model == override_model and rebuilt[6].request.thinking == "high"
        assert rebuilt[7].model == model and rebuilt[7].request.thinking == "off"
        assert all(r.request.max_output_tokens == 4096 for r in rebuilt)

        # Headers only where the request's shape changed: the first step, the new segment, the
        # override turn and the turn after it.
        headers = [f for f in frames if f.type == ev.REQUEST_HEADER]
        assert len(headers) == 4
        turn, step = rebuilt[2].turn_id, rebuilt[2].step
        assert rebuild_request(frames, turn, step) == rebuilt[2].request
    finally:
        for client in clients.values():
            await client.aclose()
        await h.close()


async def test_a_log_without_request_headers_says_so(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.script(fakellm.text("hello"))
    h = ContextHarness(fake_llm, make_repo(tmp_path / "repo"))
    try:
        await h.session().run_turn("hi")
    finally:
        await h.close()
    frames = [f for f in SessionLog.open(h.ws_id).frames if f.type != ev.REQUEST_HEADER]
    with pytest.raises(ValueError, match="no request_header before it"):
        rebuild_requests(frames)


async def test_live_committed_events_are_exactly_the_replayed_ones(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every committed event a front-end sees live must be what `xum session --json` replays:
    # turns with tool calls, a queued message, a plan-mode segment and a failed step.
    from xum.engine.derive import replay_events

    _model, key_var, url_var = MODELS["anthropic"]
    monkeypatch.setenv(key_var, "k")
    monkeypatch.setenv(url_var, fake_llm.url)
    h = ContextHarness(fake_llm, make_repo(tmp_path / "repo"))
    try:
        fake_llm.script(
            fakellm.tool_call("bash", {"script": "echo one", "display_name": "e"}),
            fakellm.tool_call("file_read", {"path": "app.py"}),
            fakellm.text("Done."),
        )
        session = h.session()
        session.queue_message("and also this", "step")
        await session.run_turn("do it")
        session.set_mode("plan")
        fake_llm.script(fakellm.text("A plan."))
        await session.run_turn("plan it")
        fake_llm.script(fakellm.error(400, BAD_REQUEST))
        assert (await session.run_turn("once more")).reason == "error"
    finally:
        await h.close()
    live = [e for e in h.events if "seq" in e]
    replayed = [e.to_dict() for e in replay_events(SessionLog.open(h.ws_id).frames)]
    assert len(live) > 10
    assert {e["type"] for e in live} >= {
        "turn-start",
        "user-message",
        "context-frozen",
        "assistant-message",
        "tool-result",
        "turn-end",
    }
    assert any(e.get("queued") for e in live)
    assert live == replayed
