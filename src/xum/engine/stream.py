"""One model step: stream a reply, forward deltas as events, keep the partial message on disk.

The partial (what has streamed so far) is rewritten at most every `PARTIAL_INTERVAL_S`, without
fsync: it only serves clients that reconnect mid-stream. The committed message comes from the
client's `Finish`, which carries the exact replay state the provider needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xum.engine import events as E
from xum.engine.events import EventSink
from xum.llm.client import LLMClient
from xum.llm.limits import setting_name
from xum.llm.types import (
    Finish,
    LLMRequest,
    ReasoningDelta,
    Retrying,
    Stalled,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    UsageUpdate,
)

PARTIAL_INTERVAL_S = 0.2


@dataclass(eq=False)
class StreamState:
    """What has arrived for the current step (reset when a retry discards it)."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)  # index -> id, name, args
    last_usage: UsageUpdate | None = None

    def snapshot(self) -> dict[str, Any]:
        return {
            "text": "".join(self.text),
            "reasoning": "".join(self.reasoning),
            "tool_calls": [dict(c) for _, c in sorted(self.calls.items())],
        }

    def clear(self) -> None:
        self.text.clear()
        self.reasoning.clear()
        self.calls.clear()


async def stream_step(
    client: LLMClient,
    request: LLMRequest,
    state: StreamState,
    emit: EventSink,
    write_partial: Callable[[dict[str, Any]], None],
    on_usage: Callable[[UsageUpdate], None] | None = None,
    noted: set[str] | None = None,
) -> Finish:
    """Stream one reply into `state` and return its `Finish`. Raises LLMError on failure;
    cancellation propagates (the caller records what `state` holds). `noted`: the notes about
    withheld `modelParameters` already given in this session (each is given once)."""
    if noted is not None:
        note_withheld(client, request, emit, noted)
    last_write = time.monotonic()
    finish: Finish | None = None
    events = client.stream(request)
    try:
        async for event in events:
            if isinstance(event, Finish):
                finish = event
                continue
            changed = _apply(event, state, emit, on_usage)
            if changed and time.monotonic() - last_write >= PARTIAL_INTERVAL_S:
                write_partial(state.snapshot())
                last_write = time.monotonic()
    finally:
        await events.aclose()  # closes the HTTP response at once on any early exit
    if finish is None:  # a client bug: every stream must end in Finish
        from xum.llm.errors import LLMError

        raise LLMError("invalid_response", "the reply ended without a finish event")
    return finish


def note_withheld(client: LLMClient, request: LLMRequest, emit: EventSink, noted: set[str]) -> None:
    """Tell the user, once per model and set, which of their `modelParameters` the request
    leaves out (the wire, provider or model does not take them; xum.llm.params)."""
    withheld = client.withheld_params(request)
    if not withheld:
        return
    text = ", ".join(w.describe() for w in withheld)
    key = f"{request.model}\0{text}"
    if key in noted:
        return
    noted.add(key)
    emit(
        E.Advisory(
            kind="model-parameters",
            message=f"modelParameters not sent to {request.model}: {text}",
        )
    )


def _apply(
    event: StreamEvent,
    state: StreamState,
    emit: EventSink,
    on_usage: Callable[[UsageUpdate], None] | None,
) -> bool:
    """Fold one event into `state` and forward it; True when the partial message changed."""
    if isinstance(event, TextDelta):
        state.text.append(event.text)
        emit(E.TextDelta(text=event.text))
        return True
    if isinstance(event, ReasoningDelta):
        state.reasoning.append(event.text)
        emit(E.ReasoningDelta(text=event.text))
        return True
    if isinstance(event, ToolCallStart):
        state.calls[event.index] = {"id": event.id, "name": event.name, "arguments": ""}
        emit(E.ToolCallStart(index=event.index, call_id=event.id, name=event.name))
        return True
    if isinstance(event, ToolCallDelta):
        call = state.calls.get(event.index)
        if call is None:
            return False
        call["arguments"] += event.arguments
        emit(E.ToolCallDelta(index=event.index, call_id=call["id"], arguments=event.arguments))
        return True
    if isinstance(event, UsageUpdate):
        state.last_usage = event
        if on_usage is not None:
            on_usage(event)
        return False
    if isinstance(event, Retrying):
        emit(
            E.Retrying(attempt=event.attempt, delay_s=round(event.delay_s, 3), reason=event.reason)
        )
        if event.discard_partial:
            state.clear()
            emit(E.DiscardPartial())
            return True
    if isinstance(event, Stalled):
        emit(stalled_event(event))
    return False  # ToolCallEnd and anything newer carry nothing to forward


def stalled_event(event: Stalled) -> E.ReplyStalled:
    """The notice for a reply that is stalling, in words a user can act on."""
    where = "mid-reply" if event.began else "after the response headers, before the reply began"
    return E.ReplyStalled(
        silent_s=round(event.silent_s, 1),
        idle_s=event.idle_s,
        began=event.began,
        message=(
            f"the model has sent nothing for {event.silent_s:.0f} s ({where}); the attempt "
            f"ends and is retried after {event.idle_s:g} s of silence "
            f"({setting_name('idle_s')})"
        ),
    )
