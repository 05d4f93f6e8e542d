"""What a reply costs when the provider does not say: a server that reports no token usage
must leave the cost unknown (never $0.00), and a budget that can no longer be counted stops
the session. The fake server replays an Anthropic stream with every usage field left out."""

from __future__ import annotations

from pathlib import Path

from tests.support.engine import Harness, unmeasured
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


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
