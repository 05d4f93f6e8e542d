"""Checks on a provider history: what every provider accepts."""

from __future__ import annotations

from xum.llm.types import Message


def assert_valid(history: list[Message]) -> None:
    """What every provider accepts: each tool call answered exactly once by the tool messages
    right after it, no tool message anywhere else, no empty assistant message or text part."""
    index = 0
    while index < len(history):
        message = history[index]
        index += 1
        if message["role"] == "tool":
            raise AssertionError(f"tool message without a preceding tool call: {message}")
        if message["role"] != "assistant":
            continue
        assert message["content"], "empty assistant message"
        calls = []
        for part in message["content"]:
            if part["type"] in ("text", "reasoning"):
                assert part["text"] or part.get("state"), "empty text part"
            elif part["type"] == "tool_call":
                calls.append(part["id"])
            else:
                raise AssertionError(f"unexpected part in an assistant message: {part}")
        assert len(set(calls)) == len(calls)
        answered = []
        while index < len(history) and history[index]["role"] == "tool":
            for part in history[index]["content"]:
                assert part["type"] == "tool_result"
                answered.append(part["call_id"])
            index += 1
        assert sorted(answered) == sorted(calls), (answered, calls)
