"""Helpers for the sub-agent tests: a fake model that answers each agent by a key in its prompt."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest

Step = fakellm.Reply | Callable[[RecordedRequest], fakellm.Reply]


def tool_results(req: RecordedRequest) -> str:
    out = []
    for message in req.json["messages"]:
        if message["role"] != "user" or isinstance(message["content"], str):
            continue
        for block in message["content"]:
            if block.get("type") != "tool_result":
                continue
            content = block.get("content")
            if isinstance(content, str):
                out.append(content)
            else:
                out.extend(b.get("text", "") for b in content or [])
    return "\n".join(out)


class Agents:
    """Routes each request to the script whose key appears in its user messages; the step is
    the number of assistant messages already in the history."""

    def __init__(self) -> None:
        self.scripts: dict[str, list[Step]] = {}

    def add(self, key: str, *steps: Step) -> None:
        self.scripts[key] = list(steps)

    def __call__(self, req: RecordedRequest) -> fakellm.Reply:
        texts = user_texts(req)
        for key, steps in self.scripts.items():
            if key in texts:
                step = sum(1 for m in req.json["messages"] if m["role"] == "assistant")
                item = steps[min(step, len(steps) - 1)]
                return item(req) if callable(item) else item
        return fakellm.text(f"no script for {texts[:80]!r}")

    def requests_of(self, server: FakeLLM, key: str) -> list[RecordedRequest]:
        return [r for r in server.requests if r.json and key in user_texts(r)]


def bash(script: str) -> fakellm.ToolCall:
    return call("bash", script=script, display_name="step")


async def until(predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition never became true"
        await asyncio.sleep(0.01)


def user_texts(req: RecordedRequest) -> str:
    out = []
    for message in req.json["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
            continue
        out.extend(b.get("text", "") for b in content if b.get("type") == "text")
    return "\n".join(out)


def call(name: str, **arguments: Any) -> fakellm.ToolCall:
    return fakellm.ToolCall(name, arguments)
