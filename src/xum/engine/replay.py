"""Turn session-log frames back into engine events, for replays and reconnecting clients.

A live client sees deltas while a turn streams; a replay sees the committed events that the
deltas added up to. Both use the same event vocabulary (see `xum.engine.events`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from xum.engine import events as E
from xum.engine.events import Event
from xum.store import events as ev
from xum.store.frames import Frame


def _text(message: dict[str, Any], kind: str = "text") -> str:
    return "".join(p.get("text", "") for p in message.get("content", []) if p.get("type") == kind)


def frame_event(frame: Frame) -> Event | None:
    """The event a frame stands for, or None for bookkeeping frames clients need not see."""
    base: Event = {"seq": frame.seq, "ts": frame.ts}
    if frame.damaged:
        return {
            **base,
            "type": "damaged-frame",
            "raw": (frame.raw or b"")[:2000].decode("utf-8", "replace"),
        }
    data = frame.data
    if frame.type == ev.TURN_START:
        return {**base, "type": E.TURN_START, "turn_id": data.get("turn_id")}
    if frame.type in (ev.USER_MESSAGE, ev.SYNTHETIC_MESSAGE):
        event = {**base, "type": E.USER_MESSAGE, "text": _text(data["message"])}
        if frame.type == ev.SYNTHETIC_MESSAGE:
            event["synthetic"] = True
            event["kind"] = data.get("kind")
            if "changed" in data:
                event["changed"] = data["changed"]
        elif "typed" in data:  # a slash command: what the user typed, and what it was
            event["typed"] = data["typed"]
            event["slash"] = data.get("slash")
        return event
    if frame.type == ev.CONTEXT_FROZEN:
        return {
            **base,
            "type": E.CONTEXT_FROZEN,
            "reason": data.get("reason"),
            "agent": data.get("agent"),
            "mode": data.get("mode"),
            "tools": [t.get("name") for t in data.get("tools", []) if isinstance(t, dict)],
        }
    if frame.type == ev.ASSISTANT_MESSAGE:
        message = data["message"]
        return {
            **base,
            "type": E.ASSISTANT_MESSAGE,
            "text": _text(message),
            "reasoning": _text(message, "reasoning"),
            "tool_calls": [
                {"id": p["id"], "name": p["name"], "arguments": p["arguments"]}
                for p in message.get("content", [])
                if p.get("type") == "tool_call"
            ],
            "finish_reason": data.get("finish_reason"),
            "usage": data.get("usage"),
            "cost_usd": data.get("cost_usd"),
            "model": data.get("model"),
        }
    if frame.type == ev.TOOL_RESULT:
        part = next((p for p in data["message"]["content"] if p.get("type") == "tool_result"), None)
        if part is None:
            return None
        return {
            **base,
            "type": E.TOOL_RESULT,
            "call_id": part["call_id"],
            "name": part["name"],
            "is_error": bool(part.get("is_error")),
            "output": part["output"],
            "meta": data.get("meta", {}),
        }
    if frame.type == ev.TURN_END:
        return {**base, "type": E.TURN_END, **{k: v for k, v in data.items()}}
    if frame.type == ev.COMPACTION:
        return {**base, "type": "compaction", "summary": data.get("summary", "")}
    if frame.type == ev.CONTEXT_RESET:
        return {**base, "type": "context-reset"}
    return None


def replay_events(frames: Iterable[Frame]) -> Iterator[Event]:
    for frame in frames:
        event = frame_event(frame)
        if event is not None:
            yield event
