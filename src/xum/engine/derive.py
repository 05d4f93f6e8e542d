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
from xum.store import frame_types as ev
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


def _parts(message: Any, kind: str) -> list[dict[str, Any]]:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return []
    return [p for p in message["content"] if isinstance(p, dict) and p.get("type") == kind]


def _searches(message: Any) -> list[dict[str, Any]] | None:
    """The provider-side searches of a reply: what was searched and the titles and links found
    (never a page's content)."""
    out: list[dict[str, Any]] = []
    for part in _parts(message, "web_search"):
        hits = part.get("results")
        search: dict[str, Any] = {
            "query": str(part.get("query", "")),
            "results": [
                {"title": str(h.get("title", "")), "url": str(h.get("url", ""))}
                for h in (hits if isinstance(hits, list) else [])
                if isinstance(h, dict)
            ],
        }
        if isinstance(part.get("error"), str):
            search["error"] = part["error"]
        out.append(search)
    return out or None


def _citations(message: Any) -> list[dict[str, Any]] | None:
    """The pages a reply's text cites (Anthropic's `citations`, Responses' url annotations),
    each once, in order."""
    seen: dict[str, str] = {}
    for part in _parts(message, "text"):
        state = part.get("state")
        cited = state.get("citations") if isinstance(state, dict) else None
        for c in cited if isinstance(cited, list) else []:
            if isinstance(c, dict) and isinstance(c.get("url"), str) and c["url"] not in seen:
                seen[c["url"]] = str(c.get("title") or "")
    return [{"title": t, "url": u} for u, t in seen.items()] or None


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
    kind = frame.type
    if kind == ev.TURN_START:
        turn = ev.payload(frame, ev.TURN_START)
        return E.TurnStart(
            seq=seq,
            ts=ts,
            turn_id=str(turn.get("turn_id", "")),
            model=_opt_str(turn.get("model")),
            kind=_opt_str(turn.get("kind")),
        )
    if kind == ev.USER_MESSAGE:
        user = ev.payload(frame, ev.USER_MESSAGE)
        return E.UserMessage(
            seq=seq,
            ts=ts,
            text=_text(user.get("message")),
            queued=True if user.get("queued") else None,
            typed=_opt_str(user.get("typed")),
            slash=_opt_dict(user.get("slash")) if "typed" in user else None,
            images=_images(user.get("message")),
        )
    if kind == ev.SYNTHETIC_MESSAGE:
        note = ev.payload(frame, ev.SYNTHETIC_MESSAGE)
        changed = note.get("changed")
        return E.UserMessage(
            seq=seq,
            ts=ts,
            text=_text(note.get("message")),
            synthetic=True,
            kind=_opt_str(note.get("kind")),
            changed=[str(c) for c in changed] if isinstance(changed, list) else None,
        )
    if kind == ev.CONTEXT_FROZEN:
        frozen = ev.payload(frame, ev.CONTEXT_FROZEN)
        tools = frozen.get("tools")
        return E.ContextFrozen(
            seq=seq,
            ts=ts,
            reason=_opt_str(frozen.get("reason")),
            agent=_opt_str(frozen.get("agent")),
            mode=_opt_str(frozen.get("mode")),
            tools=[
                str(t.get("name"))
                for t in (tools if isinstance(tools, list) else [])
                if isinstance(t, dict)
            ],
        )
    if kind == ev.ASSISTANT_MESSAGE:
        reply = ev.payload(frame, ev.ASSISTANT_MESSAGE)
        message = reply.get("message")
        cost = reply.get("cost_usd")
        return E.AssistantMessage(
            seq=seq,
            ts=ts,
            text=_text(message),
            reasoning=_text(message, "reasoning"),
            tool_calls=_calls(message),
            finish_reason=_opt_str(reply.get("finish_reason")),
            usage=_opt_dict(reply.get("usage")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
            model=_opt_str(reply.get("model")),
            step=_opt_int(reply.get("step")),
            web_searches=_searches(message),
            citations=_citations(message),
        )
    if kind == ev.TOOL_RESULT:
        result = ev.payload(frame, ev.TOOL_RESULT)
        message = result.get("message")
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
        duration = result.get("duration_s")
        return E.ToolResult(
            seq=seq,
            ts=ts,
            call_id=str(part.get("call_id", "")),
            name=str(part.get("name", "")),
            is_error=bool(part.get("is_error")),
            output=str(part.get("output", "")),
            meta=_opt_dict(result.get("meta")) or {},
            duration_s=float(duration) if isinstance(duration, int | float) else None,
        )
    if kind == ev.TURN_END:
        end = ev.payload(frame, ev.TURN_END)
        cost = end.get("cost_usd")
        return E.TurnEnd(
            seq=seq,
            ts=ts,
            turn_id=_opt_str(end.get("turn_id")),
            reason=_opt_str(end.get("reason")),
            usage=_opt_dict(end.get("usage")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
            steps=_opt_int(end.get("steps")),
            error=_opt_dict(end.get("error")),
            cause=_opt_str(end.get("cause")),
        )
    if kind == ev.COMPACTION:
        summary = ev.payload(frame, ev.COMPACTION)
        cost = summary.get("cost_usd")
        return E.Compaction(
            seq=seq,
            ts=ts,
            summary=str(summary.get("summary", "")),
            trigger=_opt_str(summary.get("trigger")),
            model=_opt_str(summary.get("model")),
            through_seq=_opt_int(summary.get("through_seq")),
            source_seq=_opt_int(summary.get("source_seq")),
            usage=_opt_dict(summary.get("usage")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
        )
    if kind == ev.COMPACTION_START:
        start = ev.payload(frame, ev.COMPACTION_START)
        return E.CompactionStart(
            seq=seq,
            ts=ts,
            turn_id=_opt_str(start.get("turn_id")),
            trigger=_opt_str(start.get("trigger")),
            model=_opt_str(start.get("model")),
        )
    if kind == ev.GOAL:
        goal_data = ev.payload(frame, ev.GOAL)
        goal = _opt_dict(goal_data.get("goal"))
        return E.GoalUpdate(seq=seq, ts=ts, goal=goal or {}) if goal is not None else None
    if kind == ev.MODEL_FALLBACK:
        return _fallback_event(frame)
    if kind == ev.CONTEXT_RESET:
        reset = ev.payload(frame, ev.CONTEXT_RESET)
        return E.ContextReset(
            seq=seq,
            ts=ts,
            reason=_opt_str(reset.get("reason")),
            hard=True if reset.get("hard") is True else None,
        )
    return None


def _fallback_event(frame: Frame) -> E.ModelFallback:
    switch = ev.payload(frame, ev.MODEL_FALLBACK)
    source = str(switch.get("from_model", ""))
    target = str(switch.get("to_model", ""))
    category = _opt_str(switch.get("category"))
    why = f" ({category})" if category else ""
    cost = switch.get("cost_usd")
    return E.ModelFallback(
        seq=frame.seq,
        ts=frame.ts,
        turn_id=_opt_str(switch.get("turn_id")),
        step=_opt_int(switch.get("step")),
        from_model=source,
        to_model=target,
        message=f"{source} refused{why}; continued with {target}",
        text=_text(switch.get("message")),
        category=category,
        usage=_opt_dict(switch.get("usage")),
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
    )


def replay_events(frames: Iterable[Frame]) -> Iterator[E.Committed]:
    """The committed events of `frames`, in log order."""
    for frame in frames:
        event = frame_event(frame)
        if event is not None:
            yield event


def _images(message: object) -> list[dict[str, Any]] | None:
    """The image parts of a logged message (None when it has none), as plain references."""
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return None
    found = [
        {k: v for k, v in part.items() if k != "type"}
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") == "image"
    ]
    return found or None
