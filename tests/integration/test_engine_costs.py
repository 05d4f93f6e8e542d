"""What a reply costs when the provider does not say: a server that reports no token usage
must leave the cost unknown (never $0.00), and a budget that can no longer be counted stops
the session. The fake server replays an Anthropic stream with every usage field left out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from tests.integration.test_engine import Harness
from xum.store import events as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def unmeasured(*blocks: dict[str, object], stop: str = "end_turn") -> fakellm.Reply:
    """An Anthropic stream with no `usage` anywhere (some compatible servers send none)."""
    events: list[dict[str, object]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
        }
    ]
    for index, block in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": stop}})
    events.append({"type": "message_stop"})
    data = b"".join(
        b"event: " + str(e["type"]).encode() + b"\ndata: " + orjson.dumps(e) + b"\n\n"
        for e in events
    )
    return fakellm.Reply(replay=fakellm.Replay(data))


@pytest.fixture
async def harness(fake_llm: FakeLLM, tmp_path: Path) -> AsyncIterator[Harness]:
    h = Harness(fake_llm, tmp_path)
    yield h
    await h.close()


async def test_a_reply_without_usage_has_an_unknown_cost(
    fake_llm: FakeLLM, harness: Harness
) -> None:
    assert harness.route.price is not None  # a priced model: only the usage is missing
    fake_llm.script(unmeasured({"type": "text", "text": "Was this free?"}))
    result = await harness.session().run_turn("hello")
    assert result.reason == "completed" and result.cost_usd is None
    (reply,) = [f for f in SessionLog.open(harness.ws_id).frames if f.type == ev.ASSISTANT_MESSAGE]
    assert reply.data["cost_usd"] is None
    (usage,) = [e for e in harness.events if e["type"] == "usage"]
    assert usage["turn_cost_usd"] is None and usage["session_cost_usd"] is None


async def test_a_measured_reply_is_priced(fake_llm: FakeLLM, harness: Harness) -> None:
    fake_llm.script(fakellm.text("Counted."))
    result = await harness.session().run_turn("hello")
    assert result.cost_usd is not None and result.cost_usd > 0


async def test_a_budget_stops_once_a_reply_cannot_be_counted(
    fake_llm: FakeLLM, harness: Harness, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    call = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "bash",
        "input": {"script": f"touch {marker}"},
    }
    fake_llm.script(unmeasured(call, stop="tool_use"))
    result = await harness.session(budget_usd=5.0).run_turn("do it")
    assert result.reason == "budget" and not marker.exists()
    (advisory,) = [e for e in harness.events if e["type"] == "advisory"]
    assert advisory["kind"] == "budget-unmeasured"
    assert "can no longer be enforced" in advisory["message"]
