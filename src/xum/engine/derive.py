"""From a frame of the session log to the event it stands for: the one function that does it.

The engine's recorder calls `frame_event` on each frame right after appending it, the server
calls it to fill a backlog or a gap, and `xum session --json` calls it to replay a log. A frame
that is not the expected shape (a hand edit, an older xum) gives what can be read from it, never
an invented value; bookkeeping frames clients need not see (`step_start`, `request_header`,
`plan_snapshot`) give None.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from xum.engine import events as E
from xum.store import events as ev
from xum.store.frames import Frame


def _text(message: Any, kind: str = "text") -> str:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return ""
    return "".join(
        str(p.get("text", ""))
        for p in message["content"]
        if isinstance(p, dict) and p.get("type") == kind
    )


def _calls(message: Any) -> list[dict[str, Any]]:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return []
    return [
        {"id": p.get("id"), "name": p.get("name"), "arguments": p.get("arguments")}
        for p in message["content"]
        if isinstance(p, dict) and p.get("type") == "tool_call"
    ]


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _opt_dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def frame_event(frame: Frame) -> E.Committed | None:
    """The event `frame` stands for, or None for bookkeeping frames."""
    seq, ts = frame.seq, frame.ts
    if frame.damaged:
        raw = (frame.raw or b"")[:2000].decode("utf-8", "replace")
        return E.DamagedFrame(seq=seq, ts=ts, raw=raw)
    data = frame.data
    kind = frame.type
    if kind == ev.TURN_START:
        return E.TurnStart(
            seq=seq,
            ts=ts,
            turn_id=str(data.get("turn_id", "")),
            model=_opt_str(data.get("model")),
            kind=_opt_str(data.get("kind")),
        )
    if kind == ev.USER_MESSAGE:
        return E.UserMessage(
            seq=seq,
            ts=ts,
            text=_text(data.get("message")),
            queued=True if data.get("queued") else None,
            typed=_opt_str(data.get("typed")),
            slash=_opt_dict(data.get("slash")) if "typed" in data else None,
        )
    if kind == ev.SYNTHETIC_MESSAGE:
        changed = data.get("changed")
        return E.UserMessage(
            seq=seq,
            ts=ts,
            text=_text(data.get("message")),
            synthetic=True,
            kind=_opt_str(data.get("kind")),
            changed=[str(c) for c in changed] if isinstance(changed, list) else None,
        )
    if kind == ev.CONTEXT_FROZEN:
        tools = data.get("tools")
        return E.ContextFrozen(
            seq=seq,
            ts=ts,
            reason=_opt_str(data.get("reason")),
            agent=_opt_str(data.get("agent")),
            mode=_opt_str(data.get("mode")),
            tools=[
                str(t.get("name"))
                for t in (tools if isinstance(tools, list) else [])
                if isinstance(t, dict)
            ],
        )
    if kind == ev.ASSISTANT_MESSAGE:
        message = data.get("message")
        cost = data.get("cost_usd")
        return E.AssistantMessage(
            seq=seq,
            ts=ts,
            text=_text(message),
            reasoning=_text(message, "reasoning"),
            tool_calls=_calls(message),
            finish_reason=_opt_str(data.get("finish_reason")),
            usage=_opt_dict(data.get("usage")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
            model=_opt_str(data.get("model")),
            step=_opt_int(data.get("step")),
        )
    if kind == ev.TOOL_RESULT:
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        part = next(
            (
                p
                for p in (content if isinstance(content, list) else [])
                if isinstance(p, dict) and p.get("type") == "tool_result"
            ),
            None,
        )
        if part is None:
            return None
        duration = data.get("duration_s")
        return E.ToolResult(
            seq=seq,
            ts=ts,
            call_id=str(part.get("call_id", "")),
            name=str(part.get("name", "")),
            is_error=bool(part.get("is_error")),
            output=str(part.get("output", "")),
            meta=_opt_dict(data.get("meta")) or {},
            duration_s=float(duration) if isinstance(duration, int | float) else None,
        )
    if kind == ev.TURN_END:
        cost = data.get("cost_usd")
        return E.TurnEnd(
            seq=seq,
            ts=ts,
            turn_id=_opt_str(data.get("turn_id")),
            reason=_opt_str(data.get("reason")),
            usage=_opt_dict(data.get("usage")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
            steps=_opt_int(data.get("steps")),
            error=_opt_dict(data.get("error")),
            cause=_opt_str(data.get("cause")),
        )
    if kind == ev.COMPACTION:
        cost = data.get("cost_usd")
        return E.Compaction(
            seq=seq,
            ts=ts,
            summary=str(data.get("summary", "")),
            trigger=_opt_str(data.get("trigger")),
            model=_opt_str(data.get("model")),
            through_seq=_opt_int(data.get("through_seq")),
            source_seq=_opt_int(data.get("source_seq")),
            usage=_opt_dict(data.get("usage")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
        )
    if kind == ev.COMPACTION_START:
        return E.CompactionStart(
            seq=seq,
            ts=ts,
            turn_id=_opt_str(data.get("turn_id")),
            trigger=_opt_str(data.get("trigger")),
            model=_opt_str(data.get("model")),
        )
    if kind == ev.GOAL:
        goal = _opt_dict(data.get("goal"))
        return E.GoalUpdate(seq=seq, ts=ts, goal=goal or {}) if goal is not None else None
    if kind == ev.CONTEXT_RESET:
        return E.ContextReset(
            seq=seq,
            ts=ts,
            reason=_opt_str(data.get("reason")),
            hard=True if data.get("hard") is True else None,
        )
    return None


def replay_events(frames: Iterable[Frame]) -> Iterator[E.Committed]:
    """The committed events of `frames`, in log order."""
    for frame in frames:
        event = frame_event(frame)
        if event is not None:
            yield event
