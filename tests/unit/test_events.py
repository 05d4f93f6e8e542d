"""The event vocabulary: every type is documented, objects are immutable, and serialization
leaves out absent fields while keeping the nulls that are values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xum.engine import events as E

DOCS = Path(__file__).resolve().parents[2] / "docs" / "events.md"


def test_every_event_type_is_in_docs_events_md() -> None:
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", DOCS.read_text(), flags=re.MULTILINE))
    types = set(E.event_types())
    assert len(types) > 25
    assert types - documented == set()


def test_absent_fields_are_left_out_and_meaningful_nulls_kept() -> None:
    reply = E.AssistantMessage(
        seq=3,
        ts=1,
        text="hi",
        reasoning="",
        tool_calls=[],
        finish_reason="stop",
        usage={"input_tokens": 1},
        cost_usd=None,
    )
    assert reply.to_dict() == {
        "type": "assistant-message",
        "seq": 3,
        "ts": 1,
        "text": "hi",
        "reasoning": "",
        "tool_calls": [],
        "finish_reason": "stop",
        "usage": {"input_tokens": 1},
        "cost_usd": None,  # no known price: a value, not an absence
    }
    crash = E.TurnEnd(seq=9, ts=1, turn_id="t", reason="interrupted", cause="crash")
    assert crash.to_dict() == {
        "type": "turn-end",
        "seq": 9,
        "ts": 1,
        "turn_id": "t",
        "reason": "interrupted",
        "cause": "crash",
    }
    end = E.TurnEnd(seq=9, ts=1, turn_id="t", reason="completed", usage={}, steps=1)
    assert end.to_dict()["cost_usd"] is None  # with usage, the cost is always there


def test_events_are_immutable_and_checked() -> None:
    delta = E.TextDelta(text="x")
    with pytest.raises(AttributeError):
        delta.text = "y"  # type: ignore[misc]
    with pytest.raises(TypeError, match="needs 'text'"):
        E.TextDelta()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="no field"):
        E.TextDelta(text="x", colour="red")  # type: ignore[call-arg]
    assert delta == E.TextDelta(text="x") and delta != E.ReasoningDelta(text="x")
