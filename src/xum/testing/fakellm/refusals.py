"""Scripted refusals, each in its wire's own words (a streamed reply, replayed byte for byte).

* Anthropic Messages: a text block (empty unless `text`), then `message_delta` with
  `stop_reason: "refusal"` and `stop_details` (`category`, `explanation`), as Anthropic sends it
  (the recorded tests/fixtures/anthropic-sse/refusal_response.txt is one such stream).
* OpenAI Chat Completions: the text as `delta.refusal` chunks, `finish_reason: "stop"`.
* OpenAI Responses: a message item whose content is a `refusal` part, streamed as
  `response.refusal.delta`, then `response.completed`.

Usage is reported on every wire, so the refused reply has a price. The stream ignores the
request (the model it echoes is `model`); the fake server still records the request, so a test
asserts on what was asked of which model.
"""

from __future__ import annotations

from typing import Any

import orjson

from xum.testing.fakellm.script import Replay, Reply, Wire

REFUSAL_TEXT = "I can't help with that request."


def refusal(
    wire: Wire = "anthropic",
    text: str = "",
    *,
    category: str | None = "cyber",
    explanation: str | None = "This request was refused due to policy.",
    input_tokens: int = 20,
    output_tokens: int = 10,
    model: str = "fake-model",
    label: str | None = None,
) -> Reply:
    """A streamed reply in which the model refuses. Chat and Responses always say something
    (`text`, or a stock sentence); Anthropic's refusal is often empty, as here by default.
    `category` and `explanation` go into Anthropic's `stop_details` (None leaves them out)."""
    if wire == "anthropic":
        body = _anthropic(text, category, explanation, input_tokens, output_tokens, model)
    elif wire == "openai-chat":
        body = _chat(text or REFUSAL_TEXT, input_tokens, output_tokens, model)
    else:
        body = _responses(text or REFUSAL_TEXT, input_tokens, output_tokens, model)
    return Reply(
        replay=Replay(data=body, source=f"refusal-{wire}"),
        wire=wire,
        label=label or f"refusal ({wire})",
    )


def _sse(frames: list[tuple[str | None, Any]]) -> bytes:
    out = bytearray()
    for event, data in frames:
        if event is not None:
            out += f"event: {event}\n".encode()
        payload = data if isinstance(data, bytes) else orjson.dumps(data)
        out += b"data: " + payload + b"\n\n"
    return bytes(out)


def _anthropic(
    text: str,
    category: str | None,
    explanation: str | None,
    input_tokens: int,
    output_tokens: int,
    model: str,
) -> bytes:
    details: dict[str, Any] = {"type": "refusal"}
    if category is not None:
        details["category"] = category
    if explanation is not None:
        details["explanation"] = explanation
    message: dict[str, Any] = {
        "id": "msg_fake_refusal",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    block = {"type": "text", "text": ""}
    frames: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": message}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
    ]
    if text:
        delta = {"type": "text_delta", "text": text}
        frames.append(
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
    stop = {"stop_reason": "refusal", "stop_sequence": None, "stop_details": details}
    frames += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": output_tokens}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return _sse(frames)


def _chat(text: str, input_tokens: int, output_tokens: int, model: str) -> bytes:
    def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake-refusal",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": choices,
            **extra,
        }

    def delta(body: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"index": 0, "delta": body, "finish_reason": finish}

    usage = {
        "prompt_tokens": input_tokens,
        "completion_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }
    frames: list[tuple[str | None, Any]] = [
        (None, chunk([delta({"role": "assistant", "content": None, "refusal": ""})])),
        (None, chunk([delta({"refusal": text})])),
        (None, chunk([delta({}, "stop")])),
        (None, chunk([], usage=usage)),
        (None, b"[DONE]"),
    ]
    return _sse(frames)


def _responses(text: str, input_tokens: int, output_tokens: int, model: str) -> bytes:
    ids = {"item_id": "msg_fake_refusal", "output_index": 0, "content_index": 0}
    item = {"type": "message", "id": "msg_fake_refusal", "role": "assistant", "status": "completed"}
    done = {**item, "content": [{"type": "refusal", "refusal": text}]}
    response = {"id": "resp_fake_refusal", "object": "response", "model": model}
    usage = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }
    frames: list[tuple[str | None, Any]] = [
        (
            "response.created",
            {
                "type": "response.created",
                "response": {**response, "status": "in_progress", "output": []},
            },
        ),
        (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "status": "in_progress", "content": []},
            },
        ),
        ("response.refusal.delta", {"type": "response.refusal.delta", **ids, "delta": text}),
        ("response.refusal.done", {"type": "response.refusal.done", **ids, "refusal": text}),
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": done},
        ),
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {**response, "status": "completed", "output": [done], "usage": usage},
            },
        ),
    ]
    return _sse(frames)
