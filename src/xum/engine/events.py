"""The engine's event vocabulary: one stream for every front-end.

Events are plain dicts with a kebab-case `type` (`xum run --json` writes them as NDJSON lines;
the server sends the same dicts over WebSocket). Events that correspond to a durable frame in the
session log carry that frame's `seq`; streaming deltas carry none. docs/events.md documents every
type and field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Event = dict[str, Any]
EventSink = Callable[[Event], None]

# Durable events (mirrored by a session-log frame).
TURN_START = "turn-start"
USER_MESSAGE = "user-message"
ASSISTANT_MESSAGE = "assistant-message"
TOOL_RESULT = "tool-result"
TURN_END = "turn-end"
# Streaming and informational events (not persisted one by one).
STEP_START = "step-start"
TEXT_DELTA = "text-delta"
REASONING_DELTA = "reasoning-delta"
TOOL_CALL_START = "tool-call-start"
TOOL_CALL_DELTA = "tool-call-delta"
TOOL_CALL = "tool-call"
RETRYING = "retrying"
DISCARD_PARTIAL = "discard-partial"
ADVISORY = "advisory"
# Context (agents, plan mode): `context-frozen` is durable (a context_frozen frame),
# `agent-changed` and `plan-proposed` are informational.
CONTEXT_FROZEN = "context-frozen"
AGENT_CHANGED = "agent-changed"
PLAN_PROPOSED = "plan-proposed"
USAGE = "usage"
ERROR = "error"
FINAL = "final"

EVENT_TYPES = (
    TURN_START,
    USER_MESSAGE,
    ASSISTANT_MESSAGE,
    TOOL_RESULT,
    TURN_END,
    STEP_START,
    TEXT_DELTA,
    REASONING_DELTA,
    TOOL_CALL_START,
    TOOL_CALL_DELTA,
    TOOL_CALL,
    RETRYING,
    DISCARD_PARTIAL,
    ADVISORY,
    CONTEXT_FROZEN,
    AGENT_CHANGED,
    PLAN_PROPOSED,
    USAGE,
    ERROR,
    FINAL,
)


def null_sink(_event: Event) -> None:
    return None
